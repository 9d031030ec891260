//! The one line every command prints on standard error for each file it
//! wrote (`--plot`, `--gantt`, `--trace`, `--csv`, `--jobs`, ...):
//! `wrote PATH (what, size)`, so no file appears silently.

use std::path::Path;

/// Says `wrote PATH (what, size)` on standard error; the size is read back
/// from the file (nothing is said about a path that is not a file, such as
/// `-` for standard output).
pub fn wrote(path: impl AsRef<Path>, what: &str) {
    let path = path.as_ref();
    if let Ok(meta) = std::fs::metadata(path) {
        if !meta.is_file() {
            return;
        }
        crate::setup::say(&format!(
            "wrote {} ({what}, {})",
            path.display(),
            size(meta.len())
        ));
    }
}

/// `512 B`, `12.3 KiB`, `4.5 MiB`.
pub fn size(bytes: u64) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if b < KIB {
        format!("{bytes} B")
    } else if b < KIB * KIB {
        format!("{:.1} KiB", b / KIB)
    } else {
        format!("{:.1} MiB", b / (KIB * KIB))
    }
}

#[cfg(test)]
mod tests {
    use super::size;

    #[test]
    fn sizes_are_in_binary_units() {
        assert_eq!(size(512), "512 B");
        assert_eq!(size(12_595), "12.3 KiB");
        assert_eq!(size(4_718_592), "4.5 MiB");
    }
}
