//! Golden-image comparison for tests: render headless, compare with a reference PNG under an
//! explicit tolerance, write `*.actual.png` and `*.diff.png` beside the reference on failure.
//! `MEMSCAPE_UPDATE_GOLDEN=1` rewrites the references (do it on lavapipe, the device CI has).

use std::path::{Path, PathBuf};

use crate::RgbaImage;

/// How different two images may be.
#[derive(Debug, Clone, Copy)]
pub struct Tolerance {
    /// A pixel differs when any channel differs by more than this (0–255).
    pub per_channel: u8,
    /// How many differing pixels are accepted.
    pub max_differing_pixels: usize,
}

impl Tolerance {
    /// For images made by the same pipelines on the same kind of device: rounding only.
    pub const SAME_DEVICE: Tolerance = Tolerance {
        per_channel: 2,
        max_differing_pixels: 0,
    };
}

/// The result of comparing two images.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub differing_pixels: usize,
    pub max_channel_difference: u8,
    /// Red where pixels differ beyond the threshold, grey elsewhere.
    pub diff: RgbaImage,
}

/// Compares two images of the same size.
pub fn compare(actual: &RgbaImage, expected: &RgbaImage, tolerance: Tolerance) -> Comparison {
    let mut diff = RgbaImage::new(actual.width, actual.height, [0, 0, 0, 255]);
    let mut differing_pixels = 0;
    let mut max_channel_difference = 0;
    for y in 0..actual.height.min(expected.height) {
        for x in 0..actual.width.min(expected.width) {
            let a = actual.pixel(x, y);
            let e = expected.pixel(x, y);
            let d = (0..4).map(|k| a[k].abs_diff(e[k])).max().unwrap_or(0);
            max_channel_difference = max_channel_difference.max(d);
            if d > tolerance.per_channel {
                differing_pixels += 1;
                diff.set_pixel(x, y, [255, 0, 0, 255]);
            } else {
                let g = (u16::from(a[0]) + u16::from(a[1]) + u16::from(a[2])) / 9;
                diff.set_pixel(x, y, [g as u8, g as u8, g as u8, 255]);
            }
        }
    }
    Comparison {
        differing_pixels,
        max_channel_difference,
        diff,
    }
}

fn sibling(reference: &Path, suffix: &str) -> PathBuf {
    let stem = reference
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    reference.with_file_name(format!("{stem}.{suffix}.png"))
}

/// Checks `actual` against the reference PNG at `reference`. Returns a message describing the
/// failure (and writes the actual and diff images) or `Ok(())`.
pub fn check(actual: &RgbaImage, reference: &Path, tolerance: Tolerance) -> Result<(), String> {
    let update = std::env::var_os("MEMSCAPE_UPDATE_GOLDEN").is_some_and(|v| v != "0");
    check_or_update(actual, reference, tolerance, update)
}

/// [`check`], or with `update` rewrite the reference instead.
pub fn check_or_update(
    actual: &RgbaImage,
    reference: &Path,
    tolerance: Tolerance,
    update: bool,
) -> Result<(), String> {
    if update {
        if let Some(dir) = reference.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        actual.save_png(reference).map_err(|e| e.to_string())?;
        return Ok(());
    }
    let expected = RgbaImage::load_png(reference).map_err(|e| {
        format!("{e}\n(no reference yet? run with MEMSCAPE_UPDATE_GOLDEN=1 on lavapipe)")
    })?;
    let fail = |why: String, diff: Option<&RgbaImage>| {
        let actual_path = sibling(reference, "actual");
        let _ = actual.save_png(&actual_path);
        let mut msg = format!(
            "{}: {why}; actual image: {}",
            reference.display(),
            actual_path.display()
        );
        if let Some(d) = diff {
            let diff_path = sibling(reference, "diff");
            let _ = d.save_png(&diff_path);
            msg.push_str(&format!(", difference: {}", diff_path.display()));
        }
        Err(msg)
    };
    if (actual.width, actual.height) != (expected.width, expected.height) {
        return fail(
            format!(
                "size {}x{} differs from the reference's {}x{}",
                actual.width, actual.height, expected.width, expected.height
            ),
            None,
        );
    }
    let c = compare(actual, &expected, tolerance);
    if c.differing_pixels > tolerance.max_differing_pixels {
        return fail(
            format!(
                "{} pixels differ by more than {} (allowed: {}; largest difference {})",
                c.differing_pixels,
                tolerance.per_channel,
                tolerance.max_differing_pixels,
                c.max_channel_difference
            ),
            Some(&c.diff),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparison_counts_pixels_beyond_the_threshold() {
        let a = RgbaImage::new(4, 4, [10, 10, 10, 255]);
        let mut b = a.clone();
        b.set_pixel(1, 1, [12, 10, 10, 255]); // within 2
        b.set_pixel(2, 2, [40, 10, 10, 255]); // beyond
        let c = compare(&a, &b, Tolerance::SAME_DEVICE);
        assert_eq!(c.differing_pixels, 1);
        assert_eq!(c.max_channel_difference, 30);
        assert_eq!(c.diff.pixel(2, 2), [255, 0, 0, 255]);
    }

    #[test]
    fn failing_check_writes_actual_and_diff() {
        let dir = std::env::temp_dir().join(format!("memscape-golden-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let reference = dir.join("ref.png");
        RgbaImage::new(3, 3, [0, 0, 0, 255])
            .save_png(&reference)
            .unwrap();
        let actual = RgbaImage::new(3, 3, [255, 255, 255, 255]);
        let err = check_or_update(&actual, &reference, Tolerance::SAME_DEVICE, false).unwrap_err();
        assert!(err.contains("9 pixels differ"), "{err}");
        assert!(dir.join("ref.actual.png").exists());
        assert!(dir.join("ref.diff.png").exists());
        std::fs::remove_dir_all(&dir).ok();
    }
}
