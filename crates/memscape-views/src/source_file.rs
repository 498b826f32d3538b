//! Source files shown beside the views (cycle legends and source pane, the samples' source
//! pane): read once, lines with tabs expanded, never anything huge.

use std::path::Path;

/// Source files larger than this are not shown.
pub const MAX_SOURCE_BYTES: u64 = 8 << 20;

/// The lines of `path` (invalid UTF-8 replaced, tabs as four spaces), or None when it is not a
/// readable file of at most [`MAX_SOURCE_BYTES`].
pub fn read_lines(path: &Path) -> Option<Vec<String>> {
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() <= MAX_SOURCE_BYTES) {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    Some(
        String::from_utf8_lossy(&bytes)
            .lines()
            .map(|l| l.replace('\t', "    "))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_with_tabs_expanded_and_missing_files_none() {
        let dir = std::env::temp_dir().join(format!("memscape-source-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("a.c");
        std::fs::write(&file, b"int x;\n\tx = 1;\n\xff\n").unwrap();
        let lines = read_lines(&file).unwrap();
        assert_eq!(lines, ["int x;", "    x = 1;", "\u{fffd}"]);
        assert!(read_lines(&dir.join("missing.c")).is_none());
        assert!(
            read_lines(&dir).is_none(),
            "a directory is not a source file"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
