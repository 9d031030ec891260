//! Plain aligned text tables for the human output of every command (the
//! terminal side of the report).

use std::sync::atomic::{AtomicBool, Ordering};

use comfy_table::{presets, CellAlignment, ContentArrangement, Table};

/// Whether [`render`] fits tables to the terminal's width.
static FIT_TO_TERMINAL: AtomicBool = AtomicBool::new(false);

/// Makes [`render`] fit every table to the width of the terminal standard
/// output is (wrapping long cells with comfy-table's dynamic arrangement),
/// for commands with wide tables (`run`, `compare`, `taskset list`) unless
/// `--wide`. Output that is not a terminal is never changed.
pub fn fit_to_terminal(fit: bool) {
    FIT_TO_TERMINAL.store(fit, Ordering::Relaxed);
}

/// The terminal's width, when fitting is on and standard output is one.
fn terminal_width() -> Option<u16> {
    if !FIT_TO_TERMINAL.load(Ordering::Relaxed) {
        return None;
    }
    console::Term::stdout().size_checked().map(|(_, cols)| cols)
}

/// A borderless table with a header rule; columns named in `right` are
/// right-aligned (numbers).
pub fn new(header: &[&str], right: &[&str]) -> Table {
    let mut table = Table::new();
    table
        .load_style(presets::NOTHING)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header.to_vec());
    for (i, name) in header.iter().enumerate() {
        if right.contains(name) {
            if let Some(column) = table.column_mut(i) {
                column.set_cell_alignment(CellAlignment::Right);
            }
        }
    }
    table
}

/// Renders a table with its header underlined and no trailing spaces.
pub fn render(table: &Table) -> String {
    render_within(table, terminal_width())
}

/// [`render`], wrapping cells so that no line is wider than `width`.
fn render_within(table: &Table, width: Option<u16>) -> String {
    let text = match width {
        Some(width) => {
            let mut fitted = table.clone();
            fitted
                .set_content_arrangement(ContentArrangement::Dynamic)
                .set_width(width);
            fitted.to_string()
        }
        None => table.to_string(),
    };
    let mut lines: Vec<String> = text.lines().map(|l| l.trim_end().to_string()).collect();
    if let Some(header) = lines.first() {
        let rule = "-".repeat(header.chars().count());
        lines.insert(1, rule);
    }
    lines.join("\n")
}

/// A duration in ns as text (`2.5ms`), or `-` when there is none.
pub fn opt_ns(v: Option<u64>) -> String {
    v.map_or_else(
        || "-".to_string(),
        |n| rtlab_model::Nanos::from_ns(n).to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fitted_table_wraps_its_cells_within_the_width_and_keeps_every_word() {
        let mut t = new(&["name", "what it is"], &[]);
        t.add_row(vec![
            "builtin:hartstone-ph",
            "Hartstone PH baseline: 2-32 Hz, 32-2 kilo-whets per period, U = 0.40, RM priorities",
        ]);
        let full = render_within(&t, None);
        assert_eq!(full.lines().count(), 3);
        let fitted = render_within(&t, Some(50));
        assert!(fitted.lines().all(|l| l.chars().count() <= 50), "{fitted}");
        assert!(fitted.lines().count() > 3);
        let words = |s: &str| s.split_whitespace().filter(|w| !w.starts_with('-')).count();
        assert_eq!(words(&fitted), words(&full));
    }
}
