//! The one text style of every terminal table (and the prose around it),
//! the terminal side of the report: the same rules as the HTML report's
//! tables ([`crate::human`]: times in their unit, at most four significant
//! digits), laid out by comfy-table.
//!
//! **Fitting the width.** A table is as wide as its content when standard
//! output has no width (a pipe or a file without `COLUMNS`) or `--wide` is
//! given; on a terminal (or with `COLUMNS` set) it fits that width without
//! ever breaking a cell inside a word or a number: a prose column marked
//! [`Table::wrapping`] wraps between words, then the columns marked
//! [`Table::optional`] are left out, the first named first, with a line
//! saying which (`--wide` shows them); a table that still does not fit is
//! printed one row per block (`name  column value  column value ...`,
//! wrapped between whole cells). [`fit_text`] wraps the prose lines.

use std::sync::atomic::{AtomicBool, Ordering};

use comfy_table::{
    presets, CellAlignment, ColumnConstraint, ContentArrangement, Row, Table as Layout, Width,
};

/// Whether `--wide` was given: every column, whatever the width.
static WIDE: AtomicBool = AtomicBool::new(false);

/// Narrowest width fitted to: below it a table is printed as it is.
const MIN_WIDTH: usize = 20;

/// `--wide`: print every column of every table, whatever the terminal's
/// width (called once by the binary, before any output).
pub fn set_wide(wide: bool) {
    WIDE.store(wide, Ordering::Relaxed);
}

/// The width tables and prose fit: the terminal's when standard output is
/// one, else `COLUMNS` when it is set (as `ls` reads it), else none (a
/// pipe or file gets every column at full width). `None` with `--wide`.
pub fn width() -> Option<usize> {
    if WIDE.load(Ordering::Relaxed) {
        return None;
    }
    let terminal = console::Term::stdout()
        .size_checked()
        .map(|(_, cols)| usize::from(cols));
    terminal
        .or_else(|| std::env::var("COLUMNS").ok()?.trim().parse().ok())
        .filter(|&w| w >= MIN_WIDTH)
}

/// A table of text cells under a header line and a rule, columns apart by
/// two spaces; see the module doc for how it fits a width.
#[derive(Debug, Clone)]
pub struct Table {
    header: Vec<String>,
    right: Vec<bool>,
    rows: Vec<Vec<String>>,
    /// Columns that may be left out, in the order they are.
    optional: Vec<usize>,
    /// The prose columns that may wrap between words.
    wrapping: Vec<usize>,
}

/// A table with these column headers; the columns named in `right` are
/// right-aligned (numbers).
pub fn new(header: &[&str], right: &[&str]) -> Table {
    Table {
        header: header.iter().map(|h| h.to_string()).collect(),
        right: header.iter().map(|h| right.contains(h)).collect(),
        rows: Vec::new(),
        optional: Vec::new(),
        wrapping: Vec::new(),
    }
}

impl Table {
    /// Adds a row (missing cells are blank, extra ones ignored).
    pub fn add_row<S: Into<String>>(&mut self, row: impl IntoIterator<Item = S>) -> &mut Self {
        let mut cells: Vec<String> = row.into_iter().map(Into::into).collect();
        cells.resize(self.header.len(), String::new());
        self.rows.push(cells);
        self
    }

    /// The columns (by header) that may be left out to fit a width, the
    /// first named first: the ones a reader needs least. Unnamed columns
    /// always stay.
    pub fn optional(&mut self, names: &[&str]) -> &mut Self {
        self.optional = names
            .iter()
            .filter_map(|n| self.header.iter().position(|h| h == n))
            .collect();
        self
    }

    /// A column (by header) of prose that may wrap between its words
    /// (call again for more).
    pub fn wrapping(&mut self, name: &str) -> &mut Self {
        if let Some(i) = self.header.iter().position(|h| h == name) {
            self.wrapping.push(i);
        }
        self
    }

    /// Whether it has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table fitted to [`width`].
    pub fn render(&self) -> String {
        self.render_within(width())
    }

    /// The table fitted to `width` (`None`: as wide as its content).
    pub fn render_within(&self, width: Option<usize>) -> String {
        let natural = self.natural_widths();
        let Some(width) = width else {
            return self.layout(&[], &[]);
        };
        let mut hidden: Vec<usize> = Vec::new();
        let mut candidates = self.optional.iter();
        loop {
            let visible = |i: &usize| !hidden.contains(i);
            let total = line_width((0..natural.len()).filter(visible).map(|i| natural[i]));
            if total <= width {
                return self.with_note(self.layout(&hidden, &[]), &hidden, width);
            }
            let wraps: Vec<usize> = self.wrapping.iter().copied().filter(visible).collect();
            if !wraps.is_empty() {
                let narrowest: Vec<usize> = wraps.iter().map(|&w| self.narrowest_wrap(w)).collect();
                let least = line_width((0..natural.len()).filter(visible).map(|i| {
                    match wraps.iter().position(|&w| w == i) {
                        Some(k) => narrowest[k],
                        None => natural[i],
                    }
                }));
                if least <= width {
                    let rooms = share(width - least, &wraps, &narrowest, &natural);
                    let wrapped: Vec<(usize, usize)> = wraps.into_iter().zip(rooms).collect();
                    return self.with_note(self.layout(&hidden, &wrapped), &hidden, width);
                }
            }
            match candidates.next() {
                Some(&next) => hidden.push(next),
                None => return self.records(width),
            }
        }
    }

    /// Each column's width: its longest cell or header.
    fn natural_widths(&self) -> Vec<usize> {
        (0..self.header.len())
            .map(|i| {
                self.rows
                    .iter()
                    .map(|r| chars(&r[i]))
                    .chain([chars(&self.header[i])])
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }

    /// The narrowest the prose column `w` gets: its longest word, and its
    /// header whole.
    fn narrowest_wrap(&self, w: usize) -> usize {
        self.rows
            .iter()
            .flat_map(|r| r[w].split_whitespace())
            .map(chars)
            .chain([chars(&self.header[w])])
            .max()
            .unwrap_or(1)
    }

    /// The table through comfy-table without the `hidden` columns, the
    /// prose columns `(index, width)` wrapped, no trailing blanks, a rule
    /// under the header.
    fn layout(&self, hidden: &[usize], wrap: &[(usize, usize)]) -> String {
        let mut t = Layout::new();
        t.load_style(presets::NOTHING)
            .set_content_arrangement(ContentArrangement::Disabled)
            .set_header(Row::from(self.header.clone()));
        for row in &self.rows {
            t.add_row(Row::from(row.clone()));
        }
        for (i, column) in t.column_iter_mut().enumerate() {
            if self.right[i] {
                column.set_cell_alignment(CellAlignment::Right);
            }
            if hidden.contains(&i) {
                column.set_constraint(ColumnConstraint::Hidden);
            } else if let Some(&(_, room)) = wrap.iter().find(|(w, _)| *w == i) {
                let room = u16::try_from(room + 2).unwrap_or(u16::MAX);
                column.set_constraint(ColumnConstraint::Absolute(Width::Fixed(room)));
            } else {
                column.set_constraint(ColumnConstraint::ContentWidth);
            }
        }
        if !wrap.is_empty() {
            t.set_content_arrangement(ContentArrangement::Dynamic);
        }
        let text = t.to_string();
        let mut lines: Vec<String> = text.lines().map(|l| l.trim_end().to_string()).collect();
        if let Some(header) = lines.first() {
            let rule = "-".repeat(chars(header));
            lines.insert(1, rule);
        }
        lines.join("\n")
    }

    /// `text` and, when columns were left out, a line naming them.
    fn with_note(&self, text: String, hidden: &[usize], width: usize) -> String {
        if hidden.is_empty() {
            return text;
        }
        let names: Vec<&str> = hidden.iter().map(|&i| self.header[i].as_str()).collect();
        let note = format!("(--wide adds: {})", names.join(", "));
        format!("{text}\n{}", fit_line(&note, width))
    }

    /// The rows as blocks, for a width no column layout fits: the first
    /// cell, then `header value` pairs wrapped between pairs.
    fn records(&self, width: usize) -> String {
        let mut out = Vec::new();
        for row in &self.rows {
            let mut line = format!(" {}", row[0]);
            for (i, cell) in row.iter().enumerate().skip(1) {
                if cell.is_empty() {
                    continue;
                }
                let pair = format!("{} {cell}", self.header[i]);
                if chars(&line) + 2 + chars(&pair) > width && chars(&line) > 3 {
                    out.push(line);
                    line = format!("   {pair}");
                } else {
                    line = format!("{line}  {pair}");
                }
            }
            out.push(line);
        }
        out.join("\n")
    }
}

/// The width of each prose column `wraps[k]`: its narrowest, and a share
/// of the `spare` columns in proportion to how much wider its content is,
/// none wider than its content.
fn share(spare: usize, wraps: &[usize], narrowest: &[usize], natural: &[usize]) -> Vec<usize> {
    let want: Vec<usize> = wraps
        .iter()
        .zip(narrowest)
        .map(|(&w, &n)| natural[w].saturating_sub(n))
        .collect();
    let total: usize = want.iter().sum::<usize>().max(1);
    (0..wraps.len())
        .map(|k| narrowest[k] + (spare * want[k] / total).min(want[k]))
        .collect()
}

/// Renders `table` fitted to [`width`].
pub fn render(table: &Table) -> String {
    table.render()
}

/// The width of a line of columns this wide: one blank before the first,
/// two between two (comfy-table's padding), none after the last.
fn line_width(widths: impl Iterator<Item = usize>) -> usize {
    let (sum, n) = widths.fold((0, 0), |(s, n), w| (s + w, n + 1));
    if n == 0 {
        0
    } else {
        sum + 2 * n - 1
    }
}

/// The columns `s` takes on a terminal: its characters, less the colour
/// escapes (`ESC [ ... m`).
fn chars(s: &str) -> usize {
    let mut n = 0;
    let mut escape = false;
    for c in s.chars() {
        match (escape, c) {
            (false, '\x1b') => escape = true,
            (true, 'm') => escape = false,
            (true, _) => {}
            (false, _) => n += 1,
        }
    }
    n
}

/// `text` with every line longer than [`width`] wrapped between words (a
/// continuation indented two more than the line), so prose around the
/// tables fits too. A word longer than the width stays whole.
pub fn fit_text(text: &str) -> String {
    match width() {
        Some(w) => fit_text_within(text, w),
        None => text.to_string(),
    }
}

/// [`fit_text`] for a given width.
pub fn fit_text_within(text: &str, width: usize) -> String {
    let fitted: Vec<String> = text.split('\n').map(|l| fit_line(l, width)).collect();
    fitted.join("\n")
}

/// `line` wrapped between words within [`width`], its continuation lines
/// indented by `indent` blanks (for a list whose items' text starts in one
/// column, as `rtlab doctor`'s).
pub fn fit_hanging(line: &str, indent: usize) -> String {
    match width() {
        Some(w) => wrap_line(line, w, &" ".repeat(indent)),
        None => line.to_string(),
    }
}

/// One line wrapped between words within `width`, continued two blanks in
/// from its own indentation.
fn fit_line(line: &str, width: usize) -> String {
    let indent = line.len() - line.trim_start().len();
    wrap_line(line, width, &format!("{}  ", &line[..indent]))
}

/// One line wrapped between words within `width`, its continuation lines
/// starting with `more`; the blanks inside each piece are kept (aligned
/// columns stay aligned). A word longer than the width stays whole.
fn wrap_line(line: &str, width: usize, more: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut prefix = "";
    let mut rest = line;
    loop {
        let room = width.saturating_sub(chars(prefix));
        if chars(rest) <= room {
            out.push(format!("{prefix}{rest}"));
            break;
        }
        // The last blank that keeps the piece within the room, else the
        // first blank after a word.
        let blanks = rest
            .char_indices()
            .filter(|&(i, c)| c == ' ' && !rest[..i].trim().is_empty())
            .map(|(i, _)| i);
        let mut cut = None;
        for i in blanks {
            if cut.is_some() && chars(rest[..i].trim_end()) > room {
                break;
            }
            cut = Some(i);
            if chars(rest[..i].trim_end()) > room {
                break;
            }
        }
        let Some(i) = cut else {
            out.push(format!("{prefix}{rest}"));
            break;
        };
        out.push(format!("{prefix}{}", rest[..i].trim_end()));
        rest = rest[i..].trim_start();
        prefix = more;
        if rest.is_empty() {
            break;
        }
    }
    out.join("\n")
}

/// A duration in ns as a table cell in its unit with at most four
/// significant digits (`2.034 ms`), or `-` when there is none.
pub fn opt_ns(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_string(), ns)
}

/// A duration in ns as a table cell (`26.07 ms`, `800 ns`).
pub fn ns(v: u64) -> String {
    crate::human::duration_ns(v as f64)
}

/// A signed duration in ns as a table cell (`-7.919 ms`).
pub fn signed_ns(v: i64) -> String {
    crate::human::duration_ns(v as f64)
}

/// A fraction as a percentage cell (`83.01 %`).
pub fn percent(fraction: f64) -> String {
    crate::human::percent(fraction)
}

/// A float with at most four significant digits.
pub fn number(f: f64) -> String {
    crate::human::significant(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_table() -> Table {
        let mut t = new(
            &["task", "thread", "released", "R mean", "R max", "skipped"],
            &["released", "R mean", "R max", "skipped"],
        );
        t.add_row([
            "sensor",
            "SCHED_FIFO priority 12",
            "100",
            "2.034 ms",
            "2.225 ms",
            "0",
        ]);
        t.add_row([
            "control",
            "SCHED_FIFO priority 11",
            "50",
            "6.078 ms",
            "6.936 ms",
            "0",
        ]);
        t.optional(&["thread", "skipped"]);
        t
    }

    fn widest(text: &str) -> usize {
        text.lines().map(chars).max().unwrap_or(0)
    }

    #[test]
    fn a_table_without_a_width_shows_every_column_as_wide_as_its_content() {
        let text = run_table().render_within(None);
        assert_eq!(
            text,
            " task     thread                  released    R mean     R max  skipped\n\
             -----------------------------------------------------------------------\n \
             sensor   SCHED_FIFO priority 12       100  2.034 ms  2.225 ms        0\n \
             control  SCHED_FIFO priority 11        50  6.078 ms  6.936 ms        0"
        );
    }

    #[test]
    fn optional_columns_go_first_named_first_and_a_line_says_so() {
        let full = run_table().render_within(None);
        assert_eq!(run_table().render_within(Some(widest(&full))), full);
        let text = run_table().render_within(Some(60));
        assert!(text.lines().all(|l| chars(l) <= 60), "{text}");
        assert!(
            !text.contains("SCHED_FIFO") && text.contains("skipped"),
            "{text}"
        );
        assert!(text.ends_with("(--wide adds: thread)"), "{text}");
        let text = run_table().render_within(Some(40));
        assert!(text.lines().all(|l| chars(l) <= 40), "{text}");
        assert!(text.contains("(--wide adds: thread, skipped)"), "{text}");
        // Every cell that is shown is shown whole.
        for cell in ["2.034 ms", "6.936 ms", "released", "control"] {
            assert!(text.contains(cell), "{cell} in {text}");
        }
    }

    #[test]
    fn a_table_no_layout_fits_is_printed_a_row_per_block_with_whole_cells() {
        let text = run_table().render_within(Some(34));
        assert!(text.lines().all(|l| chars(l) <= 34), "{text}");
        assert!(
            text.starts_with(" sensor\n   thread SCHED_FIFO priority 12\n"),
            "{text}"
        );
        for cell in ["R mean 2.034 ms", "R max 6.936 ms", "released 50"] {
            assert!(text.contains(cell), "{cell} in {text}");
        }
    }

    #[test]
    fn a_prose_column_wraps_between_words_and_keeps_every_word() {
        let mut t = new(&["name", "what it is"], &[]);
        t.add_row([
            "builtin:hartstone-ph",
            "Hartstone PH baseline: 2-32 Hz, 32-2 kilo-whets per period, U = 0.40, RM priorities",
        ]);
        t.wrapping("what it is");
        let full = t.render_within(None);
        assert_eq!(full.lines().count(), 3);
        let fitted = t.render_within(Some(50));
        assert!(fitted.lines().all(|l| chars(l) <= 50), "{fitted}");
        assert!(fitted.lines().count() > 3);
        fn words(s: &str) -> Vec<&str> {
            let mut w: Vec<&str> = s
                .split_whitespace()
                .filter(|w| !w.starts_with('-'))
                .collect();
            w.sort_unstable();
            w
        }
        assert_eq!(words(&fitted), words(&full));
    }

    #[test]
    fn prose_wraps_between_words_under_its_indentation() {
        assert_eq!(
            fit_text_within("   one two three four", 12),
            "   one two\n     three\n     four"
        );
        assert_eq!(fit_text_within("short\n\nlines", 12), "short\n\nlines");
        assert_eq!(
            fit_text_within("averyveryverylongword x", 8),
            "averyveryverylongword\n  x"
        );
    }

    #[test]
    fn a_hanging_line_keeps_its_aligned_blanks_and_continues_under_its_text() {
        assert_eq!(
            wrap_line("[ok] kernel    Linux 6.18 x86_64 HZ=250", 24, "           "),
            "[ok] kernel    Linux\n           6.18 x86_64\n           HZ=250"
        );
        // Colour escapes take no column.
        let tagged = "[\x1b[32mok\x1b[0m] kernel    Linux";
        assert_eq!(wrap_line(tagged, 20, "  "), tagged);
    }

    #[test]
    fn cells_take_their_unit_and_four_significant_digits() {
        assert_eq!(opt_ns(Some(26_073_427)), "26.07 ms");
        assert_eq!(opt_ns(Some(2_000_000)), "2 ms");
        assert_eq!(opt_ns(None), "-");
        assert_eq!(signed_ns(-7_919_000), "-7.919 ms");
        assert_eq!(percent(0.95), "95 %");
        assert_eq!(number(242.04), "242");
    }
}
