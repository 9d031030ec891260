//! Inputs that broke a promise of the loaders (one-line errors, bounded
//! memory), found by the fuzz targets in `fuzz/` or by hand, each kept as a
//! test named after what it guards.

use rtlab_model::file::{self, Format};

/// Found by `taskset_json`: serde_json quotes an unknown key raw, so a key
/// holding a carriage return made the error span lines.
#[test]
fn json_errors_stay_one_line_whatever_the_keys_hold() {
    let text = "{\"task\": [\n {\"name\": \"a\", \"p\\riod\\u07bd \": \"1ms\"}]}";
    let message = file::parse_str(text, Format::Json, "s.json", "s")
        .unwrap_err()
        .to_string();
    assert!(!message.contains(['\n', '\r']), "{message:?}");
    assert!(message.starts_with("s.json:2:"), "{message}");
}

/// A file above the limit, or a device that never ends (`/dev/zero` was read
/// until memory ran out), is refused after MAX_FILE_BYTES, in one line.
#[test]
fn files_above_the_size_limit_are_refused_without_reading_them_whole() {
    let dir = std::env::temp_dir().join(format!("rtlab-size-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("big.toml");
    let line = "# a comment line of padding, 64 bytes long ....................\n";
    let lines = (file::MAX_FILE_BYTES as usize) / line.len() + 1;
    std::fs::write(&big, line.repeat(lines)).unwrap();
    let message = file::load(big.to_str().unwrap()).unwrap_err().to_string();
    assert!(
        message.ends_with(
            "cannot read: larger than the limit of 8 MiB for task-set and overheads files"
        ),
        "{message}"
    );
    let message = rtlab_model::overheads::Overheads::load(big.to_str().unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("larger than the limit of 8 MiB"),
        "{message}"
    );
    // Exactly at the limit is read (and then judged as a document).
    std::fs::write(&big, " ".repeat(file::MAX_FILE_BYTES as usize)).unwrap();
    let message = file::load(big.to_str().unwrap()).unwrap_err().to_string();
    assert!(!message.contains("larger than"), "{message}");
    std::fs::remove_dir_all(&dir).unwrap();

    let message = file::load("/dev/zero").unwrap_err().to_string();
    assert!(message.contains("larger than the limit"), "{message}");
}

/// Issue 24: a 210 KB SimSo file of 30,000 nested elements overflowed the
/// stack (rc 134), and 300,000 attributes on one element took 184 s of CPU
/// (the parser's duplicate-attribute check is quadratic). Both are refused
/// at the offending element, in one line, in linear time.
#[test]
fn hostile_xml_is_refused_at_its_place_in_linear_time() {
    let deep = format!(
        "<simulation>\n{}{}</simulation>",
        "<a>".repeat(30_000),
        "</a>".repeat(30_000)
    );
    let started = std::time::Instant::now();
    let message = rtlab_model::simso::parse_str(&deep, "deep.xml", "deep")
        .unwrap_err()
        .to_string();
    assert_eq!(
        message,
        "deep.xml:2:190: XML refused: elements nested more than 64 deep (a SimSo configuration is 4 deep)"
    );

    let attributes: String = (0..300_000).map(|k| format!(" a{k}=\"{k}\"")).collect();
    let wide = format!("<simulation>\n  <tasks{attributes}/></simulation>");
    let message = rtlab_model::simso::parse_str(&wide, "wide.xml", "wide")
        .unwrap_err()
        .to_string();
    assert_eq!(
        message,
        "wide.xml:2:3: XML refused: an element with more than 256 attributes"
    );
    // Each took seconds to minutes before (184 s for the second, optimized);
    // a linear scan of 4 MB takes milliseconds even unoptimized.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}
