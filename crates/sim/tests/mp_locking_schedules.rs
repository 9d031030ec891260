//! Hand-computed schedules of the multiprocessor locking protocols: the
//! same small sets under each protocol, every job's finish time and
//! blocking worked out by hand from the protocol's rules (times in ms).

use std::cell::RefCell;
use std::rc::Rc;

use rtlab_model::mp_locking::MpProtocol;
use rtlab_model::results::{EachJob, JobRecord};
use rtlab_model::{CriticalSection, Nanos, Platform, Task, TaskSet};
use rtlab_sim::{LockingProtocol, SimConfig, TraceWindow};

fn ms(v: u64) -> Nanos {
    Nanos::from_ms(v)
}

/// A section on `q` from `start` for `length` ms.
fn section(start: u64, length: u64) -> CriticalSection {
    CriticalSection::new("q", ms(start), ms(length))
}

/// `(name, T, C, offset, cpu, section on q (start, length))`.
type Spec<'a> = (&'a str, u64, u64, u64, Option<u32>, Option<(u64, u64)>);

fn set(m: u32, tasks: &[Spec]) -> TaskSet {
    let tasks = tasks
        .iter()
        .map(|&(name, t, c, o, cpu, cs)| {
            let mut task = Task::new(name, ms(t), ms(c)).with_offset(ms(o));
            task.cpu = cpu;
            task.critical_sections = cs.map(|(s, l)| section(s, l)).into_iter().collect();
            task
        })
        .collect();
    TaskSet::new("hand", tasks).on_platform(Platform::new(m))
}

/// The first job of every task: (finish, remote, local), in ms.
fn first_jobs(set: &TaskSet, spec: &str, protocol: MpProtocol) -> Vec<(u64, u64, u64)> {
    let mut config = SimConfig::new(ms(20));
    config.protocol = LockingProtocol::Multiprocessor(protocol);
    config.trace = Some(TraceWindow {
        from: Nanos::ZERO,
        to: ms(20),
    });
    let jobs = Rc::new(RefCell::new(Vec::new()));
    let sink = jobs.clone();
    let run = rtlab_sim::run(
        set,
        &spec.parse().unwrap(),
        &config,
        Some(Box::new(EachJob(move |r: &JobRecord| {
            sink.borrow_mut().push(*r)
        }))),
    )
    .unwrap();
    assert!(run
        .trace
        .is_some_and(|t| !t.lock_marks.is_empty() || protocol == MpProtocol::Omlp));
    let jobs = jobs.borrow();
    (0..set.tasks.len())
        .map(|i| {
            let j = jobs.iter().find(|j| j.task == i && j.job == 0).unwrap();
            let in_ms = |n: Nanos| {
                assert_eq!(n.as_ns() % 1_000_000, 0, "{n} is not whole ms");
                n.as_ns() / 1_000_000
            };
            (
                in_ms(j.finish.unwrap()),
                in_ms(j.remote_blocked.unwrap()),
                in_ms(j.local_blocked.unwrap()),
            )
        })
        .collect()
}

/// cpu 0: L (T 100, C 4, q over [0, 3)) and H (T 50, C 2, released at 1);
/// cpu 1: A (T 100, C 3, q over [0, 2), released at 2). RM ranks H > L > A
/// (L and A tie on period: declaration order).
fn three() -> TaskSet {
    set(
        2,
        &[
            ("L", 100, 4, 0, Some(0), Some((0, 3))),
            ("H", 50, 2, 1, Some(0), None),
            ("A", 100, 3, 2, Some(1), Some((0, 2))),
        ],
    )
}

/// MPCP, FMLP+ and MSRP agree here: L's section keeps H off cpu 0 from 1
/// to 3 (boosted or non-preemptive: H's local blocking 2); A waits from 2
/// to 3 (suspended or spinning: remote 1), runs its section 3..5 and
/// finishes at 6; H runs 3..5, L finishes 5..6.
#[test]
fn a_holder_keeps_its_processor_under_mpcp_fmlp_plus_and_msrp() {
    for protocol in [MpProtocol::Mpcp, MpProtocol::FmlpPlus, MpProtocol::Msrp] {
        assert_eq!(
            first_jobs(&three(), "pfp:rm", protocol),
            [(6, 0, 0), (5, 0, 2), (6, 1, 0)],
            "{protocol}"
        );
    }
}

/// MrsP: L runs at q's ceiling on cpu 0, which is its own rank, so H
/// preempts it at 1. A spins from 2; L, preempted while holding q, moves to
/// cpu 1 and finishes its section in A's place, 2..4 (A's remote blocking
/// 2). L goes home and ends 4..5 (cpu 0 idled 3..4: H was done); A takes q
/// at 4, runs 4..6 and 6..7. H is never blocked.
#[test]
fn mrsp_holder_migrates_to_the_spinning_waiter() {
    assert_eq!(
        first_jobs(&three(), "pfp:rm", MpProtocol::Mrsp),
        [(5, 0, 0), (3, 0, 0), (7, 2, 0)]
    );
}

/// DPCP: q lives on cpu 0 (its first global resource). L's agent runs its
/// section 0..3 on cpu 0 above H; A's agent waits for it (2..3) and runs
/// 3..5 on cpu 0; A resumes on cpu 1, ends 5..6 (remote 1: its agent's
/// wait). H waits for both agents (local 1..5 = 4), runs 5..7; L, ready at
/// 3, waits for A's agent (local 2) and H, and ends 7..8.
#[test]
fn dpcp_agents_run_on_the_synchronization_processor() {
    assert_eq!(
        first_jobs(&three(), "pfp:rm", MpProtocol::Dpcp),
        [(8, 0, 2), (7, 0, 4), (6, 1, 0)]
    );
}

/// Queue order: L holds q from 0 to 4 on cpu 0; X (rank 2, cpu 1) asks at
/// 1, Y (rank 3, cpu 2) at 2. MPCP serves by priority: Y 4..6 (ends 7,
/// remote 2), then X 6..8 (ends 9, remote 5). FMLP+ serves in FIFO order:
/// X 4..6 (ends 7, remote 3), then Y 6..8 (ends 9, remote 4).
#[test]
fn mpcp_serves_by_priority_fmlp_plus_in_fifo_order() {
    let s = set(
        3,
        &[
            ("L", 100, 4, 0, Some(0), Some((0, 4))),
            ("X", 90, 3, 1, Some(1), Some((0, 2))),
            ("Y", 80, 3, 2, Some(2), Some((0, 2))),
        ],
    );
    assert_eq!(
        first_jobs(&s, "pfp:rm", MpProtocol::Mpcp),
        [(4, 0, 0), (9, 5, 0), (7, 2, 0)]
    );
    assert_eq!(
        first_jobs(&s, "pfp:rm", MpProtocol::FmlpPlus),
        [(4, 0, 0), (7, 3, 0), (9, 4, 0)]
    );
}

/// Global OMLP under G-EDF on 2 processors: A (D 10), B (D 11), C (D 12)
/// all ask for q at 0; D (D 4, no section) comes at 1. A takes q; B joins
/// the FIFO queue (2 places), C the priority queue. B is pi-blocked 0..1
/// (among the 2 most urgent pending jobs, not running), not 1..3 (D and A
/// are more urgent). A ends at 3: C moves to the FIFO queue, B takes q
/// (3..6), C is pi-blocked 3..6 and runs 6..8. D runs 1..3.
#[test]
fn omlp_fifo_then_priority_queue_and_pi_blocking() {
    let s = TaskSet::new(
        "omlp",
        [
            ("A", 10, 3, 0, Some((0, 3))),
            ("B", 11, 3, 0, Some((0, 3))),
            ("C", 12, 2, 0, Some((0, 2))),
            ("D", 4, 2, 1, None),
        ]
        .iter()
        .map(|&(name, d, c, o, cs)| {
            let mut t = Task::new(name, ms(20), ms(c))
                .with_deadline(ms(d))
                .with_offset(ms(o));
            t.critical_sections = cs.map(|(s, l)| section(s, l)).into_iter().collect();
            t
        })
        .collect(),
    )
    .on_platform(Platform::new(2));
    assert_eq!(
        first_jobs(&s, "gedf", MpProtocol::Omlp),
        [(3, 0, 0), (6, 1, 0), (8, 3, 0), (3, 0, 0)]
    );
}

/// The wrong scheduler kind is refused in words.
#[test]
fn a_protocol_under_the_wrong_scheduler_is_refused() {
    let mut config = SimConfig::new(ms(10));
    config.protocol = LockingProtocol::Multiprocessor(MpProtocol::Mpcp);
    let e = rtlab_sim::run(&three(), &"gedf".parse().unwrap(), &config, None)
        .err()
        .unwrap();
    assert_eq!(
        e.to_string(),
        "locking mpcp (Rajkumar 1990) runs under partitioned fixed priorities (pfp:rm, pfp:dm, pfp:given); gedf is not one"
    );
}
