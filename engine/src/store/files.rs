//! Files of the store, readable by their owner only: logs hold whatever a build printed (tokens
//! in environment dumps, paths of private projects), so the store is 0700 and its files 0600.

use super::StoreError;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fs::{DirBuilder, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

const DIR_MODE: u32 = 0o700;
const FILE_MODE: u32 = 0o600;

/// Creates `dir` and missing parents as private directories; an existing `dir` is made private.
pub fn private_dir_all(dir: &Path) -> Result<(), StoreError> {
    DirBuilder::new().recursive(true).mode(DIR_MODE).create(dir).map_err(|e| StoreError::io(dir, e))?;
    // A directory made by an older version, or by hand, may be open to others.
    let private = std::fs::Permissions::from_mode(DIR_MODE);
    std::fs::set_permissions(dir, private).map_err(|e| StoreError::io(dir, e))
}

/// Creates `dir`, failing if it exists.
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    DirBuilder::new().mode(DIR_MODE).create(dir)
}

/// Creates (or truncates) a private file for writing.
pub fn private_file(path: &Path) -> Result<File, StoreError> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(FILE_MODE)
        .open(path)
        .map_err(|e| StoreError::io(path, e))
}

/// Opens a private file for reading and writing, creating it empty when it is not there.
pub fn private_open(path: &Path) -> Result<File, StoreError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(FILE_MODE)
        .open(path)
        .map_err(|e| StoreError::io(path, e))
}

/// Writes `value` as JSON to `path` atomically (see [`write_atomic`]).
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), StoreError> {
    let bytes = serde_json::to_vec(value)
        .map_err(|e| StoreError::Corrupt { path: path.to_path_buf(), detail: e.to_string() })?;
    write_atomic(path, &bytes)
}

/// Writes `bytes` to `path` atomically: a private temporary file, then a rename. The temporary
/// file is removed when anything fails, so a full disk is not made fuller.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let written = private_file(&tmp).and_then(|mut file| file.write_all(bytes).map_err(|e| StoreError::io(&tmp, e)));
    let renamed = written.and_then(|()| std::fs::rename(&tmp, path).map_err(|e| StoreError::io(path, e)));
    if renamed.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    renamed
}

/// The most a store file that is read whole may hold: far above what buildvise writes (a result
/// is capped by the diagnostics a parser keeps), and a bound on what a planted file can cost.
pub const READ_WHOLE_MAX_BYTES: u64 = 256 * 1024 * 1024;

pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, StoreError> {
    let bytes = read_bounded(path)?;
    serde_json::from_slice(&bytes).map_err(|e| StoreError::Corrupt { path: path.to_path_buf(), detail: e.to_string() })
}

/// Opens a store file for reading, refusing what buildvise never writes there: a symlink (not
/// followed: it could point at `/dev/zero` or another user's file) and anything but a regular
/// file (a FIFO would block the reader; it is opened without waiting for a writer). Any process
/// of the user, a build script included, can plant these, so each is damage, named.
pub fn open_regular(path: &Path) -> Result<File, StoreError> {
    let file = OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path).map_err(
        |e| match e.raw_os_error() {
            Some(libc::ELOOP) => damaged(path, "a symbolic link, which buildvise never writes"),
            _ => StoreError::io(path, e),
        },
    )?;
    let kind = file.metadata().map_err(|e| StoreError::io(path, e))?.file_type();
    if !kind.is_file() {
        return Err(damaged(path, "not a regular file, which buildvise never writes"));
    }
    Ok(file)
}

/// A store file read whole, through [`open_regular`], refused past [`READ_WHOLE_MAX_BYTES`].
pub fn read_bounded(path: &Path) -> Result<Vec<u8>, StoreError> {
    use std::io::Read;
    let file = open_regular(path)?;
    let mut bytes = Vec::new();
    file.take(READ_WHOLE_MAX_BYTES + 1).read_to_end(&mut bytes).map_err(|e| StoreError::io(path, e))?;
    if bytes.len() as u64 > READ_WHOLE_MAX_BYTES {
        return Err(damaged(path, &format!("larger than {READ_WHOLE_MAX_BYTES} bytes, more than buildvise writes")));
    }
    Ok(bytes)
}

fn damaged(path: &Path, why: &str) -> StoreError {
    StoreError::Corrupt { path: path.to_path_buf(), detail: why.to_string() }
}

/// True when `error` means the filesystem (or the user's quota) has no room left.
pub fn is_full(error: &std::io::Error) -> bool {
    matches!(error.kind(), std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_and_files_are_private() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/b");
        private_dir_all(&dir).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        let file = dir.join("x.json");
        write_json(&file, &serde_json::json!({"a": 1})).unwrap();
        assert_eq!(mode(&file), 0o600);
        // A directory someone opened up is closed again.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        private_dir_all(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
    }
}
