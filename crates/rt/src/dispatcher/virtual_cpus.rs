//! m CPUs of threads that run exactly as told on a virtual clock (the
//! global engine's tests): every thread given a CPU executes as time
//! passes and posts its job's end exactly when its demand is reached;
//! deciding, switching and migrating take no time. The multiprocessor
//! counterpart of [`super::virtual_platform::VirtualPlatform`], without
//! lock steps (a global dispatcher refuses critical sections).

use rtlab_model::Nanos;

use super::engine::{Platform, Post};
use super::global::CpuPlatform;

/// Threads on m virtual CPUs.
pub struct VirtualCpus {
    now: Nanos,
    /// The threads given a CPU.
    running: Vec<usize>,
    threads: Vec<Thread>,
}

#[derive(Default, Clone)]
struct Thread {
    job: Option<u64>,
    demand: Nanos,
    executed: Nanos,
    post: Option<Post>,
    began: Option<Nanos>,
}

impl VirtualCpus {
    /// `n` threads at time 0, none running.
    pub fn new(n: usize) -> VirtualCpus {
        VirtualCpus {
            now: Nanos::ZERO,
            running: Vec::with_capacity(n),
            threads: vec![Thread::default(); n],
        }
    }
}

impl Platform for VirtualCpus {
    fn now(&mut self) -> Nanos {
        self.now
    }

    /// Every running thread executes until the first of them finishes
    /// (all that finish at that instant post), or until `until`.
    fn wait(&mut self, until: Nanos) {
        let left = |t: &Thread| t.demand.saturating_sub(t.executed);
        let first = self
            .running
            .iter()
            .map(|&i| self.now.saturating_add(left(&self.threads[i])))
            .fold(until, Nanos::min)
            .max(self.now);
        let elapsed = first - self.now;
        let threads = &mut self.threads;
        self.running.retain(|&i| {
            let t = &mut threads[i];
            if left(t) > elapsed {
                t.executed = t.executed.saturating_add(elapsed);
                return true;
            }
            t.executed = t.demand;
            t.post = Some(Post::Finished(first));
            false
        });
        self.now = first;
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

    fn run(&mut self, task: usize, job: u64, demand: Nanos, _steps: usize) {
        let t = &mut self.threads[task];
        if t.job != Some(job) {
            *t = Thread {
                job: Some(job),
                demand,
                ..Thread::default()
            };
        }
        t.began = Some(self.now);
        if !self.running.contains(&task) {
            self.running.push(task);
        }
    }

    fn pass(&mut self, _task: usize, _steps: usize) {}

    fn preempt(&mut self, task: usize) {
        self.running.retain(|&t| t != task);
    }

    fn began(&mut self, task: usize) -> Option<Nanos> {
        self.threads[task].began.take()
    }

    fn stop(&mut self) {
        self.running.clear();
    }
}

impl CpuPlatform for VirtualCpus {
    /// A CPU costs nothing here: the engine's bookkeeping is what the
    /// tests compare.
    fn place(&mut self, _task: usize, _cpu: usize) {}
}
