use std::path::PathBuf;

/// Everything that can go wrong while setting up the GPU or producing an image.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("no usable GPU adapter ({wanted}); tried: {tried}")]
    NoAdapter { wanted: String, tried: String },
    #[error("could not create a device on {adapter}")]
    RequestDevice {
        adapter: String,
        #[source]
        source: wgpu::RequestDeviceError,
    },
    #[error("reading back the rendered image failed: {0}")]
    Readback(String),
    #[error("shader {name}: {message}")]
    Shader { name: String, message: String },
    #[error("{path}: {message}")]
    Png { path: PathBuf, message: String },
    #[error("{path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("image size {width}x{height} is out of range (1..={max} per side)")]
    BadSize { width: u32, height: u32, max: u32 },
    #[error("rectangle {rect:?} (x, y, width, height) does not fit in the {width}x{height} target")]
    BadRect {
        rect: [u32; 4],
        width: u32,
        height: u32,
    },
    #[error("{what} need {bytes} bytes, more than the device allows in one buffer ({max})")]
    TooLarge {
        what: &'static str,
        bytes: u64,
        max: u64,
    },
}
