//! Decoding the kernel's binary ring-buffer pages (`per_cpu/cpuN/trace_pipe_raw`)
//! into scheduling events, with the layouts of the `format` files.
//!
//! A page (a "sub-buffer", `buffer_subbuf_size_kb`) is, as
//! `events/header_page` and `events/header_event` describe it and
//! `kernel/trace/ring_buffer.c` writes it:
//!
//! ```text
//! u64 timestamp          time of the page's first event (the trace clock)
//! u64 commit             bytes of data; bit 31: events were lost before
//!                        this page, bit 30: their count is stored after the data
//! data: events, each     u32 header: type_len (5 bits) | time_delta (27 bits) << 5
//!   type_len 1..=28      the record is type_len * 4 bytes
//!   type_len 0           the next u32 is the length (itself included), then the record
//!   type_len 29          padding: the next u32 is its length (delta 0: the page's end)
//!   type_len 30          time extend: delta += next u32 << 27
//!   type_len 31          absolute time stamp: (next u32 << 27 | delta)
//! ```
//!
//! Each record starts with `common_type` (u16, the event's id) and
//! `common_pid`; the fields follow at the `format` file's offsets. Times
//! are the instance's trace clock; rtlab sets it to `mono`, so events are
//! CLOCK_MONOTONIC nanoseconds like the executor's own times.

use std::collections::BTreeMap;

use crate::format::{read_int, read_str, EventFormat};

/// A thread's name as the kernel keeps it (`TASK_COMM_LEN` = 16 bytes).
#[derive(Clone, Copy, PartialEq, Eq, Default, PartialOrd, Ord, Hash)]
pub struct Comm([u8; 16]);

impl Comm {
    /// From bytes, cut at 15 (the kernel's limit) .
    pub fn new(bytes: &[u8]) -> Comm {
        let mut c = [0u8; 16];
        let n = bytes.len().min(15);
        c[..n].copy_from_slice(&bytes[..n]);
        Comm(c)
    }

    /// The name as text (lossy).
    pub fn as_string(&self) -> String {
        let end = self.0.iter().position(|&b| b == 0).unwrap_or(16);
        String::from_utf8_lossy(&self.0[..end]).into_owned()
    }
}

impl std::fmt::Debug for Comm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.as_string())
    }
}

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `sched_switch`: `prev` left the CPU (in `prev_state`: 0 = runnable,
    /// i.e. preempted or throttled), `next` took it. Priorities are the
    /// kernel's: -1 SCHED_DEADLINE, 0..=99 real-time (99 - rt_priority),
    /// 100..=139 SCHED_OTHER.
    Switch {
        /// The thread that left.
        prev_pid: i32,
        /// Its kernel priority.
        prev_prio: i32,
        /// Its state (0: runnable).
        prev_state: i64,
        /// Its name.
        prev_comm: Comm,
        /// The thread that took the CPU (0: idle).
        next_pid: i32,
        /// Its kernel priority.
        next_prio: i32,
        /// Its name.
        next_comm: Comm,
    },
    /// `sched_waking`: a wake-up of `pid` began (on the waker's CPU).
    Waking {
        /// The woken thread.
        pid: i32,
        /// The CPU it will run on.
        target_cpu: i32,
    },
    /// `sched_wakeup`: `pid` is on a run queue.
    Wakeup {
        /// The woken thread.
        pid: i32,
        /// The CPU it was queued on.
        target_cpu: i32,
    },
    /// `sched_migrate_task`.
    Migrate {
        /// The thread.
        pid: i32,
        /// Where it goes.
        dest_cpu: i32,
    },
    /// `irq_handler_entry`.
    IrqEntry {
        /// The interrupt line.
        irq: i32,
    },
    /// `irq_handler_exit`.
    IrqExit {
        /// The interrupt line.
        irq: i32,
    },
    /// `softirq_entry`.
    SoftirqEntry {
        /// The softirq vector (0 HI, 1 TIMER, 2 NET_TX, 3 NET_RX, 4 BLOCK,
        /// 5 IRQ_POLL, 6 TASKLET, 7 SCHED, 8 HRTIMER, 9 RCU).
        vec: u32,
    },
    /// `softirq_exit`.
    SoftirqExit {
        /// The softirq vector.
        vec: u32,
    },
    /// `sched_stat_runtime`: `pid` was charged `runtime` ns.
    Runtime {
        /// The thread.
        pid: i32,
        /// CPU time charged, ns.
        runtime: u64,
    },
    /// `hrtimer_expire_entry`: a high-resolution timer's handler starts
    /// (the kernel's instant of a timed release). Only in recordings that
    /// ask for it ([`TIMER_EVENTS`]).
    HrtimerExpire {
        /// The timer (its address).
        hrtimer: u64,
    },
    /// `irq_vectors/reschedule_entry` (x86): another CPU asked this one to
    /// reschedule, e.g. to run a thread it woke or unthrottled.
    Reschedule,
    /// `hrtimer_start`: a timer was armed for `expires` (the timer's clock, ns).
    HrtimerStart {
        /// The timer (its address).
        hrtimer: u64,
        /// When it is due.
        expires: u64,
    },
    /// `raw_syscalls/sys_enter`: the current thread entered the kernel by
    /// system call `id` ([`SYSCALL_EVENTS`]).
    SysEnter {
        /// The system call's number.
        id: i64,
    },
    /// `raw_syscalls/sys_exit`: the current thread returns to user space
    /// from system call `id`.
    SysExit {
        /// The system call's number.
        id: i64,
    },
}

/// One decoded event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// Trace-clock time, ns.
    pub ts: u64,
    /// The CPU whose buffer held it.
    pub cpu: u32,
    /// The thread current on that CPU when it was recorded (`common_pid`;
    /// 0: idle), the interrupted one for an event of an interrupt. The
    /// kernel does not always record a switch away from idle (see
    /// [`crate::schedule`]); this is how the schedule still knows who ran.
    pub pid: i32,
    /// What happened.
    pub kind: Kind,
}

/// The names of the softirq vectors, by number.
pub const SOFTIRQ_NAMES: [&str; 10] = [
    "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
];

/// The events rtlab enables, as `SYSTEM/NAME`; the first two are required,
/// the others are used when the kernel has them. `sched_stat_runtime` is
/// decoded but not enabled: it fires at every update of a thread's CPU
/// time, which a job burning its WCET by reading its CPU-time clock does
/// hundreds of thousands of times a second (1.7 million events in a 3 s
/// Hartstone run, 220 MiB), drowning the rest and perturbing the run.
/// `hrtimer_expire_entry` (one per timed release, tick, and budget
/// replenishment) and `reschedule_entry` (x86's rescheduling interrupt,
/// sent e.g. when the RT period timer on another CPU unthrottles this one)
/// mark when an idle CPU woke for a thread whose switch-in the kernel did
/// not record, e.g. a SCHED_DEADLINE thread resumed by its replenishment
/// timer ([`crate::schedule`]).
pub const EVENTS: [&str; 10] = [
    "sched/sched_switch",
    "sched/sched_wakeup",
    "sched/sched_waking",
    "sched/sched_migrate_task",
    "irq/irq_handler_entry",
    "irq/irq_handler_exit",
    "irq/softirq_entry",
    "irq/softirq_exit",
    "timer/hrtimer_expire_entry",
    "irq_vectors/reschedule_entry",
];

/// The timer events a recording may add to [`EVENTS`] (`characterize
/// --kernel-trace`): the expiry is where a timed release starts.
pub const TIMER_EVENTS: [&str; 2] = ["timer/hrtimer_expire_entry", "timer/hrtimer_start"];

/// The system-call events a recording may add to [`EVENTS`]: where a
/// thread leaves user space and returns to it, the ends of the costs that
/// `characterize --kernel-trace` times.
pub const SYSCALL_EVENTS: [&str; 2] = ["raw_syscalls/sys_enter", "raw_syscalls/sys_exit"];

/// What a page said besides its events.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PageInfo {
    /// Events decoded.
    pub events: u64,
    /// The kernel flagged events lost before this page.
    pub missed_before: bool,
    /// The number lost, when the kernel stored it (else 0).
    pub missed_count: u64,
    /// Records of events rtlab does not decode, or cut short.
    pub skipped: u64,
}

/// Turns records into [`Event`]s with the event formats of one kernel.
#[derive(Debug, Clone, Default)]
pub struct Decoder {
    by_id: BTreeMap<u16, (Which, EventFormat)>,
    /// IRQ line -> handler name, as seen in `irq_handler_entry`.
    pub irq_names: BTreeMap<i32, String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    Switch,
    Waking,
    Wakeup,
    Migrate,
    IrqEntry,
    IrqExit,
    SoftirqEntry,
    SoftirqExit,
    Runtime,
    HrtimerExpire,
    Reschedule,
    HrtimerStart,
    SysEnter,
    SysExit,
}

const COMMIT_MISSED_EVENTS: u64 = 1 << 31;
const COMMIT_MISSED_STORED: u64 = 1 << 30;
const COMMIT_FLAGS: u64 = COMMIT_MISSED_EVENTS | COMMIT_MISSED_STORED;

impl Decoder {
    /// A decoder for the given `format` files' contents (unknown events
    /// are ignored).
    pub fn new<'a>(formats: impl IntoIterator<Item = &'a str>) -> Decoder {
        let mut by_id = BTreeMap::new();
        for text in formats {
            let Some(f) = EventFormat::parse(text) else {
                continue;
            };
            let which = match f.name.as_str() {
                "sched_switch" => Which::Switch,
                "sched_waking" => Which::Waking,
                "sched_wakeup" => Which::Wakeup,
                "sched_migrate_task" => Which::Migrate,
                "irq_handler_entry" => Which::IrqEntry,
                "irq_handler_exit" => Which::IrqExit,
                "softirq_entry" => Which::SoftirqEntry,
                "softirq_exit" => Which::SoftirqExit,
                "sched_stat_runtime" => Which::Runtime,
                "hrtimer_expire_entry" => Which::HrtimerExpire,
                "reschedule_entry" => Which::Reschedule,
                "hrtimer_start" => Which::HrtimerStart,
                "sys_enter" => Which::SysEnter,
                "sys_exit" => Which::SysExit,
                _ => continue,
            };
            by_id.insert(f.id, (which, f));
        }
        Decoder {
            by_id,
            irq_names: BTreeMap::new(),
        }
    }

    /// Decodes one page of CPU `cpu` into `out` (appended in time order).
    pub fn page(&mut self, page: &[u8], cpu: u32, out: &mut Vec<Event>) -> PageInfo {
        let mut info = PageInfo::default();
        let (Some(ts), Some(commit)) = (u64_at(page, 0), u64_at(page, 8)) else {
            return info;
        };
        let mut ts = ts;
        let len = ((commit & !COMMIT_FLAGS) as usize).min(page.len().saturating_sub(16));
        let data = &page[16..16 + len];
        info.missed_before = commit & COMMIT_MISSED_EVENTS != 0;
        if commit & COMMIT_MISSED_STORED != 0 {
            info.missed_count = u64_at(page, 16 + len).unwrap_or(0);
        }
        let mut i = 0;
        while i + 4 <= data.len() {
            let header = u32_at(data, i).unwrap_or(0);
            i += 4;
            let type_len = header & 31;
            let delta = u64::from(header >> 5);
            match type_len {
                29 => {
                    if delta == 0 {
                        break;
                    }
                    let Some(n) = u32_at(data, i) else { break };
                    ts += delta;
                    i += n as usize;
                }
                30 => {
                    let Some(ext) = u32_at(data, i) else { break };
                    ts += (u64::from(ext) << 27) + delta;
                    i += 4;
                }
                31 => {
                    let Some(ext) = u32_at(data, i) else { break };
                    let stamp = (u64::from(ext) << 27) | delta;
                    ts = (ts & !((1u64 << 59) - 1)) | stamp;
                    i += 4;
                }
                _ => {
                    let size = if type_len == 0 {
                        let Some(n) = u32_at(data, i) else { break };
                        i += 4;
                        (n as usize).saturating_sub(4)
                    } else {
                        type_len as usize * 4
                    };
                    ts += delta;
                    let Some(record) = data.get(i..i + size) else {
                        info.skipped += 1;
                        break;
                    };
                    i += size;
                    match self.record(record) {
                        Some((pid, kind)) => {
                            out.push(Event { ts, cpu, pid, kind });
                            info.events += 1;
                        }
                        None => info.skipped += 1,
                    }
                }
            }
        }
        info
    }

    fn record(&mut self, r: &[u8]) -> Option<(i32, Kind)> {
        let id = u16::from_le_bytes(r.get(0..2)?.try_into().ok()?);
        let (which, f) = self.by_id.get(&id)?;
        let pid = f
            .field("common_pid")
            .and_then(|c| read_int(r, c, true))
            .unwrap_or(-1) as i32;
        let int = |name: &str| -> Option<i64> { read_int(r, f.field(name)?, true) };
        let uint =
            |name: &str| -> Option<u64> { read_int(r, f.field(name)?, false).map(|v| v as u64) };
        let comm = |name: &str| -> Option<Comm> { Some(Comm::new(read_str(r, f.field(name)?)?)) };
        let kind = match which {
            Which::Switch => Kind::Switch {
                prev_pid: int("prev_pid")? as i32,
                prev_prio: int("prev_prio")? as i32,
                prev_state: int("prev_state")?,
                prev_comm: comm("prev_comm")?,
                next_pid: int("next_pid")? as i32,
                next_prio: int("next_prio")? as i32,
                next_comm: comm("next_comm")?,
            },
            Which::Waking => Kind::Waking {
                pid: int("pid")? as i32,
                target_cpu: int("target_cpu")? as i32,
            },
            Which::Wakeup => Kind::Wakeup {
                pid: int("pid")? as i32,
                target_cpu: int("target_cpu")? as i32,
            },
            Which::Migrate => Kind::Migrate {
                pid: int("pid")? as i32,
                dest_cpu: int("dest_cpu")? as i32,
            },
            Which::IrqEntry => {
                let irq = int("irq")? as i32;
                self.irq_names.entry(irq).or_insert_with(|| {
                    f.field("name")
                        .and_then(|n| read_str(r, n))
                        .map(|b| String::from_utf8_lossy(b).into_owned())
                        .unwrap_or_default()
                });
                Kind::IrqEntry { irq }
            }
            Which::IrqExit => Kind::IrqExit {
                irq: int("irq")? as i32,
            },
            Which::SoftirqEntry => Kind::SoftirqEntry {
                vec: uint("vec")? as u32,
            },
            Which::SoftirqExit => Kind::SoftirqExit {
                vec: uint("vec")? as u32,
            },
            Which::Runtime => Kind::Runtime {
                pid: int("pid")? as i32,
                runtime: uint("runtime")?,
            },
            Which::HrtimerExpire => Kind::HrtimerExpire {
                hrtimer: uint("hrtimer")?,
            },
            Which::Reschedule => Kind::Reschedule,
            Which::HrtimerStart => Kind::HrtimerStart {
                hrtimer: uint("hrtimer")?,
                expires: uint("expires")?,
            },
            Which::SysEnter => Kind::SysEnter { id: int("id")? },
            Which::SysExit => Kind::SysExit { id: int("id")? },
        };
        Some((pid, kind))
    }
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn format(name: &str, id: u16) -> String {
        format!(
            "name: {name}\nID: {id}\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
             \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
             \tfield:unsigned int vec;\toffset:8;\tsize:4;\tsigned:0;\n"
        )
    }

    fn record(id: u16, vec: u32) -> Vec<u8> {
        let mut r = vec![0u8; 12];
        r[0..2].copy_from_slice(&id.to_le_bytes());
        r[8..12].copy_from_slice(&vec.to_le_bytes());
        r
    }

    fn header(type_len: u32, delta: u32) -> [u8; 4] {
        (type_len | delta << 5).to_le_bytes()
    }

    /// A hand-built page: a short record (type_len 3, delta 5), a time
    /// extend of 2^27 + 3, a long-form record (type_len 0, length 16 =
    /// itself + 12 bytes, delta 2), then padding to the page's end.
    #[test]
    fn a_page_with_every_kind_of_header_decodes_to_the_hand_computed_times() {
        let (entry, exit) = (format("softirq_entry", 7), format("softirq_exit", 8));
        let mut d = Decoder::new([entry.as_str(), exit.as_str()]);
        let mut data = Vec::new();
        data.extend(header(3, 5));
        data.extend(record(7, 1));
        data.extend(header(30, 3));
        data.extend(1u32.to_le_bytes());
        data.extend(header(0, 2));
        data.extend(16u32.to_le_bytes());
        data.extend(record(8, 1));
        data.extend(header(29, 0));
        let mut page = vec![0u8; 4096];
        page[0..8].copy_from_slice(&1000u64.to_le_bytes());
        page[8..16].copy_from_slice(&(data.len() as u64 | 1 << 31).to_le_bytes());
        page[16..16 + data.len()].copy_from_slice(&data);
        let mut out = Vec::new();
        let info = d.page(&page, 3, &mut out);
        assert_eq!(info.events, 2);
        assert!(info.missed_before);
        let extended = 1005 + (1u64 << 27) + 3 + 2;
        assert_eq!(
            out,
            vec![
                Event {
                    ts: 1005,
                    cpu: 3,
                    pid: 0,
                    kind: Kind::SoftirqEntry { vec: 1 }
                },
                Event {
                    ts: extended,
                    cpu: 3,
                    pid: 0,
                    kind: Kind::SoftirqExit { vec: 1 }
                },
            ]
        );
    }

    #[test]
    fn runnable_is_state_zero_with_or_without_the_preemption_bit() {
        use crate::schedule::runnable;
        assert!(runnable(0));
        assert!(runnable(0x100));
        assert!(!runnable(1));
        assert!(!runnable(2 | 0x100));
    }
}
