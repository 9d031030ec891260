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

use std::sync::atomic::AtomicBool;

use rtlab_model::{lock_steps, Nanos, TaskSet};

use crate::error::RtError;
use crate::work::burn_cpu_until_unless_stopped;
use rtlab_host::policy::Policy;
use rtlab_sys::clock::{monotonic_now, thread_cpu_time};
use rtlab_sys::mutex::{MutexProtocol, PthreadMutex};

use rtlab_model::policy::RunPolicy;

/// The protocols a real run offers, for messages.
pub const LOCK_PROTOCOLS: &str = "none, pip or ipcp";

pub use rtlab_model::policy::LockingProtocol;

/// Refuses what a real run's mutexes cannot do: the simulator-only
/// protocols (`npp`, `srp`, `dfp`: Linux has no such mutex), and `ipcp`
/// where threads have no SCHED_FIFO/RR priority to raise.
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
        (LockingProtocol::None | LockingProtocol::Pip | LockingProtocol::Ipcp, _) => Ok(()),
    }
}

/// One lock or unlock of a job, at `at` of its CPU time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Step {
    at: Nanos,
    resource: usize,
    lock: bool,
}

/// The set's mutexes, one per resource name (first named, first numbered),
/// each boxed in place and never moved.
pub struct Resources {
    names: Vec<String>,
    // Boxed on purpose: an initialised pthread mutex must not move, and a
    // Vec of mutexes would move them when it grows.
    #[allow(clippy::vec_box)]
    mutexes: Vec<Box<PthreadMutex>>,
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
        let mut mutexes = Vec::with_capacity(names.len());
        for name in &names {
            let kind = match protocol {
                LockingProtocol::None => MutexProtocol::None,
                LockingProtocol::Pip => MutexProtocol::Inherit,
                LockingProtocol::Ipcp => MutexProtocol::Protect {
                    ceiling: ceiling(set, policies, name).ok_or_else(|| RtError::Invalid {
                        what: format!("resource `{name}` under --protocol ipcp"),
                        why: "its users have no SCHED_FIFO/RR priority to take a ceiling from"
                            .into(),
                    })?,
                },
                LockingProtocol::Npp | LockingProtocol::Srp | LockingProtocol::Dfp => {
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
            mutexes.push(mutex);
        }
        Ok(Resources { names, mutexes })
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
        }
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
            let mutex = &resources.mutexes[step.resource];
            if step.lock {
                let asked = monotonic_now();
                let locked = mutex.lock();
                blocked = blocked.saturating_add(monotonic_now().saturating_sub(asked));
                match locked {
                    Ok(()) => self.held.push(step.resource),
                    Err(_) => lock_errors += 1,
                }
            } else if self.held.last() == Some(&step.resource) {
                self.held.pop();
                if mutex.unlock().is_err() {
                    lock_errors += 1;
                }
            }
        }
        if done {
            done = burn_cpu_until_unless_stopped(began, wcet, stop);
        }
        while let Some(r) = self.held.pop() {
            if resources.mutexes[r].unlock().is_err() {
                lock_errors += 1;
            }
        }
        JobWork {
            done,
            blocked: self.locks().then_some(blocked),
            lock_errors,
        }
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
        for m in &r.mutexes {
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
        r.mutexes[0].lock().unwrap();
        r.mutexes[0].unlock().unwrap();
    }
}
