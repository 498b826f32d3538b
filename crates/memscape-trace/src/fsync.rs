//! Writing a file so that its name never holds a part of it.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `bytes` to a new file next to `path` (exclusive, unpredictable name), syncs it,
/// renames it to `path` and syncs the directory: `path` is afterwards the complete file, or
/// (on any error, a full disk say) untouched, with the temporary file removed.
pub fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = SyncedFile::create(path)?;
    file.write_all(bytes)?;
    file.commit()
}

/// A file written in pieces under a temporary name next to `path` (exclusive, unpredictable:
/// `.NAME.XXXXXXXX.part`) that gets `path`'s name only when [`SyncedFile::commit`]ted, synced;
/// dropped uncommitted (an error, a cancelled recording), the temporary file is removed.
pub struct SyncedFile {
    path: PathBuf,
    tmp: PathBuf,
    file: Option<std::io::BufWriter<std::fs::File>>,
}

impl SyncedFile {
    /// Creates the temporary file.
    pub fn create(path: &Path) -> std::io::Result<Self> {
        let dir = parent(path);
        let name = path
            .file_name()
            .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
        let mut attempt = 0u32;
        loop {
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
                Ok(file) => {
                    return Ok(Self {
                        path: path.to_owned(),
                        tmp,
                        file: Some(std::io::BufWriter::with_capacity(1 << 20, file)),
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 64 => {
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Flushes and syncs the file, renames it to its path and syncs the directory.
    pub fn commit(mut self) -> std::io::Result<()> {
        let Some(file) = self.file.take() else {
            return Err(std::io::Error::other("file already committed"));
        };
        let done = file
            .into_inner()
            .map_err(|e| e.into_error())
            .and_then(|f| f.sync_all())
            .and_then(|()| std::fs::rename(&self.tmp, &self.path));
        if let Err(e) = done {
            let _ = std::fs::remove_file(&self.tmp);
            return Err(e);
        }
        if let Ok(d) = std::fs::File::open(parent(&self.path)) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

impl Write for SyncedFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.file {
            Some(f) => f.write(buf),
            None => Err(std::io::Error::other("file already committed")),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.file {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for SyncedFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

fn parent(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}
