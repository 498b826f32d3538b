//! A view's drawing as data: GPU shapes plus labels, in points from the picture's top left.
//! The GUI draws it through `shapes_paint` and egui; `memscape render` through
//! `crate::headless`.

use memscape_render::shapes::Shape;

use crate::views::labels::Label;

#[derive(Default)]
pub struct Picture {
    pub shapes: Vec<Shape>,
    pub labels: Vec<Label>,
}

impl Picture {
    pub fn extend(&mut self, other: Picture) {
        self.shapes.extend(other.shapes);
        self.labels.extend(other.labels);
    }
}

/// Dark or light text, whichever reads on `fill` (sRGB bytes).
pub fn text_on(fill: [u8; 4]) -> egui::Color32 {
    let luma = 0.299 * f32::from(fill[0]) + 0.587 * f32::from(fill[1]) + 0.114 * f32::from(fill[2]);
    if luma > 150.0 {
        egui::Color32::from_rgb(20, 22, 28)
    } else {
        egui::Color32::from_rgb(235, 236, 240)
    }
}

/// Smooth ease in and out of `t` in [0, 1] (transitions, morphs, tours).
pub fn ease(t: f32) -> f32 {
    let t = t.clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// 4 320 676 562 → "4.32 G" (counts in labels).
pub fn si(v: u64) -> String {
    let f = v as f64;
    if f >= 1e9 {
        format!("{:.2} G", f / 1e9)
    } else if f >= 1e6 {
        format!("{:.2} M", f / 1e6)
    } else if f >= 1e3 {
        format!("{:.1} k", f / 1e3)
    } else {
        v.to_string()
    }
}
