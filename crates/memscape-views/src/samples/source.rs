//! Where the source file of a `file:line` offender is: found relative to the samples file
//! (MemAxes ships `lulesh/samples.out` beside `LULESH_OMP.cc`, older layouts put sources in
//! `src/` one level up).

use std::path::{Path, PathBuf};

/// Splits `file:line` (the offender names of `top_lines`).
pub fn split_source_line(name: &str) -> Option<(&str, u32)> {
    let (file, line) = name.rsplit_once(':')?;
    let line = line.trim().parse().ok()?;
    (!file.is_empty()).then_some((file, line))
}

/// Where `file` (as the samples name it) is readable: as given when absolute, else beside the
/// samples file, in `src/` beside it, one directory up or in `src/` there, then relative to
/// the working directory; a path from another machine is also tried by its file name alone.
pub fn resolve(samples_file: &Path, file: &str) -> Option<PathBuf> {
    let given = Path::new(file);
    if given.is_absolute() && given.is_file() {
        return Some(given.to_path_buf());
    }
    let dir = samples_file.parent().unwrap_or(Path::new("."));
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let bases = [
        dir.to_path_buf(),
        dir.join("src"),
        dir.join(".."),
        dir.join("../src"),
        PathBuf::from("."),
    ];
    let mut names = vec![given.to_path_buf()];
    if let Some(name) = given.file_name()
        && Path::new(name) != given
    {
        names.push(PathBuf::from(name));
    }
    for name in &names {
        if name.is_absolute() {
            continue;
        }
        for base in &bases {
            let p = base.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_lines_split_at_the_last_colon() {
        assert_eq!(
            split_source_line("LULESH_OMP.cc:2035"),
            Some(("LULESH_OMP.cc", 2035))
        );
        assert_eq!(split_source_line("C:/x/a.c:7"), Some(("C:/x/a.c", 7)));
        assert_eq!(split_source_line("a.c"), None);
        assert_eq!(split_source_line(":3"), None);
        assert_eq!(split_source_line("a.c:x"), None);
    }

    #[test]
    fn lulesh_source_resolves_beside_the_samples() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/memaxes/lulesh");
        let samples = dir.join("samples.out");
        let found = resolve(&samples, "LULESH_OMP.cc").expect("LULESH_OMP.cc beside samples.out");
        assert!(found.ends_with("LULESH_OMP.cc"));
        // A path from the machine that recorded the samples: found by its file name.
        assert!(resolve(&samples, "/g/g90/user/lulesh/LULESH_OMP.cc").is_some());
        assert!(resolve(&samples, "no_such_file.cc").is_none());
    }
}
