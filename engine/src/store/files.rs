//! Files of the store, readable by their owner only: logs hold whatever a build printed (tokens
//! in environment dumps, paths of private projects), so the store is 0700 and its files 0600.
//! On Windows no mode is set: the store is under the user's profile (`%LOCALAPPDATA%`), whose
//! access list admits the user and the system alone, and new files inherit it.

use super::StoreError;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fs::{DirBuilder, File, OpenOptions};
use std::io::Write;
#[cfg(unix)]
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

#[cfg(unix)]
const DIR_MODE: u32 = 0o700;
#[cfg(unix)]
const FILE_MODE: u32 = 0o600;

/// A directory builder that makes private directories.
fn dir_builder() -> DirBuilder {
    #[cfg_attr(not(unix), expect(unused_mut, reason = "only Unix sets a mode"))]
    let mut builder = DirBuilder::new();
    #[cfg(unix)]
    builder.mode(DIR_MODE);
    builder
}

/// Options that create files private to their owner.
pub fn private_options() -> OpenOptions {
    #[cfg_attr(not(unix), expect(unused_mut, reason = "only Unix sets a mode"))]
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    options.mode(FILE_MODE);
    options
}

/// Creates `dir` and missing parents as private directories; an existing `dir` is made private.
pub fn private_dir_all(dir: &Path) -> Result<(), StoreError> {
    dir_builder().recursive(true).create(dir).map_err(|e| StoreError::io(dir, e))?;
    // A directory made by an older version, or by hand, may be open to others.
    #[cfg(unix)]
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(DIR_MODE)).map_err(|e| StoreError::io(dir, e))?;
    Ok(())
}

/// Creates `dir`, failing if it exists.
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    dir_builder().create(dir)
}

/// Creates (or truncates) a private file for writing.
pub fn private_file(path: &Path) -> Result<File, StoreError> {
    private_options().write(true).create(true).truncate(true).open(path).map_err(|e| StoreError::io(path, e))
}

/// Opens a private file for reading and writing, creating it empty when it is not there.
pub fn private_open(path: &Path) -> Result<File, StoreError> {
    private_options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| StoreError::io(path, e))
}

/// Fills `buf` from byte `offset` of `file`. On Windows this moves the file's cursor too (it has
/// no read at an offset that leaves it), which is why a log's cursors there have handles of
/// their own.
pub fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        let (mut done, mut offset) = (0, offset);
        while done < buf.len() {
            match std::os::windows::fs::FileExt::seek_read(file, &mut buf[done..], offset) {
                Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => {
                    done += n;
                    offset += n as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
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
    #[cfg(unix)]
    let file = OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path).map_err(
        |e| match e.raw_os_error() {
            Some(libc::ELOOP) => damaged(path, "a symbolic link, which buildvise never writes"),
            _ => StoreError::io(path, e),
        },
    )?;
    // Windows: the reparse point itself is opened (a symbolic link or a junction), not what it
    // points at, and refused below as not a regular file.
    #[cfg(windows)]
    let file = {
        use std::os::windows::fs::OpenOptionsExt;
        OpenOptions::new()
            .read(true)
            .custom_flags(windows_sys::Win32::Storage::FileSystem::FILE_FLAG_OPEN_REPARSE_POINT)
            .open(path)
            .map_err(|e| StoreError::io(path, e))?
    };
    let kind = file.metadata().map_err(|e| StoreError::io(path, e))?.file_type();
    if kind.is_symlink() {
        return Err(damaged(path, "a symbolic link, which buildvise never writes"));
    }
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

// Windows keeps no mode: the profile's access list applies.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn directories_and_files_are_private() {
        use std::os::unix::fs::PermissionsExt;
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
