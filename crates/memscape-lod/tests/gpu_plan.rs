//! The GPU resolve's plan (`gpu_plan.rs`) names the cells the CPU resolve visits
//! (`resolve::accumulate_cells`), each once, with its column's and row's pixel origins, and its
//! chunks hold those cells' bytes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use memscape_lod::format::CellRec;
use memscape_lod::gpu_plan::{CHUNK_CELLS, cells_plan, chunk_bytes};
use memscape_lod::synth::{SynthParams, trace};
use memscape_lod::trace_source::TraceFile;
use memscape_lod::{LodIndex, LodView};

const CELL_BYTES: usize = std::mem::size_of::<CellRec>();

#[test]
fn the_plan_names_the_cells_the_cpu_resolve_visits() {
    let file = TraceFile::from_trace(trace(SynthParams::new(400_000, 5)));
    let dir = tempfile::tempdir().unwrap();
    let index = LodIndex::open(&common::build_index(&file, dir.path())).unwrap();
    let (te, ye) = (index.meta.extent_t, index.meta.axis.extent);
    let mut planned = 0;
    for (t0, t1, a0, a1, w, h) in [
        (0, te, 0, ye, 160, 90),
        (0, te, 0, ye, 64, 36),
        (te / 3, te / 3 + te / 4, ye / 5, ye / 5 + ye / 3, 48, 27),
    ] {
        let v = LodView::fit(t0, t1, a0, a1, w, h);
        let Some(li) = index.level_for(v.pixel_size()) else {
            continue;
        };
        let plan = cells_plan(&index, li, &v).expect("a plan");
        // The cells the CPU resolve visits, by their place in the level's array.
        let level = &index.levels[li];
        let [tau, sig] = level.cell_size();
        let (wt, wa) = v.window();
        let kx = [
            ((wt[0] - tau) / tau).floor().max(0.0) as u64,
            ((wt[1] + tau) / tau).floor().max(0.0) as u64,
        ];
        let ky = [
            ((wa[0] - sig) / sig).floor().max(0.0) as u64,
            ((wa[1] + sig) / sig).floor().max(0.0) as u64,
        ];
        let base = level.cells[..].as_ptr();
        let mut visited = Vec::new();
        level.cells_in(kx, ky, |_, c| {
            visited.push((c as *const CellRec as usize - base as usize) / CELL_BYTES);
        });
        assert_eq!(plan.cells as usize, visited.len());
        assert_eq!(plan.ky0, ky[0]);
        assert_eq!(plan.rows.len() as u64, ky[1] - ky[0] + 1);
        // Dispatch position → cell, as the shader finds it (its column by binary search).
        for (vi, &want) in visited.iter().enumerate() {
            let vi = vi as u32;
            let col = plan.columns.partition_point(|c| c[0] <= vi) - 1;
            let c = plan.columns[col];
            let got = plan.first_cell as usize + (c[1] + (vi - c[0])) as usize;
            assert_eq!(got, want, "dispatch position {vi}");
            // Its chunk holds it, at the place the shader reads.
            let j = got as u64 / CHUNK_CELLS;
            let u = plan.chunks.iter().find(|u| u.chunk == j).expect("chunk");
            assert!(u.dispatch.contains(&vi));
            let (cells, buckets, b0) = chunk_bytes(&index, li, j).unwrap();
            let local = got - (j * CHUNK_CELLS) as usize;
            let rec: &CellRec =
                bytemuck::from_bytes(&cells[local * CELL_BYTES..(local + 1) * CELL_BYTES]);
            assert_eq!(rec, &level.cells[got]);
            let first = (rec.bucket_first - b0) as usize * 16;
            assert!(first + usize::from(rec.buckets) * 16 <= buckets.len());
        }
        // A column's pixel origin and offset give its left edge as the CPU computes it.
        for c in &plan.columns {
            let x = f64::from(c[2] as i32) + f64::from(f32::from_bits(c[3]));
            assert!((0.0..1.0).contains(&f64::from(f32::from_bits(c[3]))));
            assert!(x > -(tau / v.pixel_size()[0]) - 2.0 && x < f64::from(w) + 2.0);
        }
        planned += 1;
    }
    assert!(planned >= 2, "too few views drawn from a level");
}
