//! The CLI is wiring only (issue 33): parse the flags, call the libraries,
//! print what `rtlab-report` rendered. A command file that grows past
//! [`MAX_LINES`] is taking on rendering or experiment logic that belongs in
//! `report`, `study`, `probe` or `rt`: this test counts.

use std::path::Path;

/// Lines a file of the CLI may have at most (tests beside a command, in
/// its `tests.rs`, count on their own).
const MAX_LINES: usize = 400;

/// Every `.rs` file under `dir`, recursively.
fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("the CLI's sources") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_file_of_the_cli_is_over_400_lines() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    assert!(files.len() > 20, "{files:?}");
    let mut long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let lines = std::fs::read_to_string(f)
                .expect("a source file")
                .lines()
                .count();
            (lines > MAX_LINES).then(|| format!("{} has {lines} lines", f.display()))
        })
        .collect();
    long.sort();
    assert!(
        long.is_empty(),
        "CLI files over {MAX_LINES} lines (move rendering into rtlab-report, experiment logic into \
         rtlab-study, rtlab-probe or rtlab-rt):\n{}",
        long.join("\n")
    );
}
