//! Plain aligned text tables for the human output of every command (the
//! terminal side of the report).

use comfy_table::{presets, CellAlignment, ContentArrangement, Table};

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
    let text = table.to_string();
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
