//! The text of a dispatcher run's costs (`rtlab run --dispatcher`, `rtlab
//! compare --dispatcher`): the block under the run's report, and one
//! short line per run for the commands that make many (`hartstone`, the
//! studies, `breakdown`).

use rtlab_rt::dispatcher::costs::{DispatcherCosts, Percentiles};

use crate::table::{self, ns};

/// `p50 X, p99 Y, p99.9 Z, max W (N samples)`.
fn percentiles(p: &Percentiles) -> String {
    if p.count == 0 {
        return "no samples".into();
    }
    format!(
        "p50 {}, p99 {}, p99.9 {}, max {} ({} samples)",
        ns(p.p50_ns),
        ns(p.p99_ns),
        ns(p.p999_ns),
        ns(p.max_ns),
        p.count
    )
}

/// The block under a dispatcher run's report (starting with a blank
/// line; nothing for a run by a Linux policy), each line fitted to the
/// terminal.
pub fn describe(costs: Option<&DispatcherCosts>) -> String {
    let Some(c) = costs else {
        return String::new();
    };
    let mut out = format!(
        "\ndispatcher: {} ({}), {} dispatcher{}; {}\n",
        c.scheduler,
        c.mode,
        c.dispatchers,
        if c.dispatchers == 1 { "" } else { "s" },
        c.priorities
    );
    out.push_str(&format!(
        "  dispatch latency (decision to the thread running, its own clock): {}\n",
        percentiles(&c.dispatch_latency)
    ));
    if let Some(k) = &c.kernel_dispatch_latency {
        out.push_str(&format!(
            "  dispatch latency (decision to the kernel's sched_switch):        {}\n",
            percentiles(k)
        ));
    }
    out.push_str(&format!(
        "  cost per decision (wake-up, hooks and pick, then system calls): {}; decide p50 {}, enact p50 {}\n",
        percentiles(&c.decision_cost),
        ns(c.decide_cost.p50_ns),
        ns(c.enact_cost.p50_ns)
    ));
    out.push_str(&format!(
        "  {} wake-ups, {} decisions, {} dispatches; dispatcher CPU {} ({:.2} % of the run{})\n",
        c.wakes,
        c.decisions,
        c.dispatches,
        ns(c.cpu_ns),
        c.cpu_share * 100.0,
        if c.dispatchers > 1 { " per CPU" } else { "" }
    ));
    out.push_str(&format!(
        "  task switches: {} (the simulator's count){}; the task threads' switches by getrusage: {}\n",
        c.context_switches,
        c.kernel_task_switches
            .map_or(String::new(), |k| format!(", {k} in the kernel's trace")),
        c.kernel_context_switches
    ));
    if c.migrations > 0 {
        out.push_str(&format!(
            "  migrations: {} (jobs moved to another CPU by the global dispatcher)\n",
            c.migrations
        ));
    }
    if c.enact_errors > 0 {
        out.push_str(&format!(
            "  warning: {} priority or CPU changes of task threads failed\n",
            c.enact_errors
        ));
    }
    if let Some(why) = &c.watchdog {
        out.push_str(&format!("  watchdog: {why}\n"));
    }
    table::fit_text(&out)
}

/// One line for a run of a series: latency p50/p99.9 and the CPU share.
pub fn short_line(costs: &DispatcherCosts) -> String {
    format!(
        "dispatch latency p50 {} p99.9 {}, decision p50 {}, dispatcher CPU {:.2} %",
        ns(costs.dispatch_latency.p50_ns),
        ns(costs.dispatch_latency.p999_ns),
        ns(costs.decision_cost.p50_ns),
        costs.cpu_share * 100.0
    )
}
