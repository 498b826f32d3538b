//! The embedded demo: small inputs recorded by the project itself with real tools (see
//! `assets/demo/record-*.sh` for how each was made).

use crate::data::LoadSource;

/// One embedded demo file.
pub struct DemoFile {
    /// How the command line and tours name it: `demo` (the default) or `demo:<key>`.
    pub key: &'static str,
    /// Its file name (which also tells the loaders its compression).
    pub file_name: &'static str,
    pub bytes: &'static [u8],
    /// Opened by `memscape view` without files (and File ▸ Open the demo).
    pub opened_by_default: bool,
}

/// Every embedded file; the first is what `demo` names.
pub const FILES: &[DemoFile] = &[
    // memscape's own recording of a multi-threaded key-value service (assets/demo/kvstore.c):
    // thread arenas, a cache with evictions, a leak, an import burst, idle gaps.
    DemoFile {
        key: "kv",
        file_name: "kvstore.msc",
        bytes: include_bytes!("../assets/demo/kvstore.msc"),
        opened_by_default: true,
    },
    // valgrind lackey `--trace-mem=yes` of a small sorting program (assets/demo/sort.c), trimmed
    // to the program's own code.
    DemoFile {
        key: "sort",
        file_name: "sort.lackey.zst",
        bytes: include_bytes!("../assets/demo/sort.lackey.zst"),
        opened_by_default: true,
    },
    // LLVM's control-flow graph of kvstore.c's `tokenize` at four points of an optimization
    // pipeline (`opt -passes=dot-cfg`), one snapshot each.
    DemoFile {
        key: "cfg",
        file_name: "tokenize-cfg.dot.zst",
        bytes: include_bytes!("../assets/demo/tokenize-cfg.dot.zst"),
        opened_by_default: true,
    },
    // heaptrack's raw trace (with addresses) of sqlite3 on a short insert/index/update/delete
    // workload: a file users already have, through the heaptrack importer.
    DemoFile {
        key: "sqlite",
        file_name: "sqlite-small.heaptrack.raw.zst",
        bytes: include_bytes!("../assets/demo/sqlite-small.heaptrack.raw.zst"),
        opened_by_default: false,
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
}
