//! Bounds on an XML document's shape, checked in one pass over its bytes
//! before it is parsed.
//!
//! `roxmltree` builds a tree of any depth and checks each attribute against
//! every earlier one of its element, so a 210 KB file of 30,000 nested
//! elements overflowed the stack and 300,000 attributes on one element took
//! 184 s (issue 24). A SimSo configuration is four elements deep with about
//! twenty attributes to an element; these limits are far above any real one
//! and far below a harmful one.

/// Deepest element nesting accepted.
pub const MAX_DEPTH: usize = 64;
/// Most attributes accepted on one element.
pub const MAX_ATTRIBUTES: usize = 256;
/// Most elements accepted in one document (an 8 MiB file of empty elements
/// holds two million).
pub const MAX_ELEMENTS: usize = 1_000_000;

/// The first place where `text` breaks a limit, as a byte offset and the
/// words saying which; `None` when it keeps them all. Comments, CDATA
/// sections, processing instructions and declarations are skipped; quoted
/// attribute values may hold `>` and `=`. What is not well-formed is left
/// to the parser, which reports it. Linear in the length of `text`.
pub fn first_excess(text: &str) -> Option<(usize, String)> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut elements = 0usize;
    let mut i = 0;
    while let Some(found) = text[i..].find('<') {
        let start = i + found;
        let rest = &text[start..];
        let skip_to = |end: &str| rest.find(end).map(|k| start + k + end.len());
        let next = if rest.starts_with("<!--") {
            skip_to("-->")
        } else if rest.starts_with("<![CDATA[") {
            skip_to("]]>")
        } else if rest.starts_with("<?") {
            skip_to("?>")
        } else if rest.starts_with("<!") || rest.starts_with("</") {
            if rest.starts_with("</") {
                depth = depth.saturating_sub(1);
            }
            skip_to(">")
        } else {
            depth += 1;
            elements += 1;
            if depth > MAX_DEPTH {
                return Some((
                    start,
                    format!("elements nested more than {MAX_DEPTH} deep (a SimSo configuration is 4 deep)"),
                ));
            }
            if elements > MAX_ELEMENTS {
                return Some((
                    start,
                    format!("more than {MAX_ELEMENTS} elements in one document"),
                ));
            }
            let (end, attributes) = tag_end(bytes, start + 1);
            if attributes > MAX_ATTRIBUTES {
                return Some((
                    start,
                    format!("an element with more than {MAX_ATTRIBUTES} attributes"),
                ));
            }
            let end = end?;
            if bytes[end - 1] == b'/' {
                depth -= 1;
            }
            Some(end + 1)
        };
        i = next?;
    }
    None
}

/// The offset of the `>` closing the tag whose name starts at `from`, and
/// how many attributes (unquoted `=`) the tag holds (no offset when the
/// text ends first).
fn tag_end(bytes: &[u8], from: usize) -> (Option<usize>, usize) {
    let mut quote = None;
    let mut attributes = 0;
    for (k, &b) in bytes.iter().enumerate().skip(from) {
        match (quote, b) {
            (Some(q), _) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(b),
            (None, b'=') => attributes += 1,
            (None, b'>') => return (Some(k), attributes),
            (None, _) => {}
        }
    }
    (None, attributes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_simso_file_is_well_inside() {
        let text = "<?xml version=\"1.0\"?>\n<!-- a > b -->\n<simulation a=\"x>y\" b='=='>\
            <tasks><task name=\"t\" period=\"10\"/><![CDATA[<<<]]></tasks></simulation>";
        assert_eq!(first_excess(text), None);
    }

    #[test]
    fn depth_attributes_and_elements_are_bounded() {
        let deep = format!("{}{}", "<a>".repeat(MAX_DEPTH), "</a>".repeat(MAX_DEPTH));
        assert_eq!(first_excess(&deep), None);
        let deeper = format!("<r>{deep}</r>");
        let (at, why) = first_excess(&format!("<x/>{deeper}")).unwrap();
        assert_eq!(at, 4 + 3 * MAX_DEPTH);
        assert!(
            why.starts_with("elements nested more than 64 deep"),
            "{why}"
        );

        let attrs = |n: usize| {
            let a: String = (0..n).map(|k| format!(" a{k}=\"{k}\"")).collect();
            format!("<r><e{a}/></r>")
        };
        assert_eq!(first_excess(&attrs(MAX_ATTRIBUTES)), None);
        let refused = Some((3, "an element with more than 256 attributes".to_string()));
        assert_eq!(first_excess(&attrs(MAX_ATTRIBUTES + 1)), refused);
        let unclosed = attrs(MAX_ATTRIBUTES + 1);
        assert_eq!(first_excess(&unclosed[..unclosed.len() - 6]), refused);
        let many = "<e/>".repeat(MAX_ELEMENTS + 1);
        assert_eq!(first_excess(&many).map(|e| e.0), Some(4 * MAX_ELEMENTS));
    }
}
