//! A recorded trace read back: every event of every traced CPU, in time
//! order.

use std::collections::BTreeMap;
use std::path::Path;

use crate::decode::{Decoder, Event};
use crate::error::TraceError;
use crate::recorder::{TraceHeader, MAGIC};

/// At most this many events are decoded (about 80 bytes each): a longer
/// trace is cut there, and says so ([`Trace::truncated`]).
pub const MAX_EVENTS: usize = 8_000_000;

/// A decoded trace.
#[derive(Debug, Clone)]
pub struct Trace {
    /// The file's header.
    pub header: TraceHeader,
    /// Every event, by time (ties: by CPU).
    pub events: Vec<Event>,
    /// IRQ line -> handler name.
    pub irq_names: BTreeMap<i32, String>,
    /// Pages the kernel flagged as following lost events.
    pub pages_after_loss: u64,
    /// Events the kernel said were lost (where it stored the count).
    pub lost_in_pages: u64,
    /// Records not decoded (events rtlab does not use, or cut short).
    pub skipped: u64,
    /// Decoding stopped at [`MAX_EVENTS`].
    pub truncated: bool,
}

impl Trace {
    /// Reads and decodes a trace file written by [`crate::Recording`].
    pub fn load(path: &Path) -> Result<Trace, TraceError> {
        let bytes = std::fs::read(path).map_err(|source| TraceError::Io {
            what: format!("read {}", path.display()),
            source,
        })?;
        Trace::decode(&bytes).map_err(|why| TraceError::NotATrace {
            path: path.display().to_string(),
            why,
        })
    }

    /// Decodes a trace file's bytes.
    pub fn decode(bytes: &[u8]) -> Result<Trace, String> {
        let rest = bytes
            .strip_prefix(MAGIC)
            .ok_or_else(|| "it does not start with `rtlab-ktrace 1`".to_string())?;
        let len = rest
            .get(0..4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .ok_or("no header")?;
        let header: TraceHeader =
            serde_json::from_slice(rest.get(4..4 + len).ok_or("header cut short")?)
                .map_err(|e| format!("header: {e}"))?;
        let mut decoder = Decoder::new(header.formats.iter().map(String::as_str));
        let mut per_cpu: BTreeMap<u32, Vec<Event>> = BTreeMap::new();
        let (mut after_loss, mut lost, mut skipped, mut count) = (0, 0, 0, 0usize);
        let mut truncated = false;
        let mut at = 4 + len;
        while at + 8 <= rest.len() {
            let cpu = u32::from_le_bytes(rest[at..at + 4].try_into().unwrap_or_default());
            let n =
                u32::from_le_bytes(rest[at + 4..at + 8].try_into().unwrap_or_default()) as usize;
            let Some(page) = rest.get(at + 8..at + 8 + n) else {
                break;
            };
            at += 8 + n;
            let out = per_cpu.entry(cpu).or_default();
            let info = decoder.page(page, cpu, out);
            after_loss += u64::from(info.missed_before);
            lost += info.missed_count;
            skipped += info.skipped;
            count += info.events as usize;
            if count >= MAX_EVENTS {
                truncated = true;
                break;
            }
        }
        let mut events: Vec<Event> = per_cpu.into_values().flatten().collect();
        events.sort_by_key(|e| (e.ts, e.cpu));
        Ok(Trace {
            header,
            events,
            irq_names: decoder.irq_names,
            pages_after_loss: after_loss,
            lost_in_pages: lost,
            skipped,
            truncated,
        })
    }
}
