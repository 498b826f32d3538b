//! The embedded demo: small inputs recorded by the project itself with real tools (see
//! `assets/demo/record-*.sh` for how each was made).

use std::path::{Path, PathBuf};

use crate::dataset::LoadSource;
use crate::error::{Context as _, Result};

/// One embedded demo file.
pub struct DemoFile {
    /// How the command line and tours name it: `demo` (the default) or `demo:<key>`.
    pub key: &'static str,
    /// Its file name (which also tells the loaders its compression).
    pub file_name: &'static str,
    pub bytes: &'static [u8],
    /// Opened by `memscape view` without files (and File ▸ Open the demo).
    pub opened_by_default: bool,
    /// Files the analyses of this one need beside it (the traced binary and its source),
    /// written next to each other into the demo cache when asked for.
    pub companions: &'static [Companion],
    /// The functions the GUI's cycle analysis keeps by default (the program's own loops rather
    /// than its start-up code).
    pub cycle_functions: &'static [&'static str],
}

/// A file that goes with a demo file.
pub struct Companion {
    pub file_name: &'static str,
    pub bytes: &'static [u8],
    /// The traced binary: what `cycles --binary` takes.
    pub is_binary: bool,
}

/// Every embedded file; the first is what `demo` names.
pub const FILES: &[DemoFile] = &[
    // memscape's own recording of a multi-threaded key-value service (assets/demo/kvstore.c):
    // thread arenas, a cache with evictions, a leak, an import burst, idle gaps.
    DemoFile {
        key: "kv",
        file_name: "kvstore.msc",
        bytes: include_bytes!("../../../assets/demo/kvstore.msc"),
        opened_by_default: true,
        companions: &[],
        cycle_functions: &[],
    },
    // valgrind lackey `--trace-mem=yes` of a small sorting program (assets/demo/sort.c), trimmed
    // to the program's own code.
    DemoFile {
        key: "sort",
        file_name: "sort.lackey.zst",
        bytes: include_bytes!("../../../assets/demo/sort.lackey.zst"),
        opened_by_default: true,
        // The binary that was traced (non-PIE, -g; its debug information names `./sort.c`)
        // and its source: the cycle views' colours, legend and source pane by line.
        companions: &[
            Companion {
                file_name: "sort",
                bytes: include_bytes!("../../../assets/demo/sort"),
                is_binary: true,
            },
            Companion {
                file_name: "sort.c",
                bytes: include_bytes!("../../../assets/demo/sort.c"),
                is_binary: false,
            },
        ],
        cycle_functions: &["insertion_sort"],
    },
    // LLVM's control-flow graph of kvstore.c's `tokenize` at four points of an optimization
    // pipeline (`opt -passes=dot-cfg`), one snapshot each.
    DemoFile {
        key: "cfg",
        file_name: "tokenize-cfg.dot.zst",
        bytes: include_bytes!("../../../assets/demo/tokenize-cfg.dot.zst"),
        opened_by_default: true,
        companions: &[],
        cycle_functions: &[],
    },
    // heaptrack's raw trace (with addresses) of sqlite3 on a short insert/index/update/delete
    // workload: a file users already have, through the heaptrack importer.
    DemoFile {
        key: "sqlite",
        file_name: "sqlite-small.heaptrack.raw.zst",
        bytes: include_bytes!("../../../assets/demo/sqlite-small.heaptrack.raw.zst"),
        opened_by_default: false,
        companions: &[],
        cycle_functions: &[],
    },
    // memscape's own recording of a small pool allocator (assets/demo/pools.c): five size
    // classes declared through memscape.h and a fallback heap; the allocation map bins it by
    // pool, with waste and fragmentation under each bin.
    DemoFile {
        key: "pools",
        file_name: "pools.msc",
        bytes: include_bytes!("../../../assets/demo/pools.msc"),
        opened_by_default: false,
        companions: &[],
        cycle_functions: &[],
    },
];

impl DemoFile {
    pub fn source(&self) -> LoadSource {
        LoadSource::Embedded {
            name: self.file_name,
            bytes: self.bytes,
        }
    }

    /// Its name on the command line and in tours.
    pub fn tour_name(&self) -> String {
        if std::ptr::eq(self, &FILES[0]) {
            "demo".to_owned()
        } else {
            format!("demo:{}", self.key)
        }
    }
}

/// The demo files `memscape view` opens, in order.
pub fn sources() -> Vec<LoadSource> {
    FILES
        .iter()
        .filter(|f| f.opened_by_default)
        .map(DemoFile::source)
        .collect()
}

/// The embedded file a command-line name means: `demo` (the first), or `demo:<key>`.
pub fn by_name(name: &str) -> Option<&'static DemoFile> {
    if name == "demo" {
        return FILES.first();
    }
    let key = name.strip_prefix("demo:")?;
    FILES.iter().find(|f| f.key == key)
}

/// The embedded file a loaded dataset came from (its name is `demo: <file name>`).
pub fn of_dataset_name(dataset_name: &str) -> Option<&'static DemoFile> {
    let file_name = dataset_name.strip_prefix("demo: ")?;
    FILES.iter().find(|f| f.file_name == file_name)
}

/// A command-line path, with `demo` / `demo:<key>` turned into a file: the analysis commands
/// (`info`, `heaptree`, `cycles`, `layout`, `convert`) read paths, so the embedded file is
/// written once into the user's cache directory (`$XDG_CACHE_HOME/memscape/demo`, else
/// `~/.cache/memscape/demo`) and that path returned. Any other path comes back unchanged.
pub fn resolve_path(path: &Path) -> Result<PathBuf> {
    resolve_path_in(path, &cache_dir())
}

fn resolve_path_in(path: &Path, cache: &Path) -> Result<PathBuf> {
    let name = path.to_string_lossy();
    if name != "demo" && !name.starts_with("demo:") || path.exists() {
        return Ok(path.to_path_buf());
    }
    let demo = by_name(&name)
        .with_context(|| format!("{name}: no such embedded demo file (there are {})", names()))?;
    let file = write_cached(cache, demo.file_name, demo.bytes)?;
    tracing::info!("{name} is {}", file.display());
    Ok(file)
}

/// The traced binary that goes with the demo file a dataset came from, written (with its
/// source beside it) into the demo cache; `None` for files without one.
pub fn binary_for_dataset(dataset_name: &str) -> Result<Option<PathBuf>> {
    let Some(demo) = of_dataset_name(dataset_name) else {
        return Ok(None);
    };
    binary_in(demo, &cache_dir())
}

/// Same for a command-line name (`demo:sort`), or for a copy that `memscape demo DIR` wrote
/// (the embedded file's bytes under its name, with the traced binary beside it).
pub fn binary_for_name(name: &Path) -> Result<Option<PathBuf>> {
    match by_name(&name.to_string_lossy()) {
        Some(demo) if !name.exists() => binary_in(demo, &cache_dir()),
        _ => Ok(written_copy_binary(name)),
    }
}

fn written_copy_binary(path: &Path) -> Option<PathBuf> {
    let file_name = path.file_name()?.to_str()?;
    let demo = FILES.iter().find(|f| f.file_name == file_name)?;
    let binary = demo.companions.iter().find(|c| c.is_binary)?;
    let beside = path.with_file_name(binary.file_name);
    let same = std::fs::metadata(path).is_ok_and(|m| m.len() == demo.bytes.len() as u64)
        && std::fs::read(path).is_ok_and(|b| b == demo.bytes);
    (same && beside.is_file()).then_some(beside)
}

fn binary_in(demo: &DemoFile, cache: &Path) -> Result<Option<PathBuf>> {
    let mut binary = None;
    for c in demo.companions {
        let path = write_cached(cache, c.file_name, c.bytes)?;
        if c.is_binary {
            set_executable(&path)?;
            binary = Some(path);
        }
    }
    Ok(binary)
}

#[cfg(unix)]
pub fn set_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("{}: cannot make executable", path.display()))
}

#[cfg(not(unix))]
pub fn set_executable(_: &Path) -> Result<()> {
    Ok(())
}

/// `cache/memscape/demo/<file_name>` holding `bytes`, written unless it already does.
fn write_cached(cache: &Path, file_name: &str, bytes: &[u8]) -> Result<PathBuf> {
    let dir = cache.join("memscape").join("demo");
    let file = dir.join(file_name);
    let current = std::fs::metadata(&file).is_ok_and(|m| m.len() == bytes.len() as u64)
        && std::fs::read(&file).is_ok_and(|b| b == bytes);
    if !current {
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("{}: cannot create the demo cache", dir.display()))?;
        // Written beside and renamed, so that a concurrent reader never sees half a file.
        let partial = dir.join(format!(".{file_name}.{}", std::process::id()));
        std::fs::write(&partial, bytes)
            .with_context(|| format!("{}: cannot write", partial.display()))?;
        std::fs::rename(&partial, &file)
            .with_context(|| format!("{}: cannot write", file.display()))?;
    }
    Ok(file)
}

fn cache_dir() -> PathBuf {
    let absolute = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    std::env::var_os("XDG_CACHE_HOME")
        .and_then(absolute)
        .or_else(|| {
            std::env::var_os("HOME")
                .and_then(absolute)
                .map(|h| h.join(".cache"))
        })
        .unwrap_or_else(std::env::temp_dir)
}

/// The names `by_name` accepts, for messages.
pub fn names() -> String {
    FILES
        .iter()
        .map(DemoFile::tour_name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_is_found_by_its_name_and_by_its_dataset_name() {
        for f in FILES {
            let by = by_name(&f.tour_name()).map(|d| d.file_name);
            assert_eq!(by, Some(f.file_name));
            let dataset_name = format!("demo: {}", f.file_name);
            assert_eq!(of_dataset_name(&dataset_name).map(|d| d.key), Some(f.key));
        }
        assert_eq!(by_name("demo").map(|d| d.key), Some("kv"));
        assert!(by_name("demo:nothing").is_none());
        assert!(by_name("demonstration").is_none());
    }

    #[test]
    fn demo_paths_become_cached_files_and_other_paths_stay() {
        let cache = std::env::temp_dir().join(format!("memscape-demo-test-{}", std::process::id()));
        for f in FILES {
            let path = resolve_path_in(Path::new(&f.tour_name()), &cache).unwrap();
            assert!(path.starts_with(&cache), "{}", path.display());
            assert_eq!(std::fs::read(&path).unwrap(), f.bytes);
        }
        // A stale or damaged copy is written again.
        let sort = resolve_path_in(Path::new("demo:sort"), &cache).unwrap();
        std::fs::write(&sort, b"garbage").unwrap();
        assert_eq!(
            resolve_path_in(Path::new("demo:sort"), &cache).unwrap(),
            sort
        );
        assert_eq!(
            std::fs::read(&sort).unwrap(),
            by_name("demo:sort").unwrap().bytes
        );
        let sort = by_name("demo:sort").unwrap();
        let binary = binary_in(sort, &cache).unwrap().unwrap();
        assert_eq!(std::fs::read(&binary).unwrap(), sort.companions[0].bytes);
        assert!(binary.with_file_name("sort.c").is_file());
        assert!(
            binary_in(by_name("demo").unwrap(), &cache)
                .unwrap()
                .is_none()
        );
        let err = resolve_path_in(Path::new("demo:nothing"), &cache)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("demo:nothing") && err.contains("demo:sort"),
            "{err}"
        );
        assert_eq!(
            resolve_path_in(Path::new("some/trace.msc"), &cache).unwrap(),
            Path::new("some/trace.msc")
        );
        let _ = std::fs::remove_dir_all(&cache);
    }
}
