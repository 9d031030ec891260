//! Flag parsing of `rtlab latency`: cyclictest's options and their long
//! forms, and the one-line refusals.

use super::flags::*;
use super::*;
use std::path::PathBuf;

use rtlab_rt::load::LoadSpec;

use crate::flags::parse_cpus;
use clap::Parser;
use rtlab_host::Policy;

#[derive(Debug, Parser)]
struct Cli {
    #[command(flatten)]
    args: LatencyArgs,
}

fn parse(line: &str) -> Result<LatencyArgs, clap::Error> {
    Cli::try_parse_from(std::iter::once("latency").chain(line.split_whitespace())).map(|c| c.args)
}

#[test]
fn cyclictest_style_flags_parse() {
    let a = parse("-t 2 -p 99 -i 1ms -m -a -D 10s --load hackbench:2:pipe").unwrap();
    assert_eq!(a.threads, 2);
    assert_eq!(a.interval, Nanos::from_ms(1));
    assert_eq!(a.affinity.as_deref(), Some("all"));
    assert_eq!(a.duration, Some(Nanos::from_secs(10)));
    assert!(a.mlock);
    assert_eq!(
        a.load,
        LoadSpec::Hackbench {
            groups: 2,
            pipes: true
        }
    );
    let a = parse("--policy other --nice -5 --affinity 0").unwrap();
    assert_eq!(
        a.policy.policy(Nanos::from_ms(1)),
        Policy::Other { nice: -5 }
    );
    assert_eq!(a.affinity.as_deref(), Some("0"));
    let a = parse("--policy deadline --interval 2ms").unwrap();
    assert_eq!(
        a.policy.policy(a.interval),
        Policy::Deadline {
            runtime: Nanos::from_us(200),
            deadline: Nanos::from_ms(2),
            period: Nanos::from_ms(2)
        }
    );
}

/// The probe configuration and the output flags of a command line.
fn config_of(line: &str) -> String {
    let args = parse(line).unwrap_or_else(|e| panic!("{line}: {e}"));
    let cfg = probe_config(&args).unwrap_or_else(|e| panic!("{line}: {e}"));
    format!(
        "{cfg:?} mlock={} quiet={} histogram_stdout={:?}",
        args.mlock, args.quiet, args.histogram_stdout
    )
}

/// cyclictest's options (`-t -p -i -d -D -l -m -a -h -q`) give the same
/// configuration as rtlab's long forms, in cyclictest's units.
#[test]
fn cyclictest_options_mean_their_long_forms() {
    let cpus = std::thread::available_parallelism().unwrap().get();
    for (cyclictest, long) in [
        ("-t 4", "--threads 4"),
        ("-t4", "--threads 4"),
        ("-t", &format!("--threads {cpus}")),
        ("-p 80", "--priority 80"),
        ("-p80", "--priority 80"),
        ("-i 250", "--interval 250us"),
        ("-i250", "--interval 250us"),
        ("-i 2ms", "--interval 2000us"),
        ("-d 0", "--distance 0us"),
        ("-d0", "--distance 0ns"),
        ("-d 100", "--distance 100us"),
        ("-D 30", "--duration 30s"),
        ("-D30", "--duration 30s"),
        ("-D 2m", "--duration 120s"),
        ("-D 1h", "--duration 3600s"),
        ("-D 1d", "--duration 86400s"),
        ("-D 10s", "--duration 10s"),
        ("-D 500ms", "--duration 500ms"),
        ("-l 1000", "--loops 1000"),
        ("-l 0", ""),
        ("-l 0 -D 5", "--duration 5s"),
        ("-m", "--mlock"),
        ("-a", "--affinity"),
        ("-a 1", "--affinity 1"),
        ("-a 0-1", "--affinity 0,1"),
        ("-q", "--quiet"),
        (
            "-t2 -p99 -i1000 -d0 -m -a -D10",
            "--threads 2 --priority 99 --interval 1ms --distance 0ns --mlock --affinity --duration 10s",
        ),
    ] {
        assert_eq!(config_of(cyclictest), config_of(long), "{cyclictest} vs {long}");
    }
    // -h US: US buckets, as --histogram-buckets, the histogram printed,
    // and every thread at the same interval, as in cyclictest
    // (cyclictest.c: `if (!histogram) interval += distance`): with
    // -t2 -D3 -h, thread 1 makes 3000 loops of 1 ms, not 2000 of 1.5 ms.
    let h = config_of("-h 200");
    assert_eq!(
        h.replace("histogram_stdout=Some(200)", ""),
        config_of("--histogram-buckets 200 --distance 0us").replace("histogram_stdout=None", "")
    );
    let args = parse("-t2 -D3 -h 100").unwrap();
    let cfg = probe_config(&args).unwrap();
    assert_eq!(cfg.distance, Nanos::ZERO);
    assert_eq!(cfg.interval, Nanos::from_ms(1));
    assert_eq!(
        probe_config(&parse("-t2 -D3").unwrap()).unwrap().distance,
        Nanos::from_us(500)
    );
    assert_eq!(
        probe_config(&parse("-t2 -D3 -h 100 -d 0").unwrap())
            .unwrap()
            .distance,
        Nanos::ZERO
    );
    let e = probe_config(&parse("-t2 -D3 -h 100 -d 200").unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("means nothing with -h") && !e.contains('\n'),
        "{e}"
    );
    assert!(
        parse("-h 200 --histogram-buckets 100").is_err(),
        "two bucket counts"
    );
    // --json is rtlab's document; --json=FILE cyclictest's layout in FILE.
    let json = |line: &str| parse(line).unwrap().json;
    assert_eq!(json("--json"), Some(None));
    assert_eq!(
        json("--json=out.json"),
        Some(Some(PathBuf::from("out.json")))
    );
    assert_eq!(json(""), None);
    let both = parse("-h 100 --json").unwrap();
    assert!(probe_config(&both)
        .unwrap_err()
        .to_string()
        .contains("-h prints the histogram"));
    assert!(probe_config(&parse("-h 100 --json=-").unwrap()).is_err());
    assert!(probe_config(&parse("-h 100 --json=f.json").unwrap()).is_ok());
}

#[test]
fn bad_flags_give_one_line_errors() {
    for (line, needle) in [
        ("--priority 100", "100"),
        ("--interval 5x", "unknown unit"),
        ("--duration 5y", "unknown unit"),
        ("-t 0", "not in 1..=1024"),
        ("-h 0", "0"),
        ("--json out.json", "unexpected argument"),
        ("--policy batch", "batch"),
        ("--load spin", "cpu:N"),
        ("--threads 0", "0"),
    ] {
        let e = parse(line).unwrap_err();
        let first = e.to_string();
        let first = first.lines().next().unwrap();
        assert!(first.starts_with("error: "), "{line}: {first}");
        assert!(first.contains(needle), "{line}: {first}");
    }
    assert!(distance_warning(Nanos::from_us(500)).is_none());
    let w = distance_warning(Nanos::from_secs(5)).unwrap();
    assert!(w.contains("-D 5s") && w.contains("cyclictest's -d"), "{w}");
    // `-d 2s` alone is a run length typed the `run` way: refused, in one
    // line that says what to type, where it used to warn and then run
    // the default 10 s (issue 36).
    let e = probe_config(&parse("-d 2s").unwrap()).unwrap_err();
    assert!(e.downcast_ref::<crate::usage::UsageError>().is_some());
    let e = e.to_string();
    assert!(e.contains("use -D 2s") && !e.contains('\n'), "{e}");
    // Beside a run length it is a distance: accepted (with a warning).
    assert!(probe_config(&parse("-t 2 -d 200ms -D 1s").unwrap()).is_ok());
    assert!(probe_config(&parse("-t 2 -d 200ms -l 10").unwrap()).is_ok());
    assert!(parse_cpus("1-0").is_err());
    assert!(parse_cpus("x")
        .unwrap_err()
        .to_string()
        .contains("CPU numbers"));
    assert!(parse_cpus("4095")
        .unwrap_err()
        .to_string()
        .contains("not available"));
}
