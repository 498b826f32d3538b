//! A view's picture as SVG, for papers and talks: the third painter of a [`Picture`] beside the
//! GUI's ([`crate::gpu`]) and the headless one ([`crate::headless`]), walking the same layers in
//! the same order.
//!
//! * the background as a `<rect>`;
//! * shape layers (the graph: world units seen through a camera) and the picture's own shapes as
//!   vector elements ([`shapes`]: rectangles, circles, sector paths, lines and polylines), placed
//!   through the camera exactly as the shape shader places them;
//! * the GPU-only layers (allocation maps, occupancy bars, polar morphs) drawn headless, each
//!   alone, and embedded as PNG `<image>`s at their rectangles, one image pixel per point (the
//!   picture's requested size);
//! * labels as `<text>` ([`text`]) with egui's font size, colour, anchor and rotation.
//!
//! Each layer, the shapes and the labels are one `<g>` with an id, so that an editor shows them
//! as groups. The document's own viewport clips, as the pane clips its picture.

pub mod shapes;
pub mod text;

use std::fmt::Write as _;

use memscape_render::shapes::ShapesView;
use memscape_render::{GpuContext, OffscreenTarget, RgbaImage};

use crate::error::{Result, ViewError};
use crate::headless::{LayerDrawer, picture_pixels, pixel_rect};
use crate::picture::{Layer, Picture};

/// `picture` as an SVG document; its GPU-only layers are drawn on `ctx`.
pub fn picture_svg(ctx: &GpuContext, picture: &Picture) -> Result<String> {
    picture_svg_with_overlay(ctx, picture, None)
}

/// [`picture_svg`] with `overlay`'s shapes and labels over everything (a tour's caption).
pub fn picture_svg_with_overlay(
    ctx: &GpuContext,
    picture: &Picture,
    overlay: Option<&Picture>,
) -> Result<String> {
    let mut rasters = Rasterizer::new(ctx, picture);
    let layout = text::TextLayout::new();
    let mut svg = write_svg(picture, &layout, &mut |layer| rasters.layer(layer))?;
    if let Some(o) = overlay {
        let mut extra = String::new();
        write_vectors(&mut extra, o, &layout, "overlay-");
        let end = svg.rfind("</svg>").unwrap_or(svg.len());
        svg.insert_str(end, &extra);
    }
    Ok(svg)
}

/// An embedded raster: its pixels and where its top left corner lies, in points.
pub struct Raster {
    pub at: [u32; 2],
    pub image: RgbaImage,
}

/// `picture` as an SVG document, its GPU-only layers given by `raster` (None: the layer drew
/// nothing).
pub fn write_svg(
    picture: &Picture,
    layout: &text::TextLayout,
    raster: &mut dyn FnMut(&Layer) -> Result<Option<Raster>>,
) -> Result<String> {
    let (w, h) = picture_pixels(picture);
    let mut out = String::with_capacity(4096);
    let _ = writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" version="1.1" width="{w}" height="{h}" viewBox="0 0 {w} {h}">"#
    );
    let _ = writeln!(out, "<title>memscape</title>");
    if let Some(provenance) = &picture.provenance {
        let _ = writeln!(out, "<desc>{}</desc>", escape(provenance));
    }
    if let Some(bg) = picture.background {
        let _ = writeln!(
            out,
            r#"<rect id="background" width="{w}" height="{h}"{}/>"#,
            shapes::paint("fill", bg)
        );
    }
    for (k, layer) in picture.layers.iter().enumerate() {
        match layer {
            Layer::Shapes(s) => {
                let _ = writeln!(out, r#"<g id="layer-{k}-shapes">"#);
                shapes::write_shapes(&mut out, &s.shapes, &s.view);
                let _ = writeln!(out, "</g>");
            }
            Layer::Map(_) | Layer::Bar(_) | Layer::Morph(_) => {
                let Some(r) = raster(layer)? else {
                    continue;
                };
                let what = match layer {
                    Layer::Map(_) => "map",
                    Layer::Bar(_) => "bar",
                    _ => "morph",
                };
                let png = r
                    .image
                    .encode_png()
                    .map_err(|e| ViewError::msg(format!("SVG: encoding a {what} layer: {e}")))?;
                let _ = writeln!(
                    out,
                    r#"<image id="layer-{k}-{what}" x="{}" y="{}" width="{}" height="{}" preserveAspectRatio="none" xlink:href="data:image/png;base64,{}"/>"#,
                    r.at[0],
                    r.at[1],
                    r.image.width,
                    r.image.height,
                    base64(&png)
                );
            }
        }
    }
    write_vectors(&mut out, picture, layout, "");
    let _ = writeln!(out, "</svg>");
    Ok(out)
}

/// `picture`'s shapes (in points) and labels as two groups, their ids prefixed by `prefix`.
fn write_vectors(out: &mut String, picture: &Picture, layout: &text::TextLayout, prefix: &str) {
    if !picture.shapes.is_empty() {
        let _ = writeln!(out, r#"<g id="{prefix}shapes">"#);
        shapes::write_shapes(out, &picture.shapes, &ShapesView::IDENTITY);
        let _ = writeln!(out, "</g>");
    }
    if !picture.labels.is_empty() {
        let _ = writeln!(
            out,
            r#"<g id="{prefix}labels" font-family="{}">"#,
            text::FONT_FAMILY
        );
        layout.write_labels(out, &picture.labels);
        let _ = writeln!(out, "</g>");
    }
}

/// Draws GPU layers one at a time into a transparent target of the picture's size and cuts out
/// where each lies.
struct Rasterizer<'a> {
    ctx: &'a GpuContext,
    target: Option<OffscreenTarget>,
    drawer: LayerDrawer,
    size: (u32, u32),
}

impl<'a> Rasterizer<'a> {
    fn new(ctx: &'a GpuContext, picture: &Picture) -> Self {
        Self {
            ctx,
            target: None,
            drawer: LayerDrawer::default(),
            size: picture_pixels(picture),
        }
    }

    fn layer(&mut self, layer: &Layer) -> Result<Option<Raster>> {
        let (w, h) = self.size;
        if self.target.is_none() {
            self.target = Some(OffscreenTarget::new(self.ctx, w, h)?);
        }
        let Some(target) = &self.target else {
            return Ok(None);
        };
        target.clear(self.ctx, [0, 0, 0, 0]);
        self.drawer.draw(self.ctx, target, layer)?;
        let image = target.read(self.ctx)?;
        // Maps and bars at their rectangles (what an editor should show as the map, empty
        // corners included); morphs wherever they drew.
        let rect = match layer {
            Layer::Map(m) => Some(pixel_rect(m.rect)),
            Layer::Bar(b) => Some(pixel_rect(b.rect)),
            _ => opaque_bounds(&image),
        };
        let Some([x, y, rw, rh]) = rect else {
            return Ok(None);
        };
        let x1 = (x + rw).min(w);
        let y1 = (y + rh).min(h);
        if x >= x1 || y >= y1 {
            return Ok(None);
        }
        Ok(Some(Raster {
            at: [x, y],
            image: crop(&image, x, y, x1 - x, y1 - y),
        }))
    }
}

/// The smallest `[x, y, w, h]` holding every pixel with some alpha.
fn opaque_bounds(image: &RgbaImage) -> Option<[u32; 4]> {
    let (mut x0, mut y0, mut x1, mut y1) = (u32::MAX, u32::MAX, 0, 0);
    for (i, p) in image.pixels.chunks_exact(4).enumerate() {
        if p[3] == 0 {
            continue;
        }
        let x = (i % image.width as usize) as u32;
        let y = (i / image.width as usize) as u32;
        x0 = x0.min(x);
        y0 = y0.min(y);
        x1 = x1.max(x + 1);
        y1 = y1.max(y + 1);
    }
    (x0 < x1).then_some([x0, y0, x1 - x0, y1 - y0])
}

fn crop(image: &RgbaImage, x: u32, y: u32, w: u32, h: u32) -> RgbaImage {
    let mut pixels = Vec::with_capacity(w as usize * h as usize * 4);
    for row in y..y + h {
        let start = (row as usize * image.width as usize + x as usize) * 4;
        pixels.extend_from_slice(&image.pixels[start..start + w as usize * 4]);
    }
    RgbaImage {
        width: w,
        height: h,
        pixels,
    }
}

/// A number for SVG: at most two decimals, no trailing zeros, no "-0".
pub fn num(v: f32) -> String {
    if !v.is_finite() {
        return "0".to_owned();
    }
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    match s {
        "-0" | "" => "0".to_owned(),
        s => s.to_owned(),
    }
}

/// Text for XML character data and attribute values.
pub fn escape(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            '\'' => s.push_str("&apos;"),
            // XML 1.0 allows no other control characters.
            c if (c as u32) < 0x20 && c != '\t' => s.push(' '),
            c => s.push(c),
        }
    }
    s
}

/// Standard base64 (RFC 4648, with padding), for data URIs.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                s.push(char::from(ALPHABET[(n >> (18 - 6 * k)) as usize & 63]));
            } else {
                s.push('=');
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        for (input, expected) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(input.as_bytes()), expected, "{input}");
        }
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!(num(1.0), "1");
        assert_eq!(num(1.5), "1.5");
        assert_eq!(num(-0.001), "0");
        assert_eq!(num(2.345_67), "2.35");
        assert_eq!(num(f32::NAN), "0");
    }

    #[test]
    fn a_pictures_provenance_is_its_desc() {
        let mut picture = crate::picture::Picture::new(egui::vec2(20.0, 10.0), [0, 0, 0, 255]);
        let layout = text::TextLayout::new();
        let none = write_svg(&picture, &layout, &mut |_| Ok(None)).unwrap();
        assert!(!none.contains("<desc>"));
        crate::picture::engine_provenance(&mut picture, "a<b");
        let svg = write_svg(&picture, &layout, &mut |_| Ok(None)).unwrap();
        assert!(svg.contains("<desc>computed by the query engine (a&lt;b)</desc>"));
    }

    #[test]
    fn escape_leaves_no_markup() {
        assert_eq!(escape("<a & 'b'>\u{1}"), "&lt;a &amp; &apos;b&apos;&gt; ");
    }
}
