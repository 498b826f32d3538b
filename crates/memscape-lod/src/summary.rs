//! A big trace's summary (what `memscape info` prints) stored beside it like its index
//! (`TRACE.summary.json`, else in the cache directory), so that `info` of a trace that has
//! been summarised once answers without another pass over its blocks. The file names the trace
//! it came from (size and modification time) and the options it was made with; a summary of
//! another version of the trace, or of other options, is not used.

use std::path::{Path, PathBuf};

use crate::sidecar::{locations, writable_location};
use crate::{LodError, SourceId};

/// File name suffix of stored summaries.
const SUFFIX: &str = "summary.json";
/// Format version of the stored file.
const VERSION: u32 = 1;

/// A stored summary: its text and JSON forms as `info` prints them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StoredSummary {
    pub version: u32,
    pub source: SourceId,
    /// What the summary was made with (options, the program's version).
    pub key: String,
    pub text: String,
    pub json: String,
}

/// Where the summary of `trace` is looked for, in order.
pub fn summary_locations(trace: &Path) -> Vec<PathBuf> {
    locations(trace, SUFFIX)
}

/// The stored summary of `trace` made with `key`, when one belongs to the trace as it is now.
pub fn load(trace: &Path, key: &str) -> Option<StoredSummary> {
    let now = SourceId::of_file(trace, 0, 0);
    summary_locations(trace).iter().find_map(|p| {
        let bytes = std::fs::read(p).ok()?;
        let s: StoredSummary = serde_json::from_slice(&bytes).ok()?;
        (s.version == VERSION && s.source == now && s.key == key).then_some(s)
    })
}

/// Stores the summary of `trace` made with `key` in the first writable location; returns
/// where. Written to a temporary file first, so that a reader never sees half of it.
pub fn store(trace: &Path, key: &str, text: &str, json: &str) -> Result<PathBuf, LodError> {
    let candidates = summary_locations(trace);
    let path = writable_location(&candidates).ok_or_else(|| {
        LodError::Format(format!(
            "no writable place for the summary of {}",
            trace.display()
        ))
    })?;
    let s = StoredSummary {
        version: VERSION,
        source: SourceId::of_file(trace, 0, 0),
        key: key.to_owned(),
        text: text.to_owned(),
        json: json.to_owned(),
    };
    let bytes = serde_json::to_vec(&s).map_err(|e| LodError::Format(e.to_string()))?;
    let tmp = path.with_extension(format!("json.tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(|e| LodError::io(&tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| LodError::io(&path, e))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_belongs_to_its_trace_and_key() {
        let dir = tempfile::tempdir().expect("tempdir");
        let trace = dir.path().join("t.msc");
        std::fs::write(&trace, b"one").expect("write");
        assert!(load(&trace, "k").is_none());
        let at = store(&trace, "k", "text", "{}").expect("store");
        assert_eq!(at, dir.path().join("t.msc.summary.json"));
        let s = load(&trace, "k").expect("stored");
        assert_eq!((s.text.as_str(), s.json.as_str()), ("text", "{}"));
        assert!(load(&trace, "other options").is_none());
        // The trace changed (another size): the summary no longer belongs to it.
        std::fs::write(&trace, b"longer").expect("write");
        assert!(load(&trace, "k").is_none());
        // A damaged file is not used.
        std::fs::write(&at, b"{").expect("write");
        assert!(load(&trace, "k").is_none());
    }
}
