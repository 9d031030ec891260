//! Inputs the fuzz targets (`fuzz/`) found to break a promise of the task-set
//! loader, each kept as a test named after what it guards.

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
