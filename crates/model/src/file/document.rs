//! A parsed task-set document in the shape TOML and JSON share: tables
//! (objects), arrays and scalars, each with its byte offset in the text.
//!
//! The grammar is the parsers' (`toml` for TOML, `jsonc-parser` for JSON);
//! this module only converts their trees into one, so that the decoder can
//! check the shape once, in the file's own words, for both formats.
//!
//! JSON is read as JSONC: strict JSON plus `//` and `/* */` comments (no
//! trailing commas, single quotes, bare words or hexadecimal numbers). A
//! UTF-8 byte-order mark is dropped by the caller before parsing.

use super::Format;

/// A value with the byte offset where it starts.
#[derive(Debug)]
pub(super) struct Node {
    /// Byte offset of the value's first character (a TOML array-of-tables
    /// entry starts at its `[[header]]`).
    pub offset: usize,
    /// The value.
    pub value: Value,
}

/// The values both formats have (JSON has no datetime, TOML no null).
#[derive(Debug)]
pub(super) enum Value {
    /// A TOML table or a JSON object, keys in file order (JSON may repeat a key).
    Table(Vec<Entry>),
    /// An array.
    Array(Vec<Node>),
    /// A string, unescaped.
    String(String),
    /// A whole number as written in decimal (`-1`, `10000000`, any size).
    Integer(String),
    /// Any other number as written (`1.5`, `1e40`, `inf`).
    Float(String),
    /// `true` or `false`.
    Boolean(bool),
    /// A TOML date or time.
    Datetime(String),
    /// JSON `null`.
    Null,
}

/// One key of a table and its value.
#[derive(Debug)]
pub(super) struct Entry {
    /// The key, unescaped.
    pub key: String,
    /// Byte offset of the key.
    pub key_offset: usize,
    /// The value.
    pub node: Node,
}

/// A grammar error: where and what, in one line.
#[derive(Debug)]
pub(super) struct SyntaxError {
    /// Byte offset.
    pub offset: usize,
    /// The parser's message, one line.
    pub message: String,
}

/// Parses `text` (without a byte-order mark) as `format`.
pub(super) fn parse(text: &str, format: Format) -> Result<Node, SyntaxError> {
    match format {
        Format::Toml => parse_toml(text),
        Format::Json => parse_json(text, false),
    }
}

/// Parses JSON as json-c reads it (rt-app's parser): JSONC that also
/// allows trailing commas, which rt-app's own examples have.
pub(super) fn parse_json_c(text: &str) -> Result<Node, SyntaxError> {
    parse_json(text, true)
}

fn parse_toml(text: &str) -> Result<Node, SyntaxError> {
    let root = toml::de::DeTable::parse(text).map_err(|e| SyntaxError {
        offset: e.span().map_or(0, |s| s.start),
        // toml's messages can span lines; keep the promise of one line.
        message: e
            .message()
            .trim_end()
            .lines()
            .collect::<Vec<_>>()
            .join("; "),
    })?;
    Ok(Node {
        offset: 0,
        value: toml_table(root.get_ref()),
    })
}

fn toml_table(table: &toml::de::DeTable<'_>) -> Value {
    Value::Table(
        table
            .iter()
            .map(|(key, value)| Entry {
                key: key.get_ref().to_string(),
                key_offset: key.span().start,
                node: toml_node(value),
            })
            .collect(),
    )
}

fn toml_node(value: &toml::Spanned<toml::de::DeValue<'_>>) -> Node {
    use toml::de::DeValue;
    let value_of = match value.get_ref() {
        DeValue::String(s) => Value::String(s.to_string()),
        DeValue::Integer(i) => match i128::from_str_radix(i.as_str(), i.radix()) {
            Ok(n) => Value::Integer(n.to_string()),
            Err(_) => Value::Integer(i.to_string()),
        },
        DeValue::Float(f) => Value::Float(f.as_str().to_string()),
        DeValue::Boolean(b) => Value::Boolean(*b),
        DeValue::Datetime(d) => Value::Datetime(d.to_string()),
        DeValue::Array(items) => Value::Array(items.iter().map(toml_node).collect()),
        DeValue::Table(table) => toml_table(table),
    };
    Node {
        offset: value.span().start,
        value: value_of,
    }
}

fn parse_json(text: &str, trailing_commas: bool) -> Result<Node, SyntaxError> {
    use jsonc_parser::{CollectOptions, ParseOptions};
    // JSON plus comments; everything else JSON5-ish stays an error.
    let options = ParseOptions {
        allow_comments: true,
        allow_loose_object_property_names: false,
        allow_trailing_commas: trailing_commas,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    };
    let parsed =
        jsonc_parser::parse_to_ast(text, &CollectOptions::default(), &options).map_err(|e| {
            let message = e.kind().to_string();
            let mut chars = message.chars();
            SyntaxError {
                offset: e.range().start,
                message: match chars.next() {
                    Some(first) => first.to_lowercase().chain(chars).collect(),
                    None => message,
                },
            }
        })?;
    match parsed.value {
        Some(value) => Ok(json_node(&value)),
        None => Err(SyntaxError {
            offset: 0,
            message: "the file has no JSON value (expected an object with a `task` array)".into(),
        }),
    }
}

fn json_node(value: &jsonc_parser::ast::Value<'_>) -> Node {
    use jsonc_parser::ast::Value as J;
    use jsonc_parser::common::Ranged;
    let value_of = match value {
        J::StringLit(s) => Value::String(s.value.to_string()),
        J::NumberLit(n) => {
            let digits = n.value.strip_prefix('-').unwrap_or(n.value);
            if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                Value::Integer(n.value.to_string())
            } else {
                Value::Float(n.value.to_string())
            }
        }
        J::BooleanLit(b) => Value::Boolean(b.value),
        J::NullKeyword(_) => Value::Null,
        J::Array(array) => Value::Array(array.elements.iter().map(json_node).collect()),
        J::Object(object) => Value::Table(
            object
                .properties
                .iter()
                .map(|prop| Entry {
                    key: prop.name.as_str().to_string(),
                    key_offset: prop.name.start(),
                    node: json_node(&prop.value),
                })
                .collect(),
        ),
    };
    Node {
        offset: value.start(),
        value: value_of,
    }
}

impl Node {
    /// The value of `key` in this table, if it is one and has it (the first,
    /// when JSON repeats a key).
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Value::Table(entries) => entries.iter().find(|e| e.key == key).map(|e| &e.node),
            _ => None,
        }
    }

    /// Element `index` of this array.
    pub fn at(&self, index: usize) -> Option<&Node> {
        match &self.value {
            Value::Array(items) => items.get(index),
            _ => None,
        }
    }
}
