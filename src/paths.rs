//! Where haloscope keeps the learner's things on this machine.

use std::path::PathBuf;

/// `$HALOSCOPE_DATA`, else `$XDG_DATA_HOME/haloscope`, else `~/.local/share/haloscope`: drafts,
/// attempts, preferences, and the course an installed binary unpacks.
pub fn data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("HALOSCOPE_DATA") {
        return dir.into();
    }
    if let Some(xdg) = std::env::var_os("XDG_DATA_HOME") {
        return PathBuf::from(xdg).join("haloscope");
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    home.join(".local/share/haloscope")
}
