//! Finding a binary's separate debug information the way gdb, elfutils and heaptrack do.
//!
//! Distributions strip their binaries and ship the DWARF and full symbol tables apart
//! (Debian's `-dbgsym` packages, `objcopy --only-keep-debug`). A binary names its debug file in
//! two ways, tried in this order:
//!
//! 1. its **build id** (`.note.gnu.build-id`): `ROOT/.build-id/ab/cdef….debug` under each global
//!    debug directory `ROOT` (`/usr/lib/debug` by default);
//! 2. its **`.gnu_debuglink`** (a file name and a CRC-32 of the debug file): beside the binary,
//!    in a `.debug/` directory beside it, and under `ROOT` followed by the binary's directory
//!    (`/usr/lib/debug/usr/bin/prog.debug`).
//!
//! A candidate is accepted when its build id equals the binary's (or, for a binary without one,
//! when its CRC-32 matches the debuglink's). `MEMSCAPE_DEBUG_ROOT=DIR[:DIR…]` replaces
//! `/usr/lib/debug` (tests use it; so can a user with debug files elsewhere). debuginfod is
//! consulted only when the user sets `DEBUGINFOD_URLS`, as elfutils' own clients do: its cache
//! (`$DEBUGINFOD_CACHE_PATH`, else `$XDG_CACHE_HOME/debuginfod_client`, else
//! `~/.cache/debuginfod_client`) first, then the `debuginfod-find` tool; by default nothing
//! leaves the machine.

use std::path::{Path, PathBuf};

use object::{Object, ObjectSection};

/// How a debug file was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FoundBy {
    /// The binary carries its own DWARF.
    Embedded,
    /// `ROOT/.build-id/xx/rest.debug`.
    BuildId,
    /// `.gnu_debuglink`.
    Debuglink,
    /// A debuginfod server or its local cache.
    Debuginfod,
}

/// Where separate debug files are looked for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DebugSearch {
    /// Global debug directories (gdb's `debug-file-directory`).
    pub roots: Vec<PathBuf>,
    /// `DEBUGINFOD_URLS` when the user set it; `None`: debuginfod is never consulted.
    pub debuginfod_urls: Option<String>,
    /// The debuginfod client cache (consulted only with `debuginfod_urls`).
    pub debuginfod_cache: Option<PathBuf>,
}

/// The default global debug directory.
pub const DEFAULT_DEBUG_ROOT: &str = "/usr/lib/debug";

/// The environment variable that replaces [`DEFAULT_DEBUG_ROOT`] (a `:`-separated list).
pub const DEBUG_ROOT_ENV: &str = "MEMSCAPE_DEBUG_ROOT";

impl DebugSearch {
    /// `MEMSCAPE_DEBUG_ROOT` (or `/usr/lib/debug`), and debuginfod when `DEBUGINFOD_URLS` is set.
    pub fn from_env() -> Self {
        let roots = match std::env::var_os(DEBUG_ROOT_ENV) {
            Some(list) => std::env::split_paths(&list)
                .filter(|p| !p.as_os_str().is_empty())
                .collect(),
            None => vec![PathBuf::from(DEFAULT_DEBUG_ROOT)],
        };
        let debuginfod_urls = std::env::var("DEBUGINFOD_URLS")
            .ok()
            .filter(|u| !u.trim().is_empty());
        let debuginfod_cache = std::env::var_os("DEBUGINFOD_CACHE_PATH")
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("XDG_CACHE_HOME")
                    .map(|c| PathBuf::from(c).join("debuginfod_client"))
            })
            .or_else(|| {
                std::env::var_os("HOME")
                    .map(|h| PathBuf::from(h).join(".cache").join("debuginfod_client"))
            });
        Self {
            roots,
            debuginfod_urls,
            debuginfod_cache,
        }
    }

    /// Only these global debug directories, no debuginfod.
    pub fn in_roots(roots: impl IntoIterator<Item = PathBuf>) -> Self {
        Self {
            roots: roots.into_iter().collect(),
            ..Self::default()
        }
    }

    /// The debug file of `binary` (already parsed as `object`), if one is found.
    pub fn find(&self, binary: &Path, object: &object::File<'_>) -> Option<(PathBuf, FoundBy)> {
        let build_id = object.build_id().ok().flatten().filter(|id| !id.is_empty());
        if let Some(id) = build_id {
            let hex = hex(id);
            if hex.len() > 2 {
                for root in &self.roots {
                    let candidate = root
                        .join(".build-id")
                        .join(&hex[..2])
                        .join(format!("{}.debug", &hex[2..]));
                    if matches_build_id(&candidate, id) {
                        return Some((candidate, FoundBy::BuildId));
                    }
                }
            }
        }
        if let Ok(Some((name, crc))) = object.gnu_debuglink() {
            let name = String::from_utf8_lossy(name).into_owned();
            for candidate in self.debuglink_candidates(binary, &name) {
                let accepted = match build_id {
                    Some(id) => matches_build_id(&candidate, id),
                    None => crc32_of(&candidate) == Some(crc),
                };
                if accepted && candidate != binary {
                    return Some((candidate, FoundBy::Debuglink));
                }
            }
        }
        build_id.and_then(|id| self.debuginfod(id).map(|p| (p, FoundBy::Debuginfod)))
    }

    /// gdb's order: the binary's directory, its `.debug/`, then each root + that directory
    /// (for the path as given and as resolved through symbolic links).
    fn debuglink_candidates(&self, binary: &Path, name: &str) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = binary.parent().map(Path::to_path_buf).into_iter().collect();
        if let Some(real) = std::fs::canonicalize(binary)
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf))
            && !dirs.contains(&real)
        {
            dirs.push(real);
        }
        let mut out = Vec::new();
        for dir in &dirs {
            out.push(dir.join(name));
            out.push(dir.join(".debug").join(name));
        }
        for root in &self.roots {
            for dir in &dirs {
                let relative = dir.strip_prefix("/").unwrap_or(dir);
                out.push(root.join(relative).join(name));
            }
        }
        out
    }

    fn debuginfod(&self, build_id: &[u8]) -> Option<PathBuf> {
        self.debuginfod_urls.as_ref()?;
        let hex = hex(build_id);
        if let Some(cache) = &self.debuginfod_cache {
            let cached = cache.join(&hex).join("debuginfo");
            if matches_build_id(&cached, build_id) {
                return Some(cached);
            }
        }
        let output = std::process::Command::new("debuginfod-find")
            .args(["debuginfo", &hex])
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output();
        match output {
            Ok(o) if o.status.success() => {
                let path = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
                matches_build_id(&path, build_id).then_some(path)
            }
            Ok(_) => None,
            Err(e) => {
                tracing::debug!(
                    "DEBUGINFOD_URLS is set but debuginfod-find could not run ({e}): install the Debian package `debuginfod`"
                );
                None
            }
        }
    }
}

/// Whether the binary holds DWARF of its own (then no separate file is needed).
pub fn has_dwarf(object: &object::File<'_>) -> bool {
    object
        .section_by_name(".debug_info")
        .is_some_and(|s| s.size() > 0)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `path` is an object file whose build id is `id`.
fn matches_build_id(path: &Path, id: &[u8]) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let Ok(map) = memscape_map::Mapping::new(&file) else {
        return false;
    };
    object::File::parse(map.bytes())
        .ok()
        .and_then(|o| o.build_id().ok().flatten().map(|b| b == id))
        .unwrap_or(false)
}

/// The CRC-32 `.gnu_debuglink` records (zlib's CRC-32 of the whole file).
fn crc32_of(path: &Path) -> Option<u32> {
    let file = std::fs::File::open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let map = memscape_map::Mapping::new(&file).ok()?;
    let mut crc = flate2::Crc::new();
    crc.update(map.bytes());
    Some(crc.sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debuglink_candidates_follow_gdb() {
        let search = DebugSearch::in_roots([PathBuf::from("/dbg")]);
        let c = search.debuglink_candidates(Path::new("/nonexistent/dir/prog"), "prog.debug");
        assert_eq!(
            c,
            [
                PathBuf::from("/nonexistent/dir/prog.debug"),
                PathBuf::from("/nonexistent/dir/.debug/prog.debug"),
                PathBuf::from("/dbg/nonexistent/dir/prog.debug"),
            ]
        );
    }

    #[test]
    fn crc_is_zlibs() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = dir.path().join("f");
        std::fs::write(&p, b"123456789").unwrap_or_else(|e| panic!("{e}"));
        // The CRC-32 check value.
        assert_eq!(crc32_of(&p), Some(0xCBF4_3926));
    }

    #[test]
    fn debuginfod_is_off_unless_asked() {
        let search = DebugSearch {
            roots: Vec::new(),
            debuginfod_urls: None,
            debuginfod_cache: Some(PathBuf::from("/nonexistent")),
        };
        assert_eq!(search.debuginfod(&[1, 2, 3]), None);
    }
}
