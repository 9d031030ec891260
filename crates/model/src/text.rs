//! Names as text on a terminal, in a table cell or in a spreadsheet.
//!
//! Task, resource and set names come from files, so they may hold anything
//! UTF-8 allows: a newline that breaks a table row, an escape sequence that
//! recolours the terminal, a bidirectional override that shows the text after
//! it reversed, an invisible character that makes two different names print
//! alike. [`printable`] is what every human-readable output of a name goes
//! through (tables, headlines, error messages, SVG and HTML text); JSON output
//! is escaped by its serializer and keeps the name as written. [`csv_cell`]
//! is what every CSV cell holding a name goes through.

use std::borrow::Cow;

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// `text` with every character that a terminal does not show as itself
/// written as a Rust-style escape: `\n`, `\r`, `\t`, otherwise `\u{1b}`,
/// `\u{202e}`. Escaped are the control characters (category Cc: C0, DEL,
/// C1), the format characters (category Cf: bidi controls, zero-width
/// space and joiners, soft hyphen, tags, ...), the line and paragraph
/// separators (Zl, Zp) and every Default_Ignorable_Code_Point of Unicode's
/// DerivedCoreProperties.txt (Hangul fillers, variation selectors,
/// U+034F, ...), which render as nothing. Everything else, backslashes
/// and combining marks included, is kept as it is, so the function is
/// idempotent and borrows when nothing needs escaping.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if needs_escape(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// True for a character [`printable`] escapes.
pub fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c.general_category(),
            GeneralCategory::Format
                | GeneralCategory::LineSeparator
                | GeneralCategory::ParagraphSeparator
        )
        || is_default_ignorable(c)
}

/// Default_Ignorable_Code_Point, from Unicode 16's DerivedCoreProperties.txt
/// (unchanged since Unicode 9). Hand-listed: no small crate exports the
/// property (`unicode-security` holds the table privately, `icu_properties`
/// is a large dependency for 17 ranges).
fn is_default_ignorable(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{061C}'
            | '\u{115F}'..='\u{1160}'
            | '\u{17B4}'..='\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{FFF0}'..='\u{FFF8}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0000}'..='\u{E0FFF}'
    )
}

/// `text` as a CSV cell a spreadsheet will not run: a name that starts with
/// `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'`, as
/// OWASP's "CSV Injection" page advises (Excel, LibreOffice and Google
/// Sheets read such a cell as a formula). The CSV writer quotes the cell as
/// CSV needs; the `'` is part of the value, so a program reading the file
/// back sees `'=cmd`. Only for cells holding text from a file (names):
/// numbers keep their sign.
pub fn csv_cell(text: &str) -> Cow<'_, str> {
    match text.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => Cow::Owned(format!("'{text}")),
        _ => Cow::Borrowed(text),
    }
}

/// The form two names are compared in to tell whether they print alike:
/// NFKC normalization (so NFC `café` and NFD `cafe\u{301}`, or `ﬁ` and
/// `fi`, meet), then the confusable skeleton of Unicode Technical Standard
/// #39, section 4 (so Cyrillic `а` and Latin `a`, or `rn` and `m`, meet;
/// default-ignorable characters drop out). Two names with the same key are
/// names a reader cannot tell apart.
pub fn lookalike_key(name: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let normalized: String = name.nfkc().collect();
    unicode_security::skeleton(&normalized).collect()
}

/// `name` spelled so that two look-alike names differ on screen: ASCII
/// letters, digits and punctuation as they are, every other character as
/// `U+XXXX`, e.g. `caf<U+E9>` against `cafe<U+301>`.
pub fn spelled(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_graphic() || c == ' ' {
            out.push(c);
        } else {
            out.push_str(&format!("<U+{:X}>", c as u32));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_controls_and_bidi_and_keeps_the_rest() {
        assert_eq!(printable("a\nb\tc\r"), "a\\nb\\tc\\r");
        assert_eq!(printable("bell\u{7}\u{1b}[31m"), "bell\\u{7}\\u{1b}[31m");
        assert_eq!(printable("\u{202e}evil\u{2066}"), "\\u{202e}evil\\u{2066}");
        assert_eq!(printable("\u{85}\u{7f}\u{feff}"), "\\u{85}\\u{7f}\\u{feff}");
        for kept in [
            "plain",
            "µs-task",
            "日本語",
            "a\\nb",
            "e\u{301}",
            "it's \"q\"",
            "한글",
        ] {
            assert!(matches!(printable(kept), Cow::Borrowed(_)), "{kept}");
        }
    }

    /// The format and default-ignorable characters of issue 24, each of
    /// which printed as nothing (or as a blank) in a table.
    #[test]
    fn escapes_every_invisible_character() {
        for (c, escaped) in [
            ('\u{AD}', "\\u{ad}"),
            ('\u{34F}', "\\u{34f}"),
            ('\u{115F}', "\\u{115f}"),
            ('\u{17B4}', "\\u{17b4}"),
            ('\u{3164}', "\\u{3164}"),
            ('\u{FE0F}', "\\u{fe0f}"),
            ('\u{FFA0}', "\\u{ffa0}"),
            ('\u{E0041}', "\\u{e0041}"),
            ('\u{200B}', "\\u{200b}"),
            ('\u{600}', "\\u{600}"),
            ('\u{2029}', "\\u{2029}"),
        ] {
            assert_eq!(printable(&format!("a{c}b")), format!("a{escaped}b"));
        }
    }

    #[test]
    fn csv_cells_that_a_spreadsheet_would_run_get_a_quote() {
        for (name, cell) in [
            ("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"),
            ("+1", "'+1"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tx", "'\tx"),
            ("\rx", "'\rx"),
            ("t1", "t1"),
            ("a=b", "a=b"),
            ("", ""),
        ] {
            assert_eq!(csv_cell(name), cell);
        }
    }

    #[test]
    fn lookalike_keys_meet_for_names_that_print_alike() {
        assert_eq!(lookalike_key("caf\u{e9}"), lookalike_key("cafe\u{301}"));
        assert_eq!(lookalike_key("\u{430}"), lookalike_key("a"));
        assert_eq!(lookalike_key("t\u{200b}1"), lookalike_key("t1"));
        assert_ne!(lookalike_key("t1"), lookalike_key("t2"));
        assert_eq!(lookalike_key("t1"), lookalike_key("tl"));
        // Generated names t0, t1, ..., t99 stay distinct.
        let keys: std::collections::HashSet<String> =
            (0..100).map(|k| lookalike_key(&format!("t{k}"))).collect();
        assert_eq!(keys.len(), 100);
        assert_eq!(spelled("caf\u{e9}"), "caf<U+E9>");
    }

    proptest::proptest! {
        /// The output has no character that needs escaping, escaping twice
        /// changes nothing, and it is one line.
        #[test]
        fn output_is_one_clean_line(text in "\\PC*|[\\x00-\\x1f\\u{200b}-\\u{202e}\\u{ad}\\u{3164}\\u{e0041}a\\\\]*") {
            let once = printable(&text).into_owned();
            proptest::prop_assert!(!once.chars().any(needs_escape));
            proptest::prop_assert!(!once.contains('\n'));
            proptest::prop_assert_eq!(printable(&once), once.as_str());
        }
    }
}
