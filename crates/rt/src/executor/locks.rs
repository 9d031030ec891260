//! Critical sections on real threads (`rtlab run --protocol`): one pthread
//! mutex per resource named in the set, created before the threads start
//! and shared by every task thread, and per task the plan of lock and
//! unlock steps its jobs follow ([`rtlab_model::lock_steps`], the
//! simulator's order).
//!
//! | `--protocol` | mutex                  | SCHED_FIFO / RR                   | SCHED_DEADLINE             | SCHED_OTHER        |
//! | ------------ | ---------------------- | --------------------------------- | -------------------------- | ------------------ |
//! | `none`       | `PTHREAD_PRIO_NONE`    | plain: unbounded inversion        | plain                      | plain              |
//! | `pip`        | `PTHREAD_PRIO_INHERIT` | rt-mutex priority inheritance     | deadline boost (see below) | no boost among CFS |
//! | `ipcp`       | `PTHREAD_PRIO_PROTECT` | ceiling = highest user priority   | refused                    | refused            |
//!
//! Under `pip` the mutex is a PI futex: the kernel's rt-mutex runs the
//! holder at the priority of its most urgent waiter. A SCHED_DEADLINE holder
//! with a deadline waiter is only kept from being throttled (its budget is
//! refilled from the waiter's parameters); it keeps its own deadline
//! (`replenish_dl_entity`), so this is not deadline inheritance: EDF still
//! runs a job whose deadline lies between the two ahead of it (README,
//! "Critical sections on real threads"). Between SCHED_OTHER threads the
//! rt-mutex changes nothing (it boosts to real-time or deadline waiters
//! only), so `pip` under `other` runs as plain mutexes do. `ipcp` is glibc's
//! priority protection: at lock it raises the thread's SCHED_FIFO priority
//! to the ceiling, at unlock it restores it; SCHED_DEADLINE and SCHED_OTHER
//! threads have no priority to raise, so it is refused for them. The
//! simulator's `npp`, `srp` and `dfp` have no Linux counterpart and are
//! refused for real runs.
//!
//! # Multiprocessor protocols (partitioned FP on `--cpus`, `pfp:*`)
//!
//! Where Linux allows it without a scheduler of rtlab's own, three of the
//! simulator's multiprocessor protocols run on real threads, each task
//! thread pinned to its CPU; every resource of the set follows the
//! protocol. "Boosted" is SCHED_FIFO priority [`BOOST_PRIORITY`] (98:
//! above every task thread, 10..97, below the watchdog's 99), set by the
//! thread itself with one `sched_setattr` before it asks for the lock and
//! restored after it releases the last one:
//!
//! | `--protocol` | waiting | the lock | holder |
//! | --- | --- | --- | --- |
//! | `fmlp+` | suspended in FIFO order | a ticket lock whose waiters sleep on a futex (`FUTEX_WAIT` on the "now serving" word, woken all at each release): strict FIFO, no barging | boosted (98): boosted holders of a CPU run in the order they became runnable at 98, which approximates the FMLP+'s request order |
//! | `msrp` | spinning in FIFO order, non-preemptive | the same ticket lock, its waiters busy-waiting | non-preemptive: at 98 from the request to the release |
//! | `mpcp` | suspended in priority order | a `PTHREAD_PRIO_INHERIT` mutex: the kernel's rt-mutex queues waiters by priority | MPCP-like boosting: above every task, at 10 + levels + (the task's own level), set before the request so the kernel's queue orders the waiters by the tasks' priorities; the MPCP boosts by the resource's remote ceiling instead |
//!
//! Not on real threads: `dpcp` (agents that run a job's section on another
//! CPU), `mrsp` (a preempted holder migrating to a spinning waiter's CPU)
//! and `omlp` (a FIFO and a priority queue with inheritance under global
//! EDF) need a dispatcher that decides per CPU what runs: rtlab's
//! user-space dispatcher (issue 34) is where they belong; they are
//! refused with that reason. Each job's lock wait (`blocked`, the time in
//! the lock call) is also its remote blocking (`remote_blocked`); local
//! blocking is not measured on real threads.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use rtlab_model::{lock_steps, Nanos, TaskSet};

use crate::error::RtError;
use crate::work::burn_cpu_until_unless_stopped;
use rtlab_host::policy::{self, Policy};
use rtlab_sys::clock::{monotonic_now, thread_cpu_time};
use rtlab_sys::mutex::{MutexProtocol, PthreadMutex};

use rtlab_model::policy::RunPolicy;

/// The protocols a real run offers, for messages.
pub const LOCK_PROTOCOLS: &str = "none, pip or ipcp; on --cpus with pfp: mpcp, fmlp+ or msrp";

/// The SCHED_FIFO priority of a boosted or non-preemptive holder under the
/// multiprocessor protocols: above every task thread
/// ([`super::policy_map::TOP_TASK_PRIORITY`]), below the watchdog.
pub const BOOST_PRIORITY: u8 = 98;

pub use rtlab_model::mp_locking::MpProtocol;
pub use rtlab_model::policy::LockingProtocol;

/// Refuses what a real run's mutexes cannot do: the simulator-only
/// protocols (`npp`, `srp`, `dfp`: Linux has no such mutex; `dpcp`, `mrsp`,
/// `omlp`: they need a dispatcher), `ipcp` where threads have no
/// SCHED_FIFO/RR priority to raise, and the multiprocessor protocols that
/// boost a SCHED_FIFO priority under a policy without one.
pub fn check_protocol(protocol: LockingProtocol, policy: RunPolicy) -> Result<(), String> {
    match (protocol, policy) {
        (LockingProtocol::Dfp, _) => Err("Linux has no deadline floor protocol; rtlab simulates it (`rtlab sim --protocol dfp`)".into()),
        (LockingProtocol::Srp, _) => Err("Linux has no stack resource policy; rtlab simulates it (`rtlab sim --protocol srp`)".into()),
        (LockingProtocol::Npp, _) => Err("Linux has no non-preemptive critical sections for user threads; rtlab simulates them (`rtlab sim --protocol npp`)".into()),
        (LockingProtocol::Ipcp, RunPolicy::Edf) => Err(
            "priority ceilings do not apply to SCHED_DEADLINE threads (they have no priority to raise); use pip (the kernel's deadline boost) or none"
                .into(),
        ),
        (LockingProtocol::Ipcp, RunPolicy::Other) => Err(
            "priority ceilings need SCHED_FIFO/RR threads; --policy other has no priority to raise (use fifo-order, rm, dm, given or rr, or --protocol pip or none)"
                .into(),
        ),
        (LockingProtocol::Multiprocessor(MpProtocol::Dpcp), _) => Err("the DPCP's agents run a job's section on another CPU, which needs a dispatcher deciding per CPU what runs (rtlab's user-space dispatcher does not run it across CPUs yet): not on real threads yet; rtlab simulates it (`rtlab sim --locking dpcp`)".into()),
        (LockingProtocol::Multiprocessor(MpProtocol::Mrsp), _) => Err("MrsP migrates a preempted holder to a spinning waiter's CPU, which needs a dispatcher deciding per CPU what runs (rtlab's user-space dispatcher does not run it across CPUs yet): not on real threads yet; rtlab simulates it (`rtlab sim --locking mrsp`)".into()),
        (LockingProtocol::Multiprocessor(MpProtocol::Omlp), _) => Err("the OMLP's FIFO and priority queues with inheritance under global EDF need a dispatcher (rtlab's user-space dispatcher does not run it across CPUs yet): not on real threads yet; rtlab simulates it (`rtlab sim -s gedf --locking omlp`)".into()),
        (LockingProtocol::Multiprocessor(p), RunPolicy::Edf | RunPolicy::Other) => Err(format!(
            "{p} boosts a holder's SCHED_FIFO priority: it runs under partitioned fixed priorities (--cpus with pfp, pfp:rm, pfp:dm, pfp:given)"
        )),
        (
            LockingProtocol::None
            | LockingProtocol::Pip
            | LockingProtocol::Ipcp
            | LockingProtocol::Multiprocessor(_),
            _,
        ) => Ok(()),
    }
}

/// One lock or unlock of a job, at `at` of its CPU time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Step {
    at: Nanos,
    resource: usize,
    lock: bool,
}

/// A FIFO ticket lock: a request takes the next ticket and waits until
/// "now serving" reaches it, sleeping on a futex (or spinning); a release
/// serves the next ticket and wakes every sleeper (each re-checks). Strict
/// FIFO: nobody barges past a waiter.
#[derive(Debug, Default)]
pub struct TicketLock {
    next: AtomicU32,
    serving: AtomicU32,
}

impl TicketLock {
    /// Waits for the lock, on a futex or spinning.
    pub fn lock(&self, spin: bool) {
        let mine = self.next.fetch_add(1, Ordering::AcqRel);
        loop {
            let now = self.serving.load(Ordering::Acquire);
            if now == mine {
                return;
            }
            if spin {
                std::hint::spin_loop();
            } else {
                // EAGAIN (served meanwhile), a timeout or a signal: look again.
                let _ = rtlab_sys::futex::futex_wait(&self.serving, now, Nanos::from_ms(100));
            }
        }
    }

    /// Serves the next ticket; wakes the sleepers unless they spin.
    pub fn unlock(&self, spin: bool) {
        self.serving.fetch_add(1, Ordering::AcqRel);
        if !spin {
            let _ = rtlab_sys::futex::futex_wake(&self.serving, i32::MAX);
        }
    }
}

/// One resource's lock.
enum Lock {
    /// A pthread mutex (none, pip, ipcp, mpcp).
    Mutex(Box<PthreadMutex>),
    /// A FIFO ticket lock (fmlp+, msrp).
    Ticket(Box<TicketLock>),
}

/// The set's locks, one per resource name (first named, first numbered),
/// each boxed in place and never moved.
pub struct Resources {
    names: Vec<String>,
    locks: Vec<Lock>,
    protocol: LockingProtocol,
}

impl Resources {
    /// One mutex per resource of `set` with `protocol`; under `ipcp` the
    /// ceiling of a resource is the highest SCHED_FIFO/RR priority among the
    /// threads (`policies`, in task order) whose tasks use it.
    pub fn new(
        set: &TaskSet,
        policies: &[Policy],
        protocol: LockingProtocol,
    ) -> Result<Resources, RtError> {
        let names = resource_names(set);
        let mut locks = Vec::with_capacity(names.len());
        for name in &names {
            let kind = match protocol {
                LockingProtocol::Multiprocessor(MpProtocol::FmlpPlus | MpProtocol::Msrp) => {
                    locks.push(Lock::Ticket(Box::default()));
                    continue;
                }
                LockingProtocol::None => MutexProtocol::None,
                LockingProtocol::Pip | LockingProtocol::Multiprocessor(MpProtocol::Mpcp) => {
                    MutexProtocol::Inherit
                }
                LockingProtocol::Ipcp => MutexProtocol::Protect {
                    ceiling: ceiling(set, policies, name).ok_or_else(|| RtError::Invalid {
                        what: format!("resource `{name}` under --protocol ipcp"),
                        why: "its users have no SCHED_FIFO/RR priority to take a ceiling from"
                            .into(),
                    })?,
                },
                LockingProtocol::Npp
                | LockingProtocol::Srp
                | LockingProtocol::Dfp
                | LockingProtocol::Multiprocessor(_) => {
                    return Err(RtError::Invalid {
                        what: format!("--protocol {protocol}"),
                        why: check_protocol(protocol, RunPolicy::Other)
                            .err()
                            .unwrap_or_default(),
                    })
                }
            };
            let mutex = PthreadMutex::new(kind).map_err(|e| RtError::Invalid {
                what: format!("a {protocol} mutex for resource `{name}`"),
                why: format!("pthread_mutex_init refused it: {e}"),
            })?;
            locks.push(Lock::Mutex(mutex));
        }
        Ok(Resources {
            names,
            locks,
            protocol,
        })
    }

    /// The protocol of the locks.
    pub fn protocol(&self) -> LockingProtocol {
        self.protocol
    }

    /// The resources' names, in number order.
    pub fn names(&self) -> &[String] {
        &self.names
    }
}

/// The resource names of `set`, in the order tasks first use them.
fn resource_names(set: &TaskSet) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for t in &set.tasks {
        for cs in &t.critical_sections {
            if !names.contains(&cs.resource) {
                names.push(cs.resource.clone());
            }
        }
    }
    names
}

/// The immediate ceiling of `resource`: the highest SCHED_FIFO/RR priority
/// of a thread whose task uses it (`None` if none of them has one).
pub fn ceiling(set: &TaskSet, policies: &[Policy], resource: &str) -> Option<u8> {
    set.tasks
        .iter()
        .zip(policies)
        .filter(|(t, _)| t.critical_sections.iter().any(|cs| cs.resource == resource))
        .filter_map(|(_, p)| match p {
            Policy::Fifo { priority } | Policy::RoundRobin { priority } => Some(*priority),
            _ => None,
        })
        .max()
}

/// A task's critical sections as a job performs them, and the stack of
/// locks it holds: allocated before the first release, so a job allocates
/// nothing.
pub struct SectionPlan {
    steps: Vec<Step>,
    held: Vec<usize>,
    /// Under a multiprocessor protocol: the thread's own policy and the
    /// one it holds (or waits) at.
    boost: Option<(Policy, Policy)>,
}

/// How a job's work went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobWork {
    /// All of the WCET was executed (false: the stop flag ended it).
    pub done: bool,
    /// Time spent inside `pthread_mutex_lock` (`None`: no critical sections).
    pub blocked: Option<Nanos>,
    /// Lock or unlock calls that failed (counted, never printed here).
    pub lock_errors: u64,
}

impl SectionPlan {
    /// The plan of task `task` of `set`, its resources numbered as in
    /// [`Resources::new`] for the same set.
    pub fn new(set: &TaskSet, task: usize) -> SectionPlan {
        let names = resource_names(set);
        let sections = &set.tasks[task].critical_sections;
        let steps: Vec<Step> = lock_steps(sections)
            .into_iter()
            .map(|s| Step {
                at: s.at,
                resource: names.iter().position(|n| n == s.resource).unwrap_or(0),
                lock: s.lock,
            })
            .collect();
        SectionPlan {
            held: Vec::with_capacity(sections.len()),
            steps,
            boost: None,
        }
    }

    /// The plan of task `task`, which runs at `policies[task]` (the
    /// threads' policies in task order), for `protocol`: under `fmlp+` and
    /// `msrp` the holder runs at [`BOOST_PRIORITY`], under `mpcp` at
    /// `10 + L + own level`, L the number of distinct task priorities (an
    /// error beyond 98).
    pub fn for_protocol(
        set: &TaskSet,
        task: usize,
        policies: &[Policy],
        protocol: LockingProtocol,
    ) -> Result<SectionPlan, RtError> {
        let mut plan = SectionPlan::new(set, task);
        if !protocol.is_multiprocessor() || !plan.locks() {
            return Ok(plan);
        }
        let own = policies[task];
        let raised = match protocol {
            LockingProtocol::Multiprocessor(MpProtocol::Mpcp) => {
                let mut levels: Vec<u8> = policies.iter().map(Policy::priority).collect();
                levels.sort_unstable();
                levels.dedup();
                let rank = levels
                    .iter()
                    .position(|&p| p == own.priority())
                    .unwrap_or(0);
                let top = usize::from(super::policy_map::BASE_PRIORITY) + levels.len() + rank;
                u8::try_from(top)
                    .ok()
                    .filter(|&p| p <= BOOST_PRIORITY)
                    .ok_or_else(|| RtError::Invalid {
                        what: "--protocol mpcp".into(),
                        why: format!(
                            "{} distinct task priorities leave no room above them for boosting (at most 44)",
                            levels.len()
                        ),
                    })?
            }
            _ => BOOST_PRIORITY,
        };
        plan.boost = Some((own, Policy::Fifo { priority: raised }));
        Ok(plan)
    }

    /// True when the task has critical sections.
    pub fn locks(&self) -> bool {
        !self.steps.is_empty()
    }

    /// Executes one job: burns CPU time up to each step (measured from the
    /// job's start on the thread's CPU clock), takes or releases the step's
    /// mutex, then burns up to `wcet`. The time inside each
    /// `pthread_mutex_lock` (monotonic clock before and after) is summed
    /// into the lock wait. When `stop` is set the burning ends at once, and
    /// every lock still held is released (innermost first) before it
    /// returns, so a thread waiting for one gets through and sees the flag
    /// too: a run never hangs on a lock.
    pub fn execute(&mut self, resources: &Resources, wcet: Nanos, stop: &AtomicBool) -> JobWork {
        let began = thread_cpu_time();
        let mut blocked = Nanos::ZERO;
        let mut lock_errors = 0;
        let mut done = true;
        for step in &self.steps {
            if !burn_cpu_until_unless_stopped(began, step.at, stop) {
                done = false;
                break;
            }
            let lock = &resources.locks[step.resource];
            if step.lock {
                if let (Some((_, raised)), true) = (&self.boost, self.held.is_empty()) {
                    if !policy::change_current_thread_policy(raised) {
                        lock_errors += 1;
                    }
                }
                let asked = monotonic_now();
                let locked = match lock {
                    Lock::Mutex(m) => m.lock(),
                    Lock::Ticket(t) => {
                        t.lock(
                            resources.protocol == LockingProtocol::Multiprocessor(MpProtocol::Msrp),
                        );
                        Ok(())
                    }
                };
                blocked = blocked.saturating_add(monotonic_now().saturating_sub(asked));
                match locked {
                    Ok(()) => self.held.push(step.resource),
                    Err(_) => lock_errors += 1,
                }
            } else if self.held.last() == Some(&step.resource) {
                self.held.pop();
                lock_errors += self.release(resources, step.resource);
            }
        }
        if done {
            done = burn_cpu_until_unless_stopped(began, wcet, stop);
        }
        while let Some(r) = self.held.pop() {
            lock_errors += self.release(resources, r);
        }
        JobWork {
            done,
            blocked: self.locks().then_some(blocked),
            lock_errors,
        }
    }

    /// Releases resource `r` (its last holder drops its boost); the
    /// number of failed calls.
    fn release(&self, resources: &Resources, r: usize) -> u64 {
        let mut errors = 0;
        match &resources.locks[r] {
            Lock::Mutex(m) => errors += u64::from(m.unlock().is_err()),
            Lock::Ticket(t) => {
                t.unlock(resources.protocol == LockingProtocol::Multiprocessor(MpProtocol::Msrp))
            }
        }
        if let (Some((own, _)), true) = (&self.boost, self.held.is_empty()) {
            errors += u64::from(!policy::change_current_thread_policy(own));
        }
        errors
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_model::{CriticalSection, Task};

    fn ms(v: u64) -> Nanos {
        Nanos::from_ms(v)
    }

    fn cs(resource: &str, start: u64, length: u64) -> CriticalSection {
        CriticalSection {
            resource: resource.into(),
            start: ms(start),
            length: ms(length),
        }
    }

    fn set() -> TaskSet {
        let mut h = Task::new("h", ms(10), ms(3));
        h.critical_sections = vec![cs("b", 1, 1)];
        let m = Task::new("m", ms(20), ms(3));
        let mut l = Task::new("l", ms(40), ms(6));
        l.critical_sections = vec![cs("a", 0, 4), cs("b", 1, 2)];
        TaskSet::new("s", vec![h, m, l])
    }

    #[test]
    fn sim_only_protocols_are_refused_with_words() {
        let refusal = |p: LockingProtocol, policy| check_protocol(p, policy).unwrap_err();
        let dm = RunPolicy::DeadlineMonotonic;
        let dfp = refusal(LockingProtocol::Dfp, dm);
        assert!(
            dfp.starts_with("Linux has no deadline floor protocol"),
            "{dfp}"
        );
        assert!(refusal(LockingProtocol::Srp, dm).contains("rtlab sim --protocol srp"));
        assert!(refusal(LockingProtocol::Npp, dm).contains("npp"));
        assert!(check_protocol(LockingProtocol::Ipcp, RunPolicy::Edf).is_err());
        assert!(check_protocol(LockingProtocol::Ipcp, RunPolicy::Other).is_err());
        assert!(check_protocol(LockingProtocol::Ipcp, RunPolicy::RateMonotonic).is_ok());
        assert!(check_protocol(LockingProtocol::Pip, RunPolicy::Edf).is_ok());
    }

    #[test]
    fn ceilings_are_the_highest_priority_of_each_resources_users() {
        let s = set();
        let fifo = |p| Policy::Fifo { priority: p };
        let policies = [fifo(30), fifo(20), fifo(10)];
        assert_eq!(ceiling(&s, &policies, "b"), Some(30));
        assert_eq!(ceiling(&s, &policies, "a"), Some(10));
        assert_eq!(ceiling(&s, &[Policy::Other { nice: 0 }; 3], "a"), None);
        let r = Resources::new(&s, &policies, LockingProtocol::Ipcp).unwrap();
        assert_eq!(r.names(), ["b", "a"]);
        let e = Resources::new(&s, &[Policy::Other { nice: 0 }; 3], LockingProtocol::Ipcp);
        assert!(e.is_err());
    }

    #[test]
    fn a_job_takes_nested_locks_as_a_stack_and_releases_them_all() {
        let s = set();
        let r = Resources::new(&s, &[Policy::Other { nice: 0 }; 3], LockingProtocol::Pip).unwrap();
        let mut plan = SectionPlan::new(&s, 2);
        let order: Vec<(u64, usize, bool)> = plan
            .steps
            .iter()
            .map(|s| (s.at.as_ns() / 1_000_000, s.resource, s.lock))
            .collect();
        assert_eq!(
            order,
            [(0, 1, true), (1, 0, true), (3, 0, false), (4, 1, false)]
        );
        let stop = AtomicBool::new(false);
        let work = plan.execute(&r, ms(6), &stop);
        assert!(work.done);
        assert_eq!(work.lock_errors, 0);
        assert!(work.blocked.is_some());
        // Every lock is free again: an inheriting mutex refuses an unlock by
        // a thread that does not hold it, and this thread can take each.
        for lock in &r.locks {
            let Lock::Mutex(m) = lock else {
                panic!("pip resources are mutexes")
            };
            m.lock().unwrap();
            m.unlock().unwrap();
        }
        assert_eq!(
            SectionPlan::new(&s, 1).execute(&r, ms(1), &stop).blocked,
            None
        );
    }

    #[test]
    fn a_stopped_job_releases_its_lock_and_a_waiter_gets_through_with_its_wait_recorded() {
        use std::sync::atomic::Ordering;
        use std::sync::Arc;
        let mut long = Task::new("long", Nanos::from_secs(20), Nanos::from_secs(10));
        long.critical_sections = vec![CriticalSection {
            resource: "r".into(),
            start: Nanos::ZERO,
            length: Nanos::from_secs(10),
        }];
        let s = Arc::new(TaskSet::new("s", vec![long.clone(), long]));
        let other = [Policy::Other { nice: 0 }; 2];
        let r = Arc::new(Resources::new(&s, &other, LockingProtocol::Pip).unwrap());
        let stop = Arc::new(AtomicBool::new(false));
        let job = |task: usize| {
            let (s, r, stop) = (s.clone(), r.clone(), stop.clone());
            std::thread::spawn(move || {
                SectionPlan::new(&s, task).execute(&r, Nanos::from_secs(10), &stop)
            })
        };
        let holder = job(0);
        std::thread::sleep(std::time::Duration::from_millis(30));
        let waiter = job(1);
        std::thread::sleep(std::time::Duration::from_millis(30));
        stop.store(true, Ordering::SeqCst);
        let (held, waited) = (holder.join().unwrap(), waiter.join().unwrap());
        assert!(!held.done && !waited.done);
        assert_eq!((held.lock_errors, waited.lock_errors), (0, 0));
        // The waiter waited from its request until the holder stopped.
        let blocked = waited.blocked.unwrap();
        assert!(blocked >= Nanos::from_ms(20), "{blocked}");
        assert!(held.blocked.unwrap() < blocked);
        // Nothing is held any more.
        let Lock::Mutex(m) = &r.locks[0] else {
            panic!("a pip resource is a mutex")
        };
        m.lock().unwrap();
        m.unlock().unwrap();
    }

    /// The ticket lock serves requests in the order they took tickets:
    /// three threads queue behind a held lock, one after the other, and get
    /// it in that order, sleeping (futex) or spinning.
    #[test]
    fn the_ticket_lock_is_strictly_fifo() {
        use std::sync::{Arc, Mutex};
        for spin in [false, true] {
            let lock = Arc::new(TicketLock::default());
            let order = Arc::new(Mutex::new(Vec::new()));
            lock.lock(spin);
            let mut waiters = Vec::new();
            for k in 0..3u32 {
                let (mine, order) = (lock.clone(), order.clone());
                waiters.push(std::thread::spawn(move || {
                    mine.lock(spin);
                    order.lock().unwrap().push(k);
                    mine.unlock(spin);
                }));
                // Each takes its ticket before the next starts.
                while lock.next.load(Ordering::SeqCst) < k + 2 {
                    std::thread::yield_now();
                }
            }
            lock.unlock(spin);
            for w in waiters {
                w.join().unwrap();
            }
            assert_eq!(*order.lock().unwrap(), [0, 1, 2], "spin {spin}");
        }
    }

    #[test]
    fn dispatcher_protocols_are_refused_naming_why() {
        for (name, why) in [("dpcp", "agents"), ("mrsp", "migrates"), ("omlp", "queues")] {
            let p = name.parse::<LockingProtocol>().unwrap();
            let e = check_protocol(p, RunPolicy::RateMonotonic).unwrap_err();
            assert!(e.contains(why) && e.contains("dispatcher"), "{e}");
        }
        let fmlp = "fmlp+".parse::<LockingProtocol>().unwrap();
        assert_eq!(fmlp, LockingProtocol::Multiprocessor(MpProtocol::FmlpPlus));
        assert!(check_protocol(fmlp, RunPolicy::RateMonotonic).is_ok());
        let msrp = LockingProtocol::Multiprocessor(MpProtocol::Msrp);
        assert!(check_protocol(msrp, RunPolicy::Edf).is_err());
    }
}
