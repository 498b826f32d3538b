//! An 8-bit RGBA image in memory, and PNG encoding/decoding for it.

use std::path::Path;

use crate::RenderError;

/// Straight (not premultiplied) sRGB RGBA, rows top to bottom, no padding.
#[derive(Clone, PartialEq, Eq)]
pub struct RgbaImage {
    pub width: u32,
    pub height: u32,
    pub pixels: Vec<u8>,
}

impl std::fmt::Debug for RgbaImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RgbaImage({}x{})", self.width, self.height)
    }
}

impl RgbaImage {
    pub fn new(width: u32, height: u32, fill: [u8; 4]) -> Self {
        let pixels = fill
            .iter()
            .copied()
            .cycle()
            .take(width as usize * height as usize * 4)
            .collect();
        Self {
            width,
            height,
            pixels,
        }
    }

    pub fn pixel(&self, x: u32, y: u32) -> [u8; 4] {
        let i = (y as usize * self.width as usize + x as usize) * 4;
        [
            self.pixels[i],
            self.pixels[i + 1],
            self.pixels[i + 2],
            self.pixels[i + 3],
        ]
    }

    pub fn set_pixel(&mut self, x: u32, y: u32, rgba: [u8; 4]) {
        let i = (y as usize * self.width as usize + x as usize) * 4;
        self.pixels[i..i + 4].copy_from_slice(&rgba);
    }

    /// Number of distinct colours, a cheap "is this image blank?" measure.
    pub fn distinct_colors(&self) -> usize {
        let mut seen: Vec<u32> = self
            .pixels
            .chunks_exact(4)
            .map(|p| u32::from_le_bytes([p[0], p[1], p[2], p[3]]))
            .collect();
        seen.sort_unstable();
        seen.dedup();
        seen.len()
    }

    pub fn encode_png(&self) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        {
            let mut encoder = png::Encoder::new(&mut out, self.width, self.height);
            encoder.set_color(png::ColorType::Rgba);
            encoder.set_depth(png::BitDepth::Eight);
            encoder.set_source_srgb(png::SrgbRenderingIntent::Perceptual);
            let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
            writer
                .write_image_data(&self.pixels)
                .map_err(|e| e.to_string())?;
        }
        Ok(out)
    }

    pub fn save_png(&self, path: &Path) -> Result<(), RenderError> {
        let bytes = self.encode_png().map_err(|message| RenderError::Png {
            path: path.to_owned(),
            message,
        })?;
        std::fs::write(path, bytes).map_err(|source| RenderError::Io {
            path: path.to_owned(),
            source,
        })
    }

    /// Reads an 8-bit RGB or RGBA PNG.
    pub fn load_png(path: &Path) -> Result<Self, RenderError> {
        let bad = |message: String| RenderError::Png {
            path: path.to_owned(),
            message,
        };
        let bytes = std::fs::read(path).map_err(|source| RenderError::Io {
            path: path.to_owned(),
            source,
        })?;
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder.read_info().map_err(|e| bad(e.to_string()))?;
        let size = reader
            .output_buffer_size()
            .ok_or_else(|| bad("image too large".into()))?;
        let mut buf = vec![0; size];
        let info = reader
            .next_frame(&mut buf)
            .map_err(|e| bad(e.to_string()))?;
        if info.bit_depth != png::BitDepth::Eight {
            return Err(bad(format!(
                "expected 8-bit channels, found {:?}",
                info.bit_depth
            )));
        }
        let pixels = match info.color_type {
            png::ColorType::Rgba => buf[..info.buffer_size()].to_vec(),
            png::ColorType::Rgb => buf[..info.buffer_size()]
                .chunks_exact(3)
                .flat_map(|p| [p[0], p[1], p[2], 255])
                .collect(),
            other => return Err(bad(format!("expected RGB or RGBA, found {other:?}"))),
        };
        Ok(Self {
            width: info.width,
            height: info.height,
            pixels,
        })
    }
}
