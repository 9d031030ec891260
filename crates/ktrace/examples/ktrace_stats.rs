//! Counts the events of a kept trace file by kind and CPU:
//! `cargo run -p rtlab-ktrace --example ktrace_stats -- FILE [--dump]`;
//! `--dump` also prints every event (time in s, CPU, what), to compare
//! with a text trace of the same events.

use std::collections::BTreeMap;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: ktrace_stats FILE");
        std::process::exit(2);
    };
    let trace = match rtlab_ktrace::Trace::load(std::path::Path::new(&path)) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    if std::env::args().any(|a| a == "--dump") {
        for e in &trace.events {
            println!(
                "{}.{:09} {} {:?}",
                e.ts / 1_000_000_000,
                e.ts % 1_000_000_000,
                e.cpu,
                e.kind
            );
        }
    }
    let mut counts: BTreeMap<(u32, String), u64> = BTreeMap::new();
    for e in &trace.events {
        let kind = format!("{:?}", e.kind);
        let name = kind.split([' ', '{']).next().unwrap_or("?").to_string();
        *counts.entry((e.cpu, name)).or_default() += 1;
    }
    for ((cpu, kind), n) in counts {
        eprintln!("cpu {cpu} {kind}: {n}");
    }
    eprintln!("irqs: {:?}", trace.irq_names);
}
