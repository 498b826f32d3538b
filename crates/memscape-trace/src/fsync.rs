//! Writing a file so that its name never holds a part of it.

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to a new file next to `path` (exclusive, unpredictable name), syncs it,
/// renames it to `path` and syncs the directory: `path` is afterwards the complete file, or
/// (on any error, a full disk say) untouched, with the temporary file removed.
pub fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let mut attempt = 0u32;
    let (tmp, mut file) = loop {
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
            ^ std::process::id().rotate_left(16)
            ^ attempt.wrapping_mul(0x9E37_79B9);
        let tmp = dir.join(format!(".{name}.{nonce:08x}.part"));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(file) => break (tmp, file),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 64 => {
                attempt += 1;
            }
            Err(e) => return Err(e),
        }
    };
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = written {
        drop(file);
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}
