//! The report in a real browser: headless Chromium renders it to PNG, and
//! the picture must not be blank and every plot must show its marks.
//!
//! Without a browser the tests print why and pass, unless `CI` or
//! `RTLAB_REQUIRE_BROWSER` is set (`.ci/run` installs Debian's
//! `chromium`), where a missing browser fails them. `RTLAB_BROWSER`
//! names the browser binary; `RTLAB_BROWSER_TEST_KEEP=DIR` keeps the
//! pages and screenshots there to look at.

mod fixtures;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rtlab_report::figures::figures;
use rtlab_report::html::render_html;
use rtlab_report::plot::{PALETTE, SIZE};

/// The browser to use, or why there is none (a failure where one is required).
fn browser() -> Option<PathBuf> {
    let required = ["CI", "RTLAB_REQUIRE_BROWSER"]
        .iter()
        .any(|v| std::env::var(v).is_ok_and(|s| !s.is_empty() && s != "0" && s != "false"));
    let candidates: Vec<String> = match std::env::var("RTLAB_BROWSER") {
        Ok(b) => vec![b],
        Err(_) => ["chromium", "chromium-browser", "google-chrome"]
            .map(String::from)
            .to_vec(),
    };
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = candidates.iter().find_map(|name| {
        let direct = Path::new(name);
        if direct.is_absolute() {
            return direct.is_file().then(|| direct.to_path_buf());
        }
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        let why = format!(
            "no browser found ({}): apt-get install chromium",
            candidates.join(", ")
        );
        assert!(
            !required,
            "{why} (CI or RTLAB_REQUIRE_BROWSER is set, so the browser test must run)"
        );
        eprintln!("skipped: {why}");
    }
    found
}

/// Renders `page` to `png` at `width` x `height`, giving up after 120 s.
fn screenshot(browser: &Path, page: &Path, png: &Path, width: u32, height: u32, profile: &Path) {
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            "--no-first-run",
            "--no-default-browser-check",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("--window-size={width},{height}"))
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", browser.display()));
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait for the browser") {
            assert!(
                status.success(),
                "{} exited with {status}",
                browser.display()
            );
            break;
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{} did not finish the screenshot in 120 s",
                browser.display()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(png.is_file(), "no screenshot at {}", png.display());
}

/// An RGB(A) picture.
struct Picture {
    width: usize,
    height: usize,
    channels: usize,
    data: Vec<u8>,
}

impl Picture {
    fn load(path: &Path) -> Picture {
        let file = std::io::BufReader::new(std::fs::File::open(path).expect("open the PNG"));
        let mut decoder = png::Decoder::new(file);
        decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
        let mut reader = decoder.read_info().expect("a PNG header");
        let mut data = vec![0; reader.output_buffer_size().expect("a PNG of sane size")];
        let info = reader.next_frame(&mut data).expect("a PNG frame");
        data.truncate(info.buffer_size());
        let channels = match info.color_type {
            png::ColorType::Rgba => 4,
            png::ColorType::Rgb => 3,
            other => panic!("unexpected PNG colour type {other:?}"),
        };
        Picture {
            width: info.width as usize,
            height: info.height as usize,
            channels,
            data,
        }
    }

    fn pixel(&self, x: usize, y: usize) -> (u8, u8, u8) {
        let i = (y * self.width + x) * self.channels;
        (self.data[i], self.data[i + 1], self.data[i + 2])
    }

    /// Pixels in the rectangle for which `keep` holds.
    fn count(
        &self,
        x0: usize,
        y0: usize,
        w: usize,
        h: usize,
        keep: impl Fn((u8, u8, u8)) -> bool,
    ) -> usize {
        let mut n = 0;
        for y in y0..(y0 + h).min(self.height) {
            for x in x0..(x0 + w).min(self.width) {
                n += usize::from(keep(self.pixel(x, y)));
            }
        }
        n
    }
}

fn not_white(p: (u8, u8, u8)) -> bool {
    p.0 < 245 || p.1 < 245 || p.2 < 245
}

/// Within a few levels of a series colour: a data mark (antialiased edges aside).
fn series_colour(p: (u8, u8, u8)) -> bool {
    PALETTE
        .iter()
        .any(|c| c.0.abs_diff(p.0) <= 6 && c.1.abs_diff(p.1) <= 6 && c.2.abs_diff(p.2) <= 6)
}

fn work_dir() -> (Option<tempfile::TempDir>, PathBuf) {
    match std::env::var_os("RTLAB_BROWSER_TEST_KEEP") {
        Some(dir) => {
            std::fs::create_dir_all(&dir).expect("create RTLAB_BROWSER_TEST_KEEP");
            (
                None,
                PathBuf::from(dir).canonicalize().expect("a directory"),
            )
        }
        None => {
            let t = tempfile::tempdir().expect("a temp dir");
            let p = t.path().to_path_buf();
            (Some(t), p)
        }
    }
}

#[test]
fn the_report_renders_in_a_browser_and_is_not_blank() {
    let Some(browser) = browser() else { return };
    let (_keep, dir) = work_dir();
    let page = dir.join("report.html");
    std::fs::write(&page, render_html(&fixtures::all())).unwrap();
    let png = dir.join("report.png");
    screenshot(
        &browser,
        &page,
        &png,
        1200,
        4000,
        &dir.join("profile-report"),
    );
    let picture = Picture::load(&png);
    assert_eq!((picture.width, picture.height), (1200, 4000));
    let total = picture.width * picture.height;
    let ink = picture.count(0, 0, picture.width, picture.height, not_white);
    let marks = picture.count(0, 0, picture.width, picture.height, series_colour);
    eprintln!("report screenshot: {ink} of {total} pixels not white, {marks} in series colours");
    assert!(
        ink * 50 > total,
        "the page is (nearly) blank: {ink} of {total} pixels drawn"
    );
    assert!(
        marks > 5000,
        "the plots drew almost nothing: {marks} pixels in series colours"
    );
}

/// Each plot of the report, placed alone in a cell of known position on
/// one page, must show pixels in its series colours inside its cell.
#[test]
fn every_plot_draws_marks_in_the_browser() {
    let Some(browser) = browser() else { return };
    let (_keep, dir) = work_dir();
    let plots: Vec<(String, String)> = fixtures::all()
        .iter()
        .flat_map(|run| {
            figures(run).into_iter().map(move |f| {
                let svg = f
                    .svg
                    .unwrap_or_else(|e| panic!("{} {}: {e}", run.kind, f.title));
                (format!("{} / {}", run.kind, f.title), svg)
            })
        })
        .collect();
    let (w, h) = (SIZE.0 as usize, SIZE.1 as usize);
    let columns = 2;
    let rows = plots.len().div_ceil(columns);
    let mut page = String::from("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>body{margin:0;background:#fff}div{position:absolute;overflow:hidden}</style></head><body>");
    for (i, (_, svg)) in plots.iter().enumerate() {
        page.push_str(&format!(
            "<div style=\"left:{}px;top:{}px;width:{w}px;height:{h}px\">{svg}</div>",
            (i % columns) * w,
            (i / columns) * h
        ));
    }
    page.push_str("</body></html>");
    let page_path = dir.join("plots.html");
    std::fs::write(&page_path, page).unwrap();
    let png = dir.join("plots.png");
    screenshot(
        &browser,
        &page_path,
        &png,
        (columns * w) as u32,
        (rows * h) as u32,
        &dir.join("profile-plots"),
    );
    let picture = Picture::load(&png);
    for (i, (name, _)) in plots.iter().enumerate() {
        let (x0, y0) = ((i % columns) * w, (i / columns) * h);
        let marks = picture.count(x0, y0, w, h, series_colour);
        let ink = picture.count(x0, y0, w, h, not_white);
        eprintln!("{name}: {marks} pixels in series colours, {ink} not white");
        assert!(ink > 2000, "{name}: the plot's cell is (nearly) blank");
        assert!(
            marks >= 30,
            "{name}: no drawn marks ({marks} pixels in series colours)"
        );
    }
}

/// Issue 36: a run's detail tables scrolled sideways (every field of every
/// task a column). In the browser, at the report's width, no shown table
/// may be wider than its box: a script added to a copy of the page counts
/// the `div.scroll` boxes outside closed `<details>` whose content is wider
/// than they are (the folded table of every field, opened on demand, may
/// scroll).
#[test]
fn the_detail_tables_fit_the_page_without_scrolling() {
    let Some(browser) = browser() else { return };
    let (_keep, dir) = work_dir();
    let mut runs = fixtures::all();
    runs.push(fixtures::wide_run());
    let count = "<script>\
        const wide = [...document.querySelectorAll('div.scroll')]\
            .filter(d => !d.closest('details:not([open])'))\
            .filter(d => d.scrollWidth > d.clientWidth + 1).length;\
        document.title = 'wide tables: ' + wide;\
        </script></body>";
    let page = render_html(&runs).replace("</body>", count);
    let path = dir.join("tables.html");
    std::fs::write(&path, page).unwrap();
    let out = Command::new(&browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--window-size=1100,2000",
            "--dump-dom",
        ])
        .arg(format!(
            "--user-data-dir={}",
            dir.join("profile-tables").display()
        ))
        .arg(format!("file://{}", path.display()))
        .stderr(Stdio::null())
        .output()
        .expect("the browser runs");
    let dom = String::from_utf8_lossy(&out.stdout);
    let title = dom
        .split("<title>")
        .nth(1)
        .and_then(|t| t.split("</title>").next())
        .unwrap_or_default();
    assert_eq!(title, "wide tables: 0", "the browser said: {title}");
}
