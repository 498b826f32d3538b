//! Every WGSL file of `shaders/`, embedded in the binary, with a tiny `#import "path"`
//! preprocessor for the shared snippets under `shaders/utils/`.

use crate::RenderError;

/// (path relative to `shaders/`, source) for every file; the test below checks this list against
/// the directory so a new file cannot be forgotten.
pub const SHADER_FILES: &[(&str, &str)] = &[
    (
        "alloc_map_accumulate.wgsl",
        include_str!("../../../shaders/alloc_map_accumulate.wgsl"),
    ),
    (
        "alloc_map_common.wgsl",
        include_str!("../../../shaders/alloc_map_common.wgsl"),
    ),
    (
        "alloc_map_cursors.wgsl",
        include_str!("../../../shaders/alloc_map_cursors.wgsl"),
    ),
    (
        "alloc_map_dense.wgsl",
        include_str!("../../../shaders/alloc_map_dense.wgsl"),
    ),
    (
        "alloc_map_dense_scan.wgsl",
        include_str!("../../../shaders/alloc_map_dense_scan.wgsl"),
    ),
    (
        "alloc_map_pick.wgsl",
        include_str!("../../../shaders/alloc_map_pick.wgsl"),
    ),
    (
        "alloc_map_resolve.wgsl",
        include_str!("../../../shaders/alloc_map_resolve.wgsl"),
    ),
    (
        "lod_cells.wgsl",
        include_str!("../../../shaders/lod_cells.wgsl"),
    ),
    (
        "lod_cells_add.wgsl",
        include_str!("../../../shaders/lod_cells_add.wgsl"),
    ),
    (
        "polar_morph.wgsl",
        include_str!("../../../shaders/polar_morph.wgsl"),
    ),
    ("shapes.wgsl", include_str!("../../../shaders/shapes.wgsl")),
    (
        "utils/color.wgsl",
        include_str!("../../../shaders/utils/color.wgsl"),
    ),
    (
        "utils/cushion.wgsl",
        include_str!("../../../shaders/utils/cushion.wgsl"),
    ),
    (
        "utils/fixed64.wgsl",
        include_str!("../../../shaders/utils/fixed64.wgsl"),
    ),
    (
        "utils/sdf.wgsl",
        include_str!("../../../shaders/utils/sdf.wgsl"),
    ),
    (
        "utils/u64.wgsl",
        include_str!("../../../shaders/utils/u64.wgsl"),
    ),
];

/// Pipelines (files with entry points) as opposed to snippets meant to be imported.
pub const PIPELINE_SHADERS: &[&str] = &[
    "alloc_map_accumulate.wgsl",
    "alloc_map_cursors.wgsl",
    "alloc_map_dense.wgsl",
    "alloc_map_dense_scan.wgsl",
    "alloc_map_pick.wgsl",
    "alloc_map_resolve.wgsl",
    "lod_cells.wgsl",
    "lod_cells_add.wgsl",
    "polar_morph.wgsl",
    "shapes.wgsl",
];

fn source_of(name: &str) -> Option<&'static str> {
    SHADER_FILES
        .iter()
        .find(|(path, _)| *path == name)
        .map(|(_, src)| *src)
}

/// The source of `name` with every `#import "x.wgsl"` replaced by that file (each file once).
pub fn preprocess(name: &str) -> Result<String, RenderError> {
    let mut out = String::new();
    let mut included = Vec::new();
    include_into(name, &mut out, &mut included, 0)?;
    Ok(out)
}

fn include_into(
    name: &str,
    out: &mut String,
    included: &mut Vec<String>,
    depth: usize,
) -> Result<(), RenderError> {
    let err = |message: String| RenderError::Shader {
        name: name.to_owned(),
        message,
    };
    if depth > 16 {
        return Err(err("imports nested too deeply".into()));
    }
    if included.iter().any(|n| n == name) {
        return Ok(());
    }
    included.push(name.to_owned());
    let src = source_of(name).ok_or_else(|| err("no such shader file".into()))?;
    for (number, line) in src.lines().enumerate() {
        if let Some(rest) = line.trim().strip_prefix("#import") {
            let target = rest.trim().trim_matches('"');
            include_into(target, out, included, depth + 1)
                .map_err(|e| err(format!("line {}: importing {target:?}: {e}", number + 1)))?;
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    Ok(())
}

/// Creates a shader module from an embedded file.
pub fn create_module(device: &wgpu::Device, name: &str) -> Result<wgpu::ShaderModule, RenderError> {
    let source = preprocess(name)?;
    Ok(device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(name),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn validate(name: &str) -> Result<naga::Module, String> {
        let src = preprocess(name).map_err(|e| e.to_string())?;
        let module = naga::front::wgsl::parse_str(&src).map_err(|e| e.emit_to_string(&src))?;
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        )
        .validate(&module)
        .map_err(|e| e.emit_to_string(&src))?;
        Ok(module)
    }

    #[test]
    fn every_shader_file_is_embedded() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shaders");
        let mut on_disk = Vec::new();
        for dir in ["", "utils/"] {
            let Ok(entries) = std::fs::read_dir(format!("{root}/{dir}")) else {
                panic!("cannot list {root}/{dir}");
            };
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.ends_with(".wgsl") {
                    on_disk.push(format!("{dir}{name}"));
                }
            }
        }
        on_disk.sort();
        let mut embedded: Vec<String> = SHADER_FILES.iter().map(|(p, _)| p.to_string()).collect();
        embedded.sort();
        assert_eq!(
            on_disk, embedded,
            "shader.rs's SHADER_FILES must list every .wgsl file"
        );
    }

    #[test]
    fn every_shader_validates_with_naga() {
        for (name, _) in SHADER_FILES {
            if let Err(e) = validate(name) {
                panic!("{name} does not validate:\n{e}");
            }
        }
        for name in PIPELINE_SHADERS {
            let module = validate(name).unwrap_or_else(|e| panic!("{e}"));
            assert!(!module.entry_points.is_empty(), "{name} has no entry point");
        }
    }

    #[test]
    fn unknown_import_names_the_file_and_line() {
        let mut out = String::new();
        let err = include_into("nope.wgsl", &mut out, &mut Vec::new(), 0);
        assert!(err.is_err());
    }
}
