//! The kernel's schedule as Chrome trace-event rows (open in the Perfetto
//! UI): one row per traced CPU with a slice per thread that held it (the
//! set's jobs by task name, other threads by name and policy; idle left
//! blank), one row per CPU of interrupts and softirqs, and one row per
//! task of its throttled spans (ready after a switch-out while its CPU
//! went idle or to a lower class).

use std::io::{self, Write};

use rtlab_chrome_trace::{Event, TraceWriter};
use rtlab_model::Nanos;

use crate::gantt::{holder_name, interruption_name, throttled};
use crate::Analysis;

/// Row ids: CPU c's schedule is row `CPU_ROW + c`, its interrupts
/// `IRQ_ROW + c`, task i's throttled spans `THROTTLE_ROW + i`.
pub const CPU_ROW: usize = 1000;
/// See [`CPU_ROW`].
pub const IRQ_ROW: usize = 2000;
/// See [`CPU_ROW`].
pub const THROTTLE_ROW: usize = 3000;

/// Writes the schedule of `analysis` with times relative to `origin`
/// (the run's time 0, absolute ns); spans before it are left out.
pub fn write<W: Write>(out: W, analysis: &Analysis, origin: u64) -> io::Result<u64> {
    let mut w = TraceWriter::new(out)?;
    let s = &analysis.schedule;
    let rel = |t: u64| Nanos::from_ns(t.saturating_sub(origin));
    for (&cpu, c) in &s.cpus {
        let row = format!("CPU {cpu} (kernel)");
        w.event(&Event::thread_name(CPU_ROW + cpu as usize, &row))?;
        let irq_row = format!("CPU {cpu} interrupts");
        w.event(&Event::thread_name(IRQ_ROW + cpu as usize, &irq_row))?;
        for o in c.occupancy.iter().filter(|o| o.pid != 0 && o.end > origin) {
            let (name, of_set) = holder_name(s, &analysis.set, o.pid);
            let cat = if of_set { "set" } else { "other" };
            w.event(
                &Event::complete(
                    &name,
                    CPU_ROW + cpu as usize,
                    rel(o.start.max(origin)),
                    rel(o.end),
                )
                .in_category(cat),
            )?;
        }
        for i in c.interrupts.iter().filter(|i| i.end > origin) {
            let name = interruption_name(i.what, &analysis.irq_names);
            w.event(
                &Event::complete(
                    &name,
                    IRQ_ROW + cpu as usize,
                    rel(i.start.max(origin)),
                    rel(i.end),
                )
                .in_category("irq"),
            )?;
        }
    }
    for (i, (task, tid)) in analysis.set.tasks.iter().enumerate() {
        if tid.and_then(|t| s.spans.get(&t)).is_some() {
            w.event(&Event::thread_name(
                THROTTLE_ROW + i,
                &format!("{task} throttled"),
            ))?;
        }
    }
    for (i, sp) in throttled(s, &analysis.set).filter(|(_, sp)| sp.end > origin) {
        w.event(
            &Event::complete(
                "throttled",
                THROTTLE_ROW + i,
                rel(sp.start.max(origin)),
                rel(sp.end),
            )
            .in_category("throttled"),
        )?;
    }
    w.finish()?;
    Ok(w.events())
}
