//! `rtlab sweep --shard I/N --out FILE` and `rtlab sweep merge`: a sweep
//! split into shards and merged prints exactly what the unsharded sweep
//! prints, and both match the golden digest in
//! `tests/fixtures/sweep-golden.sha256` (the SHA-256 of `rtlab sweep --spec
//! tests/fixtures/sweep-golden.json --json`'s output without its final
//! newline). The Python package checks its local and Dask sweeps of the same
//! spec against the same file.

mod common;

use std::path::{Path, PathBuf};

use common::{rtlab, stdout_of};
use rtlab_analysis::sweep::sha256_hex;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn golden_digest() -> String {
    std::fs::read_to_string(fixture("sweep-golden.sha256"))
        .unwrap()
        .trim()
        .to_string()
}

/// The golden sweep's flags, equal to `sweep-golden.json`.
const GOLDEN_FLAGS: [&str; 18] = [
    "--tasks",
    "5",
    "--from",
    "0.5",
    "--to",
    "1.0",
    "--step",
    "0.1",
    "--sets",
    "100",
    "--seed",
    "2026",
    "--method",
    "randfixedsum",
    "--deadlines",
    "implicit",
    "--test",
    "rm:liu-layland,rm:hyperbolic,rm:rta,opa:rta,edf:edf-demand",
];

/// Writes shard `i` of `n` of the golden spec into `dir`; its path.
fn shard(dir: &Path, i: u64, n: u64, extra: &[&str]) -> PathBuf {
    let out = dir.join(format!("shard-{i}.json"));
    let spec = fixture("sweep-golden.json");
    rtlab()
        .args(["sweep", "--spec"])
        .arg(&spec)
        .args(["--shard", &format!("{i}/{n}"), "--out"])
        .arg(&out)
        .args(extra)
        .assert()
        .success();
    out
}

fn merge(files: &[PathBuf]) -> std::process::Output {
    rtlab()
        .args(["sweep", "merge", "--json"])
        .args(files)
        .output()
        .unwrap()
}

#[test]
fn one_process_and_seven_merged_shards_print_the_golden_sweep() {
    let spec = fixture("sweep-golden.json");
    let spec = spec.to_str().unwrap();
    let whole = stdout_of(&["sweep", "--spec", spec, "--json"]);
    assert_eq!(
        sha256_hex(whole.strip_suffix('\n').unwrap().as_bytes()),
        golden_digest(),
        "the golden sweep's numbers changed:\n{whole}"
    );
    let mut flags = vec!["sweep"];
    flags.extend(GOLDEN_FLAGS);
    flags.push("--json");
    assert_eq!(
        stdout_of(&flags),
        whole,
        "the flags and the spec file differ"
    );

    let dir = tempfile::tempdir().unwrap();
    // Shards on different thread counts, merged in a shuffled order.
    let mut files: Vec<PathBuf> = (0..7)
        .map(|i| shard(dir.path(), i, 7, &["--threads", &(1 + i % 2).to_string()]))
        .collect();
    files.swap(0, 5);
    files.swap(2, 6);
    let merged = merge(&files);
    assert!(merged.status.success(), "{merged:?}");
    assert_eq!(String::from_utf8(merged.stdout).unwrap(), whole);

    // The table too.
    let table = stdout_of(&["sweep", "--spec", spec]);
    let mut args = vec!["sweep".to_string(), "merge".to_string()];
    args.extend(files.iter().map(|f| f.display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(stdout_of(&args), table);
}

/// Refuses with one line naming the file (exit 1) or the flag (exit 2),
/// printing nothing.
#[test]
fn merge_refuses_what_is_not_one_whole_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = (0..3).map(|i| shard(dir.path(), i, 3, &[])).collect();
    let refused = |files: &[PathBuf], needle: &str| {
        let out = merge(files);
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(out.stdout.is_empty());
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(needle), "`{needle}` not in {err}");
    };
    // Another seed.
    let other = dir.path().join("other-seed.json");
    let mut flags = vec!["sweep"];
    flags.extend(GOLDEN_FLAGS.map(|f| if f == "2026" { "7" } else { f }));
    flags.extend(["--shard", "2/3", "--out"]);
    rtlab().args(&flags).arg(&other).assert().success();
    refused(
        &[files[0].clone(), files[1].clone(), other],
        "other-seed.json: its spec differs from the first shard's in `seed`: 7, not 2026",
    );
    refused(&files[..2], "shard 2 of 3 is missing");
    refused(
        &[files[0].clone(), files[1].clone(), files[1].clone()],
        "given twice",
    );
    // Edited: a count changed.
    let text = std::fs::read_to_string(&files[1]).unwrap();
    let edited = dir.path().join("edited.json");
    std::fs::write(
        &edited,
        text.replacen("\"seed\": 2026", "\"seed\": 2027", 1),
    )
    .unwrap();
    refused(
        &[files[0].clone(), edited, files[2].clone()],
        "edited.json: its digest does not match its contents",
    );
    // Truncated.
    let truncated = dir.path().join("truncated.json");
    std::fs::write(&truncated, &text[..text.len() / 3]).unwrap();
    refused(
        &[files[0].clone(), truncated.clone(), files[2].clone()],
        "truncated.json:",
    );

    // Flags: a shard index outside 0..N, a shard without --out.
    for (args, needle) in [
        (
            &["sweep", "--shard", "3/3", "--out", "x.json"][..],
            "outside 0..3",
        ),
        (
            &["sweep", "--shard", "1/0", "--out", "x.json"][..],
            "at least 1",
        ),
        (&["sweep", "--shard", "1/3"][..], "--out"),
        (
            &["sweep", "--cpus", "4", "--test", "rm:rta", "--sets", "1"][..],
            "--test rm:rta is a uniprocessor test; with --cpus 4",
        ),
        (&["sweep", "--cpus", "1025"][..], "--cpus"),
    ] {
        let out = rtlab().args(args).output().unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: `{needle}` not in {err}");
    }
    // A spec file with an unknown key: exit 1, naming file, line and column.
    let bad = dir.path().join("bad-spec.json");
    std::fs::write(&bad, "{\"tasks\": 5,\n \"set\": 10}").unwrap();
    let out = rtlab()
        .args(["sweep", "--spec"])
        .arg(&bad)
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("bad-spec.json:2:"), "{err}");
    assert!(err.contains("unknown field `set`"), "{err}");
}

/// Issue 22: a sweep on 4 processors (total utilization on the axis, U/m
/// in the table and the plot) splits and merges like any other, and its
/// counts add up.
#[test]
fn a_multiprocessor_sweep_merges_and_plots_against_u_over_m() {
    let dir = tempfile::tempdir().unwrap();
    let flags = [
        "sweep",
        "--cpus",
        "4",
        "--tasks",
        "6",
        "--from",
        "1.0",
        "--to",
        "4.0",
        "--step",
        "1.0",
        "--sets",
        "12",
        "--seed",
        "9",
        "--test",
        "gedf:gfb,gedf:rta,gfp:rta,pedf:ff-decreasing",
    ];
    let mut json_flags = flags.to_vec();
    json_flags.push("--json");
    let whole = stdout_of(&json_flags);
    let doc: serde_json::Value = serde_json::from_str(&whole).unwrap();
    assert_eq!(doc["cpus"], 4);
    let us: Vec<f64> = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["utilization"].as_f64().unwrap())
        .collect();
    assert_eq!(
        us,
        [1.0, 2.0, 3.0, 4.0],
        "the axis is the total utilization"
    );
    for row in doc["rows"].as_array().unwrap() {
        for test in ["gedf:gfb", "gedf:rta", "gfp-dm:rta", "pedf:ff-decreasing"] {
            let (a, i) = (
                row["accepted"][test].as_u64().unwrap(),
                row["inconclusive"][test].as_u64().unwrap(),
            );
            assert!(a + i <= 12, "{row}");
        }
    }
    // U = 1 on 4 processors: every set of 6 tasks fits a partition (each
    // processor takes tasks up to U = 1 exactly by EDF's demand test).
    assert_eq!(doc["rows"][0]["accepted"]["pedf:ff-decreasing"], 12);

    let files: Vec<PathBuf> = (0..3)
        .map(|i| {
            let out = dir.path().join(format!("mp-{i}.json"));
            rtlab()
                .args(flags)
                .args(["--shard", &format!("{i}/3"), "--out"])
                .arg(&out)
                .assert()
                .success();
            out
        })
        .collect();
    let merged = merge(&files);
    assert_eq!(String::from_utf8(merged.stdout).unwrap(), whole);

    let plot = dir.path().join("mp.svg");
    let mut plot_flags = flags.to_vec();
    plot_flags.extend(["--plot", plot.to_str().unwrap()]);
    let table = stdout_of(&plot_flags);
    assert!(table.contains("U/m"), "{table}");
    assert!(std::fs::read_to_string(&plot).unwrap().contains("(U/m)"));
}
