//! The layout of a trace event's record, read from its tracefs `format`
//! file (`events/SYSTEM/NAME/format`), e.g.
//!
//! ```text
//! name: sched_switch
//! ID: 372
//! format:
//!     field:unsigned short common_type;   offset:0;   size:2; signed:0;
//!     ...
//!     field:pid_t prev_pid;   offset:24;  size:4; signed:1;
//! ```
//!
//! Offsets differ between kernels (`sched_migrate_task`'s `comm` became a
//! `__data_loc` string in 6.x), so the decoder never assumes them.

use std::collections::BTreeMap;

/// Where one field of an event's record lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// Byte offset in the record (after the ring buffer's event header).
    pub offset: usize,
    /// Size in bytes.
    pub size: usize,
    /// A `__data_loc` field: a u32 holding (length << 16 | offset) of the
    /// real data.
    pub data_loc: bool,
}

/// One event's id and field layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventFormat {
    /// `sched_switch`, ...
    pub name: String,
    /// The id in the record's `common_type`.
    pub id: u16,
    /// Fields by name.
    pub fields: BTreeMap<String, Field>,
}

impl EventFormat {
    /// Parses a `format` file's text; `None` when it has no name or id.
    pub fn parse(text: &str) -> Option<EventFormat> {
        let mut name = None;
        let mut id = None;
        let mut fields = BTreeMap::new();
        for line in text.lines() {
            let line = line.trim();
            if let Some(n) = line.strip_prefix("name:") {
                name = Some(n.trim().to_string());
            } else if let Some(i) = line.strip_prefix("ID:") {
                id = i.trim().parse().ok();
            } else if let Some(rest) = line.strip_prefix("field:") {
                if let Some((field_name, field)) = parse_field(rest) {
                    fields.insert(field_name, field);
                }
            }
        }
        Some(EventFormat {
            name: name?,
            id: id?,
            fields,
        })
    }

    /// The field named `name`.
    pub fn field(&self, name: &str) -> Option<Field> {
        self.fields.get(name).copied()
    }
}

/// `unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;`
fn parse_field(rest: &str) -> Option<(String, Field)> {
    let mut parts = rest.split(';').map(str::trim);
    let decl = parts.next()?;
    let data_loc = decl.starts_with("__data_loc");
    // The name is the declaration's last word, without any `[N]`.
    let last = decl.split_whitespace().last()?;
    let name = last.split('[').next()?.to_string();
    let mut offset = None;
    let mut size = None;
    for p in parts {
        if let Some(v) = p.strip_prefix("offset:") {
            offset = v.trim().parse().ok();
        } else if let Some(v) = p.strip_prefix("size:") {
            size = v.trim().parse().ok();
        }
    }
    Some((
        name,
        Field {
            offset: offset?,
            size: size?,
            data_loc,
        },
    ))
}

/// Reads a little-endian integer of `field.size` bytes (1, 2, 4 or 8) from
/// `record`, sign-extended when `signed`; `None` past the end.
pub fn read_int(record: &[u8], field: Field, signed: bool) -> Option<i64> {
    let bytes = record.get(field.offset..field.offset.checked_add(field.size)?)?;
    Some(match (bytes.len(), signed) {
        (1, true) => i64::from(bytes[0] as i8),
        (1, false) => i64::from(bytes[0]),
        (2, true) => i64::from(i16::from_le_bytes(bytes.try_into().ok()?)),
        (2, false) => i64::from(u16::from_le_bytes(bytes.try_into().ok()?)),
        (4, true) => i64::from(i32::from_le_bytes(bytes.try_into().ok()?)),
        (4, false) => i64::from(u32::from_le_bytes(bytes.try_into().ok()?)),
        (8, _) => i64::from_le_bytes(bytes.try_into().ok()?),
        _ => return None,
    })
}

/// Reads a string field: a fixed `char[N]` or a `__data_loc char[]`, up to
/// its first NUL.
pub fn read_str(record: &[u8], field: Field) -> Option<&[u8]> {
    let bytes = if field.data_loc {
        let loc = read_int(record, field, false)? as u32;
        let (off, len) = ((loc & 0xffff) as usize, (loc >> 16) as usize);
        record.get(off..off + len)?
    } else {
        record.get(field.offset..field.offset.checked_add(field.size)?)?
    };
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    Some(&bytes[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    const SWITCH: &str = "name: sched_switch\nID: 372\nformat:\n\
        \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
        \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
        \tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
        \tfield:__data_loc char[] name;\toffset:12;\tsize:4;\tsigned:0;\n\
        \nprint fmt: \"prev_comm=%s\"\n";

    #[test]
    fn a_format_file_gives_the_id_and_each_fields_place() {
        let f = EventFormat::parse(SWITCH).unwrap();
        assert_eq!((f.name.as_str(), f.id), ("sched_switch", 372));
        assert_eq!(
            f.field("prev_comm"),
            Some(Field {
                offset: 8,
                size: 16,
                data_loc: false
            })
        );
        assert!(f.field("name").unwrap().data_loc);
        assert_eq!(f.field("common_pid").unwrap().offset, 4);
    }

    #[test]
    fn strings_stop_at_nul_and_data_loc_points_elsewhere() {
        let mut rec = vec![0u8; 32];
        rec[8..12].copy_from_slice(&((3u32 << 16) | 20).to_le_bytes());
        rec[20..23].copy_from_slice(b"eth");
        let loc = Field {
            offset: 8,
            size: 4,
            data_loc: true,
        };
        assert_eq!(read_str(&rec, loc), Some(&b"eth"[..]));
        rec[0..2].copy_from_slice(&(-2i16).to_le_bytes());
        let f = Field {
            offset: 0,
            size: 2,
            data_loc: false,
        };
        assert_eq!(read_int(&rec, f, true), Some(-2));
        assert_eq!(read_int(&rec, f, false), Some(65534));
    }
}
