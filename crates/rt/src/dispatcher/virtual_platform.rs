//! A platform of threads that run exactly as told on a virtual clock: the
//! running thread executes as time passes and reaches its lock steps and
//! its demand exactly; deciding and switching take no time. On it the
//! engine gives the simulator's schedule job for job (the tests), and the
//! decision cost can be timed without a real-time thread (the
//! calibration before a ticked run).

use rtlab_model::Nanos;

use super::engine::{Platform, Post, Step};

/// Threads on a virtual clock: the running one executes as time passes,
/// reaches its lock steps and its demand exactly.
pub struct VirtualPlatform {
    now: Nanos,
    running: Option<usize>,
    steps: Vec<Vec<Step>>,
    threads: Vec<VirtualThread>,
    /// Stamp the cost meter with the real clock (the calibration of the
    /// decision cost); else time does not pass while the engine works.
    pub wall: bool,
    /// The threads end their bursts themselves, as real ones do
    /// ([`Platform::budgets`]); else the engine's timer ends them.
    pub budgets: bool,
    /// The timer wakes the engine this long after the time it asked for
    /// (a thread's post still wakes it at once); the running thread
    /// executes meanwhile.
    pub timer_lateness: Nanos,
}

#[derive(Default, Clone)]
struct VirtualThread {
    job: Option<u64>,
    demand: Nanos,
    executed: Nanos,
    passed: usize,
    post: Option<Post>,
    /// Waiting at a lock step or done: it does not execute.
    waiting: bool,
    began: Option<Nanos>,
    /// The execution at which it posts the end of its burst.
    limit: Option<Nanos>,
    limit_reached: bool,
}

impl VirtualPlatform {
    /// Threads with these lock steps, at time 0, none running.
    pub fn new(steps: Vec<Vec<Step>>) -> VirtualPlatform {
        VirtualPlatform {
            wall: false,
            budgets: false,
            timer_lateness: Nanos::ZERO,
            now: Nanos::ZERO,
            running: None,
            threads: vec![VirtualThread::default(); steps.len()],
            steps,
        }
    }

    /// The execution time at which the running thread next posts.
    fn target(&self, task: usize) -> Nanos {
        let t = &self.threads[task];
        let mut target = t.demand;
        if let Some(step) = self.steps[task].get(t.passed) {
            if !(step.lock && step.at >= t.demand) {
                target = target.min(step.at.max(t.executed));
            }
        }
        target
    }
}

impl Platform for VirtualPlatform {
    fn now(&mut self) -> Nanos {
        self.now
    }

    fn wait(&mut self, until: Nanos) {
        let until = until.saturating_add(self.timer_lateness);
        if let Some(task) = self.running.filter(|&t| !self.threads[t].waiting) {
            let target = self.target(task);
            let t = &mut self.threads[task];
            // The end of its burst comes first: it posts it and runs on.
            if let Some(limit) = t.limit.filter(|&l| l < target) {
                let left = limit.saturating_sub(t.executed);
                if self.now.saturating_add(left) <= until {
                    self.now = self.now.saturating_add(left);
                    t.executed = t.executed.max(limit);
                    t.limit = None;
                    t.limit_reached = true;
                    return;
                }
            }
            let left = target.saturating_sub(t.executed);
            if self.now.saturating_add(left) <= until {
                self.now = self.now.saturating_add(left);
                t.executed = target;
                t.waiting = true;
                t.post = Some(if target >= t.demand {
                    Post::Finished(self.now)
                } else {
                    Post::Step(t.passed)
                });
                return;
            }
            t.executed = t.executed.saturating_add(until.saturating_sub(self.now));
        }
        self.now = self.now.max(until);
    }

    fn executed(&self, task: usize) -> Nanos {
        self.threads[task].executed
    }

    fn posted(&mut self, task: usize, job: u64) -> Option<Post> {
        let t = &mut self.threads[task];
        if t.job != Some(job) {
            return None;
        }
        t.post.take()
    }

    fn run(&mut self, task: usize, job: u64, demand: Nanos, steps: usize) {
        let t = &mut self.threads[task];
        if t.job != Some(job) {
            *t = VirtualThread {
                job: Some(job),
                demand,
                ..VirtualThread::default()
            };
        }
        t.passed = steps;
        t.began = Some(self.now);
        self.running = Some(task);
    }

    fn pass(&mut self, task: usize, steps: usize) {
        let t = &mut self.threads[task];
        t.passed = steps;
        t.waiting = false;
    }

    fn preempt(&mut self, task: usize) {
        if self.running == Some(task) {
            self.running = None;
        }
    }

    fn began(&mut self, task: usize) -> Option<Nanos> {
        self.threads[task].began.take()
    }

    fn budgets(&self) -> bool {
        self.budgets
    }

    fn limit(&mut self, task: usize, at: Option<Nanos>) {
        let t = &mut self.threads[task];
        t.limit = at;
        t.limit_reached = false;
    }

    fn limit_reached(&mut self, task: usize) -> bool {
        std::mem::take(&mut self.threads[task].limit_reached)
    }

    fn stamp(&mut self) -> Nanos {
        if self.wall {
            rtlab_sys::clock::monotonic_now()
        } else {
            Nanos::ZERO
        }
    }

    fn stop(&mut self) {
        self.running = None;
    }
}
