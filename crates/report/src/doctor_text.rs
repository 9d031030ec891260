//! `rtlab doctor`'s text: one line per item of the platform's real-time
//! state, `[ok]`, `[note]`, `[WARN]` or `[??]` (unreadable), then its
//! advice below, both wrapped under the item's text.

use rtlab_host::platform::{Level, PlatformReport};

use crate::table;

/// Where an item's text starts: after `[note] ` and an 18-column key.
const TEXT_COLUMN: usize = 26;

/// The human report; `color` tints the tags.
pub fn describe(report: &PlatformReport, color: bool) -> String {
    let mut out = String::from("rtlab doctor: the platform's real-time state\n\n");
    for line in report.lines() {
        let (tag, code) = match line.level {
            Level::Ok => ("ok", "32"),
            Level::Note => ("note", "36"),
            Level::Warn => ("WARN", "1;31"),
            Level::Unknown => ("??", "33"),
        };
        let tag = if color {
            format!("\x1b[{code}m{tag:>4}\x1b[0m")
        } else {
            format!("{tag:>4}")
        };
        let item = format!("[{tag}] {:<18} {}", line.key, line.summary);
        out += &table::fit_hanging(&item, TEXT_COLUMN);
        out.push('\n');
        if let Some(advice) = line.advice {
            let advice = format!("{:TEXT_COLUMN$}{advice}", "");
            out += &table::fit_hanging(&advice, TEXT_COLUMN);
            out.push('\n');
        }
    }
    out
}
