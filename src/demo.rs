//! The embedded demo: small inputs recorded by the project itself with real tools (see
//! `assets/demo/record-*.sh` for how each was made).

use crate::data::LoadSource;

/// A heaptrack raw trace (with addresses) of sqlite3 running a short insert/index/update/delete
/// workload.
pub const HEAPTRACK_SQLITE: (&str, &[u8]) = (
    "sqlite-small.heaptrack.raw.zst",
    include_bytes!("../assets/demo/sqlite-small.heaptrack.raw.zst"),
);

/// A valgrind lackey `--trace-mem=yes` trace of a small sorting program (`assets/demo/sort.c`),
/// trimmed to the program's own code.
pub const LACKEY_SORT: (&str, &[u8]) = (
    "sort.lackey.zst",
    include_bytes!("../assets/demo/sort.lackey.zst"),
);

/// Every demo file, in the order the GUI opens them.
pub fn sources() -> Vec<LoadSource> {
    [HEAPTRACK_SQLITE, LACKEY_SORT]
        .into_iter()
        .map(|(name, bytes)| LoadSource::Embedded { name, bytes })
        .collect()
}
