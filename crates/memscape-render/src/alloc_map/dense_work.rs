//! What a dense draw of some blocks asks of the GPU, counted on the CPU from their pixel
//! geometry with the block pass's own rules (`alloc_map_dense.wgsl`'s `add_block`): how many
//! blocks lie outside the view, how many add their rows to the difference arrays (and how many
//! rows that is), how many go to the raster list (tall, or of several rows and narrow) and how
//! many fragments the rasterizer then shades for them. `memscape bench` prints it beside the
//! passes' GPU times, so that a pass's time can be read against the work it was given.

use memscape_eq1::{clamp_geometry, touched_pixels};

use super::dense::{DENSE_MAX_ROWS, DENSE_MIN_COLUMNS};

/// The block pass's split of a draw's blocks (see the module's documentation).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DenseWork {
    pub blocks: u64,
    /// Dropped by the block pass: no pixel of the view.
    pub outside: u64,
    /// Added to the difference arrays row by row.
    pub dense: u64,
    /// Σ pixel rows of the dense blocks (each row one walk of the block pass).
    pub dense_rows: u64,
    /// Listed for the rasterizer: more than [`DENSE_MAX_ROWS`] rows.
    pub listed_tall: u64,
    /// Listed for the rasterizer: several rows, narrower than [`DENSE_MIN_COLUMNS`] columns.
    pub listed_narrow: u64,
    /// Fragments the listed blocks' inflated quads cover in the view.
    pub listed_fragments: u64,
}

impl DenseWork {
    /// The work of blocks whose geometries in pixels are `geometries` — (x0, y_bottom, width,
    /// height), y down, as `MapView::block_geometry_px` gives them — in a view of `size`.
    pub fn of(geometries: impl IntoIterator<Item = [f32; 4]>, size: [u32; 2]) -> Self {
        let viewport = [size[0] as f32, size[1] as f32];
        let mut work = Self::default();
        for g in geometries {
            work.blocks += 1;
            let c = clamp_geometry(g, viewport, 2.0);
            let [q0, q1] = touched_pixels(c);
            let lo = [q0[0].max(0.0), q0[1].max(0.0)];
            let hi = [q1[0].min(viewport[0]) - 1.0, q1[1].min(viewport[1]) - 1.0];
            if hi[0] < lo[0] || hi[1] < lo[1] {
                work.outside += 1;
                continue;
            }
            let rows = hi[1] - lo[1] + 1.0;
            let columns = hi[0] - lo[0] + 1.0;
            let tall = rows > DENSE_MAX_ROWS as f32;
            let narrow = rows > 1.0 && columns < DENSE_MIN_COLUMNS as f32;
            if tall || narrow {
                if tall {
                    work.listed_tall += 1;
                } else {
                    work.listed_narrow += 1;
                }
                work.listed_fragments += (rows * columns) as u64;
            } else {
                work.dense += 1;
                work.dense_rows += rows as u64;
            }
        }
        work
    }
}

impl std::fmt::Display for DenseWork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} blocks: {} outside the view, {} dense ({} rows), {} listed ({} tall, {} narrow: {} fragments)",
            self.blocks,
            self.outside,
            self.dense,
            self.dense_rows,
            self.listed_tall + self.listed_narrow,
            self.listed_tall,
            self.listed_narrow,
            self.listed_fragments
        )
    }
}

#[cfg(test)]
mod tests {
    use super::DenseWork;

    #[test]
    fn blocks_split_as_the_block_pass_splits_them() {
        let work = DenseWork::of(
            [
                // One row, long: dense.
                [10.0, 20.5, 300.0, 0.25],
                // Three rows, wide: dense (four rows visited: EDGE_SLACK reaches past an edge
                // that lies on a pixel boundary, as the rasterizer's quad does).
                [10.0, 40.0, 100.0, 2.5],
                // 40 rows: listed, tall (the quad: 21 columns × 42 rows with its partial edges).
                [10.5, 100.0, 20.0, 40.0],
                // Two rows, 3 columns: listed, narrow (a quad of 5 × 3).
                [50.0, 60.0, 3.0, 1.5],
                // Left of the view.
                [-50.0, 60.0, 10.0, 1.0],
            ],
            [640, 480],
        );
        assert_eq!(work.blocks, 5);
        assert_eq!(work.outside, 1);
        assert_eq!(work.dense, 2);
        assert_eq!(work.dense_rows, 1 + 4);
        assert_eq!((work.listed_tall, work.listed_narrow), (1, 1));
        assert_eq!(work.listed_fragments, 21 * 42 + 5 * 3);
    }
}
