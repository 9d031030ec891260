//! Names as text on a terminal.
//!
//! Task, resource and set names come from files, so they may hold anything
//! UTF-8 allows: a newline that breaks a table row, an escape sequence that
//! recolours the terminal, a bidirectional override that shows the text after
//! it reversed. [`printable`] is what every human-readable output of a name
//! goes through (tables, headlines, error messages); JSON output is escaped by
//! its serializer and keeps the name as written.

use std::borrow::Cow;

/// `text` with every control character (Unicode category Cc: C0, DEL, C1)
/// and every invisible formatting character that can reorder or hide text
/// (U+061C, U+180E, U+200B..=U+200F, U+2028..=U+202E, U+2060..=U+206F,
/// U+FEFF, U+FFF9..=U+FFFB) written as a Rust-style escape: `\n`, `\r`, `\t`,
/// otherwise `\u{1b}`, `\u{202e}`. Everything else, backslashes included, is
/// kept as it is, so the function is idempotent and borrows when nothing
/// needs escaping.
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

fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
        )
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
        ] {
            assert!(matches!(printable(kept), Cow::Borrowed(_)), "{kept}");
        }
    }

    proptest::proptest! {
        /// The output has no character that needs escaping, escaping twice
        /// changes nothing, and it is one line.
        #[test]
        fn output_is_one_clean_line(text in "\\PC*|[\\x00-\\x1f\\u{200b}-\\u{202e}a\\\\]*") {
            let once = printable(&text).into_owned();
            proptest::prop_assert!(!once.chars().any(needs_escape));
            proptest::prop_assert!(!once.contains('\n'));
            proptest::prop_assert_eq!(printable(&once), once.as_str());
        }
    }
}
