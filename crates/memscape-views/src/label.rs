//! Text placed by a view's geometry code, painted by egui in the GUI and by the headless overlay
//! (`crate::headless`) in `memscape render`, so both show the same labels.

use egui::{Align2, Color32, FontId, Painter, Pos2};

#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    /// Position in points relative to the picture's top left corner.
    pub pos: Pos2,
    pub text: String,
    pub size: f32,
    pub color: Color32,
    pub align: Align2,
    /// Clockwise rotation in radians about the anchor point.
    pub angle: f32,
}

impl Label {
    pub fn new(
        pos: Pos2,
        text: impl Into<String>,
        size: f32,
        color: Color32,
        align: Align2,
    ) -> Self {
        Self {
            pos,
            text: text.into(),
            size,
            color,
            align,
            angle: 0.0,
        }
    }

    pub fn rotated(mut self, angle: f32) -> Self {
        self.angle = angle;
        self
    }

    /// Roughly where the (unrotated) text lies: [`approx_width`] wide, one line high, placed by
    /// its alignment. For layout checks; rotated labels give their unrotated box.
    pub fn approx_rect(&self) -> egui::Rect {
        let size = egui::vec2(approx_width(&self.text, self.size), self.size * 1.2);
        self.align.anchor_size(self.pos, size)
    }
}

/// Paints `labels` with their positions offset by `origin`.
pub fn paint(painter: &Painter, origin: Pos2, labels: &[Label]) {
    for l in labels {
        let pos = origin + l.pos.to_vec2();
        if l.angle == 0.0 {
            painter.text(pos, l.align, &l.text, FontId::proportional(l.size), l.color);
            continue;
        }
        let galley = painter.layout_no_wrap(l.text.clone(), FontId::proportional(l.size), l.color);
        let anchor = l.align.pos_in_rect(&galley.rect).to_vec2();
        painter.add(
            egui::epaint::TextShape::new(pos - anchor, galley, l.color)
                .with_angle_and_anchor(l.angle, l.align),
        );
    }
}

/// Rough width of `text` at `size` points in egui's proportional font, for deciding whether a
/// label fits before laying it out (layout needs a `Context`, which geometry code has not).
pub fn approx_width(text: &str, size: f32) -> f32 {
    text.chars().count() as f32 * size * 0.55
}

/// `text` cut (with an ellipsis) to fit `width` points at `size`, or None if not even 3
/// characters fit.
pub fn fit(text: &str, size: f32, width: f32) -> Option<String> {
    if approx_width(text, size) <= width {
        return Some(text.to_owned());
    }
    let keep = (width / (size * 0.55)).floor() as usize;
    if keep < 4 {
        return None;
    }
    let mut s: String = text.chars().take(keep - 1).collect();
    s.push('…');
    Some(s)
}
