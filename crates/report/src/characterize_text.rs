//! `rtlab characterize`'s text: per scenario and thread count the measured
//! cost's statistics beside Arakawa et al. 1993's RT Mach cost, the fitted lines
//! beside the paper's, how the tick was found, the context switch, and
//! with `--kernel-trace` the same costs from the kernel's timestamps.

use rtlab_model::overheads::{LinearCost, Overheads};
use rtlab_probe::characterize::dispatcher::DispatcherCharacterization;
use rtlab_probe::characterize::document::CharacterizeDocument;
use rtlab_probe::characterize::fit::{CostStats, LineFit, Statistic};
use rtlab_probe::characterize::kernel::KernelCharacterization;
use rtlab_probe::characterize::{Characterization, ScenarioPoint};

use crate::{disturbance_text, table};

/// A cost in its unit (`1.234 us`).
fn us(ns: u64) -> String {
    table::ns(ns)
}

/// A fitted line as `0.79us*n + 30.1us`, with negative parts shown.
fn line(fit: Option<&LineFit>) -> String {
    fit.map_or("-".into(), |f| {
        let ps = |v: i128| {
            let text = rtlab_model::overheads::format_ps(v.unsigned_abs() as u64);
            if v < 0 {
                format!("-{text}")
            } else {
                text
            }
        };
        format!("{}*n + {}", ps(f.per_thread_ps), ps(f.base_ps))
    })
}

fn r2(fit: Option<&LineFit>) -> String {
    fit.and_then(|f| f.r_squared)
        .map_or("-".into(), |r| format!("{r:.3}"))
}

/// The human summary: per scenario and n the statistics beside Arakawa et al. 1993's
/// RT Mach cost at that n, the fitted lines beside the paper's, the tick
/// and how it was found, the ping-pong, the notes.
pub fn describe(doc: &CharacterizeDocument) -> String {
    let m = &doc.measured;
    let rtmach = Overheads::rtmach();
    let stat = doc.fits.stat;
    let header = [
        "scenario", "n", "samples", "min", "median", "p99", "p99.9", "max", "fit", "RT Mach",
    ];
    let mut t = table::new(&header, &header[1..]);
    let fitted = |fit: Option<&LineFit>, n: usize| {
        fit.map_or("-".into(), |f| {
            us(((f.per_thread_ps * n as i128 + f.base_ps).max(0) as u64).div_ceil(1000))
        })
    };
    let mut rows =
        |name: &str, points: &[ScenarioPoint], fit: Option<&LineFit>, paper: &LinearCost| {
            for p in points {
                let s = &p.stats;
                t.add_row(vec![
                    name.to_string(),
                    p.n.to_string(),
                    s.count.to_string(),
                    us(s.min_ns),
                    us(s.median_ns),
                    us(s.p99_ns),
                    us(s.p999_ns),
                    us(s.max_ns),
                    fitted(fit, p.n),
                    us(paper.at(p.n).as_ns()),
                ]);
            }
        };
    rows(
        "preempt",
        &m.preempt,
        doc.fits.preempt.as_ref(),
        &rtmach.preempt,
    );
    rows("exit", &m.exit, doc.fits.exit.as_ref(), &rtmach.exit);
    rows(
        "nonpreempt",
        &m.nonpreempt,
        doc.fits.nonpreempt.as_ref(),
        &rtmach.nonpreempt,
    );
    if let Some(s) = &m.timer.stats {
        t.add_row(vec![
            "timer".into(),
            "1".into(),
            s.count.to_string(),
            us(s.min_ns),
            us(s.median_ns),
            us(s.p99_ns),
            us(s.p999_ns),
            us(s.max_ns),
            doc.fits
                .timer_ps
                .map_or("-".into(), |ps| us(ps.div_ceil(1000))),
            us(rtmach.timer.at(1).as_ns()),
        ]);
    }
    t.optional(&["samples", "min", "RT Mach"]);
    let mut out = vec![
        format!(
            "# rtlab characterize: CPU {}, SCHED_FIFO, {} samples per scenario and n; fitted to the {stat} of each n",
            m.cpu, m.samples
        ),
        table::render(&t),
        String::new(),
    ];
    let fit_header = [
        "cost",
        "this machine",
        "R^2",
        "RT Mach (Arakawa et al. 1993)",
    ];
    let mut f = table::new(&fit_header, &[]);
    let timer = doc
        .fits
        .timer_ps
        .map_or("-".into(), rtlab_model::overheads::format_ps);
    f.add_row(vec![
        "C_timer".into(),
        timer,
        "-".into(),
        rtmach.timer.to_string(),
    ]);
    for (name, fit, paper) in [
        ("C_preempt", doc.fits.preempt.as_ref(), &rtmach.preempt),
        ("C_exit", doc.fits.exit.as_ref(), &rtmach.exit),
        (
            "C_nonpreempt",
            doc.fits.nonpreempt.as_ref(),
            &rtmach.nonpreempt,
        ),
    ] {
        f.add_row(vec![name.into(), line(fit), r2(fit), paper.to_string()]);
    }
    out.push(table::render(&f));
    out.push(String::new());
    out.push(tick_line(m));
    if let Some(p) = &m.pingpong {
        out.push(format!(
            "context switch (futex ping-pong, 2 threads): median {} per switch, p99.9 {}; less one FUTEX_WAIT ({}): {}",
            us(p.stats.median_ns),
            us(p.stats.p999_ns),
            p.futex_call_median_ns.map_or("-".into(), us),
            p.switch_median_ns.map_or("-".into(), us),
        ));
    }
    out.push(format!(
        "gap threshold {} ns (10 iterations of the stamping loop, {:.0} ns each)",
        m.gap_threshold_ns, m.loop_iteration_ns
    ));
    if let Some(k) = &doc.kernel_trace {
        out.push(String::new());
        out.push(describe_kernel(k, stat));
    }
    if let Some(d) = &doc.dispatcher {
        out.push(String::new());
        out.push(describe_dispatcher(d));
    }
    for note in &doc.notes {
        out.push(format!("note: {note}"));
    }
    out.push(String::new());
    // A disturbed measurement shows its account in full (ending with the
    // verdict); a clean one its verdict.
    if doc.disturbance.verdict.is_disturbed() {
        out.push(
            disturbance_text::account_text(&doc.disturbance)
                .trim_end()
                .to_string(),
        );
        out.push(
            "  the costs above hold the disturbance's time too: measure again on a quiet machine, or with --isolate"
                .into(),
        );
    } else {
        out.push(disturbance_text::verdict_line(&doc.disturbance));
    }
    table::fit_text(&out.join("\n"))
}

/// `--dispatcher`: the decision cost, dispatch latency and timer wake-up per n, and the
/// lines of the `[dispatcher]` table.
fn describe_dispatcher(d: &DispatcherCharacterization) -> String {
    let header = [
        "dispatcher",
        "n",
        "samples",
        "min us",
        "median us",
        "p99 us",
        "p99.9 us",
        "max us",
        "CPU %",
    ];
    let mut t = table::new(&header, &header[1..]);
    for p in &d.points {
        for (name, s) in [
            ("decision", &p.decision),
            ("latency", &p.latency),
            ("wake", &p.wake),
        ] {
            t.add_row(vec![
                name.to_string(),
                p.n.to_string(),
                s.count.to_string(),
                us(s.min_ns),
                us(s.median_ns),
                us(s.p99_ns),
                us(s.p999_ns),
                us(s.max_ns),
                format!("{:.2}", p.cpu_share * 100.0),
            ]);
        }
    }
    format!(
        "rtlab's dispatcher (EDF, U = 0.4, one second per n):\n{}\nfitted to {}: decision {} (R² {}), latency {} (R² {}), wake {} (R² {})",
        table::render(&t),
        d.stat,
        line(d.decision.as_ref()),
        r2(d.decision.as_ref()),
        line(d.latency.as_ref()),
        r2(d.latency.as_ref()),
        line(d.wake.as_ref()),
        r2(d.wake.as_ref()),
    )
}

/// `--kernel-trace`: each cost from user-space stamps beside the same cost
/// from kernel timestamps, the kernel's fitted lines, the host's stalls.
fn describe_kernel(k: &KernelCharacterization, stat: Statistic) -> String {
    let header = [
        "cost",
        "n",
        "user samples",
        "user p50",
        "user p99",
        "user p99.9",
        "kernel samples",
        "kernel p50",
        "kernel p99",
        "kernel p99.9",
    ];
    let mut t = table::new(&header, &header[1..]);
    for c in &k.costs {
        let kernel = |f: fn(&CostStats) -> u64| c.kernel.as_ref().map_or("-".into(), |s| us(f(s)));
        t.add_row(vec![
            format!("{} ({})", c.cost, c.scenario),
            c.n.to_string(),
            c.user.count.to_string(),
            us(c.user.median_ns),
            us(c.user.p99_ns),
            us(c.user.p999_ns),
            c.kernel.as_ref().map_or(0, |s| s.count).to_string(),
            kernel(|s| s.median_ns),
            kernel(|s| s.p99_ns),
            kernel(|s| s.p999_ns),
        ]);
    }
    t.optional(&["user samples", "kernel samples", "user p99", "kernel p99"]);
    let mut out = vec![
        format!(
            "# from the kernel trace ({} events, {} lost): release = timer expiry to switch-in, exit = the blocking call's entry to the switch out, switch = that entry to the next thread's return to user space",
            k.events, k.lost_events
        ),
        table::render(&t),
        format!(
            "kernel fit ({stat}): C_preempt (release) {} (R^2 {}), C_exit {} (R^2 {})",
            line(k.release_fit.as_ref()),
            r2(k.release_fit.as_ref()),
            line(k.exit_fit.as_ref()),
            r2(k.exit_fit.as_ref()),
        ),
        format!(
            "host stalls (no event for more than {} while a measuring thread was in a system call or being switched in, or inside a sample): {}, total {}, longest {}; {} kernel samples left out for a stall inside; steal over the run (/proc/stat): {}",
            us(k.stall_gap_ns),
            k.stalls.count,
            us(k.stalls.total_ns),
            us(k.stalls.longest_ns),
            k.excluded_samples,
            us(k.steal_ns),
        ),
    ];
    for n in &k.not_measured {
        out.push(format!("not from the trace: {n}"));
    }
    out.join("\n")
}

/// How the tick was found, in one line.
fn tick_line(m: &Characterization) -> String {
    let t = &m.timer;
    let Some(tick) = &t.tick else {
        return "tick: not found (no coarse-clock change was seen)".into();
    };
    let hz = tick
        .hz
        .map_or("no usual CONFIG_HZ within 2 %".into(), |hz| {
            format!("CONFIG_HZ {hz}")
        });
    format!(
        "tick: {} ({hz}): mode of {} intervals between CLOCK_MONOTONIC_COARSE changes, {} ({:.0} % in the modal bins); \
         clock_getres(CLOCK_MONOTONIC_COARSE) = {}; {} local timer interrupts/s (LOC) while spinning; \
         {} stalls of a tick or more left out (longest {}); {} other gaps (other interrupts, the host), largest {}",
        rtlab_model::Nanos::from_ns(tick.tick_ns),
        tick.intervals,
        table::ns(tick.measured_ns),
        100.0 * tick.modal_share,
        table::opt_ns(t.coarse_resolution_ns),
        t.loc_per_second.map_or("-".into(), |r| format!("{r:.0}")),
        t.stalls,
        us(t.stall_max_ns),
        t.other_gaps,
        us(t.other_gap_max_ns),
    )
}
