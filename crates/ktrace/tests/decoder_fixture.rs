//! The decoder and the attribution on a captured trace: `rtlab run
//! tiny.toml --policy rm -d 100ms --kernel-trace=tiny-rm.kt` on CPU 1, the
//! set `fast` (T 10 ms, C 1 ms) and `slow` (T 40 ms, C 12 ms). The
//! intervals below were checked by hand against the run's own `--jobs`
//! rows (fast job 1 released at 10 ms, started 10.0248 ms, finished
//! 11.0279 ms; slow job 0 finished at 14.1215 ms) and the decoded events.

use std::path::Path;

use rtlab_ktrace::causes::{attribute, JobWindow};
use rtlab_ktrace::decode::Kind;
use rtlab_ktrace::schedule::{ThreadSpan, ThreadState};
use rtlab_ktrace::{Schedule, SetThreads, ThreadClass, Trace};

/// CLOCK_MONOTONIC at the run's time 0: fast job 0's wake-up (its
/// `sched_waking` at 10723318678781) was at 4326 ns in its `--jobs` row.
const ORIGIN: u64 = 10_723_318_678_781 - 4_326;
const FAST: i32 = 4442;
const SLOW: i32 = 4443;

fn trace() -> Trace {
    Trace::load(Path::new("tests/fixtures/tiny-rm.kt")).unwrap()
}

#[test]
fn the_fixture_decodes_completely_with_the_threads_names_and_priorities() {
    let t = trace();
    assert_eq!(t.header.cpus, vec![1]);
    assert_eq!(t.header.clock, "mono");
    assert_eq!(t.events.len(), 388);
    assert_eq!((t.skipped, t.pages_after_loss, t.truncated), (0, 0, false));
    assert!(t.events.windows(2).all(|w| w[0].ts <= w[1].ts));
    assert!(t.events.iter().all(|e| e.cpu == 1));
    // The preemption of slow by fast at 10.012111 ms, as the kernel wrote it.
    let switch = t
        .events
        .iter()
        .find(|e| e.ts == ORIGIN + 10_012_111)
        .expect("the switch at 10.012111 ms");
    match switch.kind {
        Kind::Switch {
            prev_pid,
            prev_prio,
            prev_state,
            prev_comm,
            next_pid,
            next_prio,
            next_comm,
        } => {
            assert_eq!((prev_pid, prev_prio, prev_state), (SLOW, 89, 0));
            assert_eq!((next_pid, next_prio), (FAST, 88));
            assert_eq!(prev_comm.as_string(), "rtlab-slow");
            assert_eq!(next_comm.as_string(), "rtlab-fast");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn slow_is_ready_while_fast_runs_and_its_waits_are_charged_to_fast() {
    let t = trace();
    let s = Schedule::build(&t.events, &[FAST, SLOW]);
    let at = |v: u64| ORIGIN + v;
    let slow: Vec<ThreadSpan> = s.spans[&SLOW]
        .iter()
        .copied()
        .filter(|sp| sp.start >= at(0) && sp.end <= at(14_200_000))
        .collect();
    let ready = |start, end, switched_out| ThreadSpan {
        start: at(start),
        end: at(end),
        cpu: 1,
        state: ThreadState::Ready { switched_out },
    };
    let running = |start, end| ThreadSpan {
        start: at(start),
        end: at(end),
        cpu: 1,
        state: ThreadState::Running,
    };
    // Woken at 8952 ns, waits for fast's job 0 (which sleeps at 1.070730
    // ms), runs, is preempted by fast's job 1 from 10.012111 to 11.048753
    // ms, runs to its end and sleeps at 14.145556 ms.
    assert_eq!(
        slow,
        vec![
            ready(8_952, 1_070_730, false),
            running(1_070_730, 10_012_111),
            ready(10_012_111, 11_048_753, true),
            running(11_048_753, 14_145_556),
        ]
    );
    let set = SetThreads {
        tasks: vec![("fast".into(), Some(FAST)), ("slow".into(), Some(SLOW))],
        class: ThreadClass::RealTime,
        own_cpu: Vec::new(),
        irq_in_task_time: true,
    };
    let job = JobWindow {
        task: 1,
        release: at(0),
        deadline: at(40_000_000),
        end: at(14_121_527),
        start: Some(at(1_075_770)),
        previous_finish: None,
    };
    let k = attribute(&s, &set, &job, false);
    assert_eq!((k.preemptions, k.switches), (1, 1));
    assert_eq!(k.wake, Some(at(8_952)));
    assert_eq!(k.first_run, Some(at(1_070_730)));
    // Ready for (1070730 - 8952) + (11048753 - 10012111) = 2098420 ns,
    // of which the CPU was fast's for all but what other threads and
    // softirqs took in between.
    let ready_total: u64 = ["set:fast"]
        .iter()
        .map(|l| k.waits.get(*l).copied().unwrap_or(0))
        .sum::<u64>()
        + k.waits
            .iter()
            .filter(|(l, _)| l.starts_with("thread:"))
            .map(|(_, v)| v)
            .sum::<u64>();
    assert!(ready_total <= 2_098_420);
    assert!(k.waits["set:fast"] >= 2_098_420 - 20_000, "{:?}", k.waits);
    assert_eq!(k.main_cause(), "set:fast");
    assert!(k.lateness.is_empty());
}

/// Bad input never panics: the fixture with bytes flipped, cut short or
/// replaced by noise decodes to something or to an error.
#[test]
fn damaged_traces_decode_or_fail_without_panicking() {
    let bytes = std::fs::read("tests/fixtures/tiny-rm.kt").unwrap();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    // The header's length, to damage pages rather than the header alone.
    let header_end = 15 + 4 + u32::from_le_bytes(bytes[15..19].try_into().unwrap()) as usize;
    for round in 0..200 {
        let mut b = bytes.clone();
        match round % 3 {
            0 => {
                for _ in 0..64 {
                    let at = header_end + (next() as usize) % (b.len() - header_end);
                    b[at] = next() as u8;
                }
            }
            1 => b.truncate(header_end + (next() as usize) % (b.len() - header_end)),
            _ => {
                for x in b[header_end..].iter_mut() {
                    *x = next() as u8;
                }
            }
        }
        let _ = Trace::decode(&b);
    }
    assert!(Trace::decode(b"not a trace").is_err());
    assert!(Trace::decode(&bytes[..header_end - 1]).is_err());
}
