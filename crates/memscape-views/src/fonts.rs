//! The fonts of the window and of every headless picture: egui's defaults, with the monospace
//! face (Hack) as the proportional family's last fallback. The proportional face (Ubuntu
//! Light) has no arrows, so call-site labels such as `make_node ← xmalloc` drew a
//! missing-glyph box; Hack has the arrows, box drawing and more, and only glyphs the faces
//! before it lack fall back to it.

use egui::{FontDefinitions, FontFamily};

/// egui's default font definitions with the fallback above.
pub fn definitions() -> FontDefinitions {
    let mut fonts = FontDefinitions::default();
    let mono = fonts
        .families
        .get(&FontFamily::Monospace)
        .cloned()
        .unwrap_or_default();
    if let Some(proportional) = fonts.families.get_mut(&FontFamily::Proportional) {
        for name in mono {
            if !proportional.contains(&name) {
                proportional.push(name);
            }
        }
    }
    fonts
}

/// Gives `ctx` memscape's fonts (before its first frame, or they load on the next one).
pub fn install(ctx: &egui::Context) {
    ctx.set_fonts(definitions());
}

#[cfg(test)]
mod tests {
    use super::*;
    use egui::FontId;

    /// Characters memscape's labels use that egui's proportional face lacks.
    const LABEL_CHARS: &str = "←→↑↓⇐⇒";

    fn has_glyphs(ctx: &egui::Context, text: &str) -> bool {
        // Fonts are loaded on the first frame; its font atlas is not needed.
        let mut first = ctx.run_ui(egui::RawInput::default(), |_| {});
        first.textures_delta.clear();
        ctx.fonts_mut(|f| f.has_glyphs(&FontId::proportional(14.0), text))
    }

    #[test]
    fn the_proportional_family_draws_the_arrows_of_call_site_labels() {
        let ctx = egui::Context::default();
        assert!(
            !has_glyphs(&ctx, LABEL_CHARS),
            "egui's own proportional face now has arrows: this fallback can go"
        );
        let ctx = egui::Context::default();
        install(&ctx);
        assert!(has_glyphs(&ctx, LABEL_CHARS));
        // Glyphs the proportional face has are still its own (the fallback comes last).
        let families = definitions().families;
        assert_eq!(
            families[&FontFamily::Proportional].first(),
            FontDefinitions::default().families[&FontFamily::Proportional].first()
        );
    }
}
