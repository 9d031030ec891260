//! The user guide (`docs/`, an mdBook) and README keep their promises:
//!
//! - every link between pages resolves, to a page and to a heading
//!   (anchors computed as mdBook computes them), and SUMMARY.md lists
//!   every page;
//! - every command in the guide (and README) runs: each page's `sh` blocks are run in
//!   order in a directory of their own, line by line (a heredoc is one
//!   command), `sudo` dropped, long runs shortened as the `--help`
//!   examples are (`shorten`); a block preceded by
//!   `<!-- guide: not run (why) -->` is not run (a build, a cluster);
//!   without root a real-time command that fails for lack of privilege is
//!   skipped with its reason, as root (CI) it must succeed;
//! - the command reference (`reference/cli.md`) is the one `rtlab
//!   __reference` generates from the command-line definition
//!   (`RTLAB_UPDATE_DOCS=1` rewrites it);
//! - README stays short and sends readers into the guide.

mod common;
mod example_runs;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use common::is_root;
use example_runs::{run_line, shortened};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn guide() -> PathBuf {
    root().join("docs/src")
}

/// Every page of the guide, by path relative to `docs/src`, with its text.
fn pages() -> BTreeMap<String, String> {
    fn walk(dir: &Path, base: &Path, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, base, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                let rel = path.strip_prefix(base).unwrap().display().to_string();
                out.insert(rel, std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(&guide(), &guide(), &mut out);
    out
}

/// The lines of `text` outside fenced code blocks.
fn prose(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|line| {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

/// The id mdBook gives a heading: its text without markup, lowercased,
/// letters, digits, `_` and `-` kept, each space a `-`, the rest dropped;
/// a repeated id gets `-1`, `-2`, ...
fn heading_ids(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut ids = BTreeSet::new();
    for line in prose(text) {
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        let heading = heading.trim_start_matches('#');
        if !heading.starts_with(' ') {
            continue;
        }
        let plain = strip_links(heading.trim()).replace(['`', '*'], "");
        let id: String = plain
            .chars()
            .filter_map(|c| {
                if c.is_alphanumeric() || c == '_' || c == '-' {
                    Some(c.to_ascii_lowercase())
                } else if c.is_whitespace() {
                    Some('-')
                } else {
                    None
                }
            })
            .collect();
        let n = seen.entry(id.clone()).or_insert(0);
        ids.insert(if *n == 0 {
            id.clone()
        } else {
            format!("{id}-{n}")
        });
        *n += 1;
    }
    ids
}

/// `[text](target)` becomes `text`.
fn strip_links(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        match (rest[open..].find("]("), rest[open..].find(')')) {
            (Some(mid), Some(close)) if mid < close => {
                out.push_str(&rest[open + 1..open + mid]);
                rest = &rest[open + close + 1..];
            }
            _ => {
                out.push('[');
                rest = &rest[open + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The targets of the Markdown links of `text` (outside code).
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose(text) {
        // Inline code may hold brackets that are not links.
        let mut plain = String::new();
        for (k, part) in line.split('`').enumerate() {
            if k % 2 == 0 {
                plain.push_str(part);
            }
        }
        let mut rest = plain.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find(')').unwrap_or(after.len());
            out.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    out
}

/// Whether `target`, a link in page `from` (relative to `docs/src`, or
/// `../README.md` for README), resolves; `Err` says why not.
fn resolve(pages: &BTreeMap<String, String>, from: &str, target: &str) -> Result<(), String> {
    if target.starts_with("http://")
        || target.starts_with("https://")
        || target.starts_with("mailto:")
    {
        return Ok(());
    }
    let (file, anchor) = match target.split_once('#') {
        Some((f, a)) => (f, Some(a)),
        None => (target, None),
    };
    let page = if file.is_empty() {
        from.to_string()
    } else {
        let base = Path::new(from).parent().unwrap_or(Path::new(""));
        let mut parts: Vec<String> = Vec::new();
        for c in base.join(file).components() {
            match c {
                std::path::Component::ParentDir => {
                    if parts.pop().is_none() {
                        parts.push("..".into());
                    }
                }
                std::path::Component::CurDir => {}
                other => parts.push(other.as_os_str().to_string_lossy().into_owned()),
            }
        }
        parts.join("/")
    };
    let text = match pages.get(&page) {
        Some(text) => text,
        None if !page.ends_with(".md") || page.starts_with("..") => {
            // A file of the repository (ARCHITECTURE.md, a source file).
            let path = guide().join(&page);
            return if path.exists() {
                Ok(())
            } else {
                Err(format!("no file {page}"))
            };
        }
        None => return Err(format!("no page {page}")),
    };
    match anchor {
        Some(anchor) if !heading_ids(text).contains(anchor) => Err(format!(
            "{page} has no heading #{anchor} (it has {:?})",
            heading_ids(text)
        )),
        _ => Ok(()),
    }
}

#[test]
fn every_link_and_anchor_of_the_guide_and_readme_resolves() {
    let pages = pages();
    assert!(pages.len() >= 20, "only {} pages", pages.len());
    let mut broken = Vec::new();
    for (page, text) in &pages {
        for target in links(text) {
            if let Err(why) = resolve(&pages, page, &target) {
                broken.push(format!("{page}: ({target}): {why}"));
            }
        }
    }
    // README's links into the guide, as if README sat beside docs/src.
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    for target in links(&readme) {
        if let Some(inner) = target.strip_prefix("docs/src/") {
            if let Err(why) = resolve(&pages, "x.md", inner) {
                broken.push(format!("README.md: ({target}): {why}"));
            }
        } else if !target.starts_with("http")
            && !root().join(target.split('#').next().unwrap()).exists()
        {
            broken.push(format!("README.md: ({target}): no such file"));
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    // SUMMARY.md lists every page (mdBook leaves the others out).
    let summary = &pages["SUMMARY.md"];
    let listed: BTreeSet<String> = links(summary).into_iter().collect();
    let missing: Vec<&String> = pages
        .keys()
        .filter(|p| *p != "SUMMARY.md" && !listed.contains(*p))
        .collect();
    assert!(missing.is_empty(), "pages not in SUMMARY.md: {missing:?}");
}

#[test]
fn anchors_are_computed_as_mdbook_computes_them() {
    let ids = heading_ids(
        "# A\n## `rtlab latency --json`\n## Linux's throttling in the model\n```\n# not a heading\n```\n## A\n## [Link](x.md) & more\n",
    );
    let expected: BTreeSet<String> = [
        "a",
        "rtlab-latency---json",
        "linuxs-throttling-in-the-model",
        "a-1",
        "link--more",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(ids, expected);
}

/// One command of a page: a line, or a heredoc with its body, or lines
/// joined by a trailing backslash.
fn commands(block: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = block.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let mut command = line.to_string();
        while command.ends_with('\\') {
            command.pop();
            command.push_str(lines.next().unwrap_or_default());
        }
        if let Some(at) = command.find("<<") {
            let word = command[at + 2..]
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .trim_matches(['\'', '"'])
                .to_string();
            for body in lines.by_ref() {
                command.push('\n');
                command.push_str(body);
                if body.trim() == word {
                    break;
                }
            }
        }
        out.push(command);
    }
    out
}

/// The `sh` blocks of a page that run (not marked `guide: not run`).
fn runnable_blocks(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    let mut skip_next = false;
    while let Some(line) = lines.next() {
        let t = line.trim();
        if t.starts_with("<!-- guide: not run") {
            skip_next = true;
            continue;
        }
        if let Some(info) = t.strip_prefix("```") {
            let mut body = String::new();
            for l in lines.by_ref() {
                if l.trim_start().starts_with("```") {
                    break;
                }
                body.push_str(l);
                body.push('\n');
            }
            if info.trim() == "sh" && !skip_next {
                out.push(body);
            }
            skip_next = false;
        } else if !t.is_empty() {
            skip_next = false;
        }
    }
    out
}

#[test]
fn commands_are_read_line_by_line_with_heredocs_whole() {
    let block = "rtlab a   # c\n\ncat > f <<'EOF'\nx = 1\nEOF\nrtlab b \\\n  --c\n";
    assert_eq!(
        commands(block),
        [
            "rtlab a   # c",
            "cat > f <<'EOF'\nx = 1\nEOF",
            "rtlab b   --c"
        ]
    );
    let page = "<!-- guide: not run (a build) -->\n```sh\ncargo build\n```\n\n```sh\nrtlab x\n```\n```text\nout\n```\n";
    assert_eq!(runnable_blocks(page), ["rtlab x\n"]);
}

/// Files the guide's commands read that no earlier command of their page
/// writes: a user's own files in the guide's words.
fn fixtures(dir: &Path) {
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    let set = "name = \"my-set\"\n\
         [[task]]\nname = \"control\"\nperiod = \"10ms\"\nwcet = \"2ms\"\npriority = 2\n\
         [[task.critical_sections]]\nresource = \"bus\"\nstart = \"500us\"\nlength = \"500us\"\n\
         [[task]]\nname = \"logger\"\nperiod = \"50ms\"\nwcet = \"5ms\"\npriority = 1\n\
         [[task.critical_sections]]\nresource = \"bus\"\nstart = \"1ms\"\nlength = \"1ms\"\n";
    write("my-set.toml", set);
    write("sets/mine.toml", set);
    write(
        "other.json",
        r#"{"name": "other", "task": [{"name": "a", "period": "10ms", "wcet": "2ms"}]}"#,
    );
    write(
        "my-platform.toml",
        "processors = 2\n[[task]]\nname = \"a\"\nperiod = \"10ms\"\nwcet = \"4ms\"\ncpu = 0\n\
         [[task]]\nname = \"b\"\nperiod = \"20ms\"\nwcet = \"9ms\"\ncpu = 1\n",
    );
    // Hand-written Linux-like costs, as the breakdown page describes them.
    let costs = "name = \"linux-guess\"\ntimer = \"2us\"\n\
         preempt = { per_thread = \"0.05us\", base = \"8us\" }\n\
         exit = { per_thread = \"0.05us\", base = \"4us\" }\n\
         nonpreempt = { per_thread = \"0.02us\", base = \"4us\" }\n\
         releases = \"hrtimer\"\ntick = \"4ms\"\n";
    write("my.toml", costs);
    write("linux-guess.toml", costs);
    write(
        "modes.toml",
        "[[task]]\nname = \"sensor\"\nperiod = \"10ms\"\nwcet = \"1ms\"\n\
         [[task]]\nname = \"logger\"\nperiod = \"50ms\"\nwcet = \"5ms\"\n\
         [[task]]\nname = \"safe-stop\"\nperiod = \"20ms\"\nwcet = \"2ms\"\n\
         [[mode]]\nname = \"startup\"\nstart = \"0ms\"\ntasks = [\"sensor\", \"logger\"]\n\
         [[mode]]\nname = \"degraded\"\nstart = \"300ms\"\ntasks = [\"sensor\", \"safe-stop\"]\n",
    );
    // `report --from-json`'s layout: runs as the results store keeps them.
    write(
        "runs.json",
        r#"[{"id": 1, "created": "2026-11-23T06:00:00Z", "rtlab_version": "0.1.0",
             "command": "rtlab sweep --json", "kind": "sweep", "host": {"kernel": "6.18"},
             "status": "complete", "document": {"tests": ["rm:rta"], "rows": [
               {"utilization": 0.5, "sets": 2, "ratio": {"rm:rta": 1.0}}]}}]"#,
    );
    write(
        "sweep.spec.json",
        r#"{"tasks": 5, "from": 0.5, "to": 1.0, "step": 0.25, "sets": 20, "seed": 1}"#,
    );
}

#[test]
fn every_command_in_the_guide_runs() {
    let bin = assert_cmd::cargo::cargo_bin("rtlab");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let root_user = is_root();
    let mut failures = Vec::new();
    let mut ran = 0;
    // README's quick start runs too.
    let mut pages = pages();
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    pages.insert("../README.md".to_string(), readme);
    for (page, text) in pages {
        let blocks = runnable_blocks(&text);
        if blocks.is_empty() {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        fixtures(dir.path());
        let store = dir.path().join("results.sqlite");
        for block in blocks {
            for command in commands(&block) {
                let line = command.strip_prefix("sudo ").unwrap_or(&command);
                let line = if line.starts_with("rtlab ") && !line.contains('\n') {
                    let name = line.split_whitespace().nth(1).unwrap_or_default();
                    shortened(name, line)
                } else {
                    line.to_string()
                };
                let started = std::time::Instant::now();
                let out = run_line(&line, dir.path(), &store, &path);
                let took = started.elapsed().as_secs_f64();
                ran += 1;
                let err = String::from_utf8_lossy(&out.stderr);
                let first = err.lines().next().unwrap_or_default();
                match out.status.code() {
                    Some(0) => println!("ok ({page}, {took:.1} s): {line}"),
                    Some(1) if !root_user && line.starts_with("rtlab ") => {
                        println!("skipped (not root) ({page}): {line}: {first}")
                    }
                    code => failures.push(format!("{page}: `{line}`: exit {code:?}: {err}")),
                }
            }
        }
    }
    assert!(ran >= 50, "only {ran} commands found");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_command_reference_is_the_one_the_cli_generates() {
    let generated = common::stdout_of(&["__reference"]);
    let path = guide().join("reference/cli.md");
    if std::env::var_os("RTLAB_UPDATE_DOCS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).unwrap();
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "docs/src/reference/cli.md is not what `rtlab __reference` prints: run \
         `cargo run -p rtlab-cli -- __reference > docs/src/reference/cli.md` \
         (or RTLAB_UPDATE_DOCS=1 cargo test -p rtlab-cli --test guide)"
    );
}

#[test]
fn readme_is_short_and_ci_runs_its_test_command() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines < 300,
        "README.md has {lines} lines: move detail into the guide"
    );
    let head: String = readme.lines().take(40).collect::<Vec<_>>().join("\n");
    for command in ["cargo run --release -- demo", "cargo test --workspace"] {
        assert!(
            head.contains(command),
            "README's first 40 lines lack `{command}`"
        );
    }
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    assert!(
        ci.lines()
            .any(|l| l.trim_start().starts_with("cargo test --workspace")),
        ".ci/run does not run README's test command verbatim"
    );
    assert!(
        readme.contains("docs/src/"),
        "README does not link into the guide"
    );
}

/// `rtlab man --out DIR` writes a page per command, and `rtlab
/// completions SHELL` a script the shell reads, both from the command-line
/// definition: a flag or command added to the CLI appears in them.
#[test]
fn man_pages_and_completions_come_from_the_command_line_definition() {
    let dir = tempfile::tempdir().unwrap();
    let out = common::rtlab()
        .args(["man", "--out"])
        .arg(dir.path().join("man1"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let commands = common::stdout_of(&["__commands"]);
    for path in commands.lines() {
        let page = dir
            .path()
            .join("man1")
            .join(format!("rtlab-{}.1", path.replace(' ', "-")));
        let text =
            std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        assert!(
            text.contains(".TH") && text.contains(".SH SYNOPSIS"),
            "{}",
            page.display()
        );
    }
    let sim = std::fs::read_to_string(dir.path().join("man1/rtlab-sim.1")).unwrap();
    assert!(sim.contains("scheduler"), "{sim}");
    assert!(!dir.path().join("man1/rtlab-help.1").exists());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("wrote ") && err.contains("man pages"),
        "{err}"
    );

    for (shell, check) in [("bash", "bash"), ("zsh", "zsh"), ("fish", "fish")] {
        let script = common::stdout_of(&["completions", shell]);
        assert!(
            script.contains("taskset") && script.contains("--scheduler"),
            "{shell}"
        );
        let file = dir.path().join(format!("rtlab.{shell}"));
        std::fs::write(&file, &script).unwrap();
        // Syntax-checked by the shell itself where it is installed.
        let mut parse = Command::new(check);
        match shell {
            "fish" => parse.arg("--no-execute"),
            _ => parse.arg("-n"),
        };
        if let Ok(status) = parse.arg(&file).status() {
            assert!(status.success(), "{shell} refuses its completion script");
        }
    }
}
