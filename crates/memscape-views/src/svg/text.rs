//! Labels as SVG `<text>`, placed as egui places them in the GUI and in `memscape render`'s
//! images: each label is laid out with egui's own fonts (the same galley the painter makes), its
//! box anchored at the label's point by its alignment, each row on its baseline; rotated labels
//! turn about that point. The text keeps egui's measured width (`textLength`), so that a label
//! fitted to its box by the view still fits when a viewer substitutes another font for egui's
//! Ubuntu Light.

use std::fmt::Write as _;

use egui::{Align, FontId};

use super::{escape, num};
use crate::label::Label;

/// The font family the SVG asks for: egui's proportional font first (Ubuntu Light), then what
/// a viewer is likely to have.
pub const FONT_FAMILY: &str = "Ubuntu, Arial, Helvetica, sans-serif";

/// Lays text out with egui's default fonts, without a window or a GPU.
pub struct TextLayout {
    ctx: egui::Context,
}

impl Default for TextLayout {
    fn default() -> Self {
        Self::new()
    }
}

impl TextLayout {
    pub fn new() -> Self {
        let ctx = egui::Context::default();
        crate::fonts::install(&ctx);
        // Fonts are loaded on the first frame; its font atlas is not needed (nothing is drawn).
        let mut first = ctx.run_ui(egui::RawInput::default(), |_| {});
        first.textures_delta.clear();
        Self { ctx }
    }

    fn galley(&self, label: &Label) -> std::sync::Arc<egui::Galley> {
        self.ctx.fonts_mut(|f| {
            f.layout_no_wrap(
                label.text.clone(),
                FontId::proportional(label.size),
                label.color,
            )
        })
    }

    /// Where `label` is drawn, in picture points: its galley's box anchored at its point,
    /// turned by its angle (the axis-aligned box around the turned one).
    pub fn label_bounds(&self, label: &Label) -> egui::Rect {
        let galley = self.galley(label);
        let rect = label.align.anchor_size(label.pos, galley.size());
        if label.angle == 0.0 {
            return rect;
        }
        let rot = egui::emath::Rot2::from_angle(label.angle);
        let corners = [
            rect.left_top(),
            rect.right_top(),
            rect.left_bottom(),
            rect.right_bottom(),
        ];
        egui::Rect::from_points(&corners.map(|c| label.pos + rot * (c - label.pos)))
    }

    /// `labels` as `<text>` elements appended to `out`.
    pub fn write_labels(&self, out: &mut String, labels: &[Label]) {
        for label in labels {
            if label.text.trim().is_empty() {
                continue;
            }
            self.write_label(out, label);
        }
    }

    fn write_label(&self, out: &mut String, label: &Label) {
        let galley = self.galley(label);
        let rect = label.align.anchor_size(label.pos, galley.size());
        let (anchor, x) = match label.align.x() {
            Align::Min => ("start", rect.min.x),
            Align::Center => ("middle", rect.center().x),
            Align::Max => ("end", rect.max.x),
        };
        let c = label.color.to_srgba_unmultiplied();
        let mut attributes = format!(
            r#" font-size="{}"{} text-anchor="{anchor}""#,
            num(label.size),
            super::shapes::paint("fill", c)
        );
        if label.angle != 0.0 {
            let _ = write!(
                attributes,
                r#" transform="rotate({} {} {})""#,
                num(label.angle.to_degrees()),
                num(label.pos.x),
                num(label.pos.y)
            );
        }
        // Runs of spaces are kept (source lines, aligned columns).
        let _ = write!(out, r#"<text xml:space="preserve"{attributes}>"#);
        let mut lines = label.text.split('\n');
        for placed in &galley.rows {
            let line = lines.next().unwrap_or_default();
            let Some(glyph) = placed.row.glyphs.first() else {
                continue;
            };
            let baseline = rect.min.y + placed.pos.y + glyph.pos.y;
            let width = placed.row.size.x;
            let _ = write!(
                out,
                r#"<tspan x="{}" y="{}" textLength="{}" lengthAdjust="spacingAndGlyphs">{}</tspan>"#,
                num(x),
                num(baseline),
                num(width),
                escape(line)
            );
        }
        let _ = writeln!(out, "</text>");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_sit_on_egui_baselines_at_their_anchor() {
        let layout = TextLayout::new();
        let mut out = String::new();
        let label = Label::new(
            egui::pos2(100.0, 50.0),
            "a < b & c",
            12.0,
            egui::Color32::from_rgb(10, 20, 30),
            egui::Align2::CENTER_TOP,
        );
        layout.write_labels(&mut out, &[label.clone(), label.clone().rotated(0.5)]);
        assert_eq!(out.matches("<text").count(), 2, "{out}");
        assert!(out.contains("a &lt; b &amp; c"), "{out}");
        assert!(out.contains(r#"text-anchor="middle""#), "{out}");
        assert!(out.contains(r##"fill="#0a141e""##), "{out}");
        assert!(out.contains(r#"transform="rotate(28.65 100 50)""#), "{out}");
        // Top-aligned 12-point text: the baseline is about a cap height below the top.
        let y: f32 = out
            .split(r#" y=""#)
            .nth(1)
            .and_then(|s| s.split('"').next())
            .and_then(|s| s.parse().ok())
            .unwrap();
        assert!((58.0..64.0).contains(&y), "baseline {y}");
    }
}
