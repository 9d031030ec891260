//! A scheduler's [`Scheduler::hooks`] declaration only spares the
//! simulator calls to hooks it does not implement: every uniprocessor
//! scheduler of the registry, run with its declaration and wrapped so that
//! every hook is called, gives the same report and trace.

use rtlab_model::policy::Scope;
use rtlab_model::{file, CriticalSection, Nanos, Task, TaskSet};
use rtlab_sim::{
    Hooks, Job, JobId, LockingProtocol, PolicyKind, Priority, Scheduler, SchedulerSpec, SimConfig,
    Simulator, System, TraceWindow, SCHEDULERS,
};

/// Delegates everything, but declares every hook.
struct EveryHook(Box<dyn Scheduler>);

impl Scheduler for EveryHook {
    fn name(&self) -> String {
        self.0.name()
    }
    fn hooks(&self) -> Hooks {
        Hooks::ALL
    }
    fn on_release(&mut self, job: JobId, sys: &System<'_>) {
        self.0.on_release(job, sys)
    }
    fn on_complete(&mut self, job: JobId, sys: &System<'_>) {
        self.0.on_complete(job, sys)
    }
    fn on_block(&mut self, job: JobId, sys: &System<'_>) {
        self.0.on_block(job, sys)
    }
    fn on_unblock(&mut self, job: JobId, sys: &System<'_>) {
        self.0.on_unblock(job, sys)
    }
    fn on_executed(&mut self, job: JobId, amount: Nanos) {
        self.0.on_executed(job, amount)
    }
    fn on_callback(&mut self, sys: &System<'_>) {
        self.0.on_callback(sys)
    }
    fn pick(&mut self, sys: &System<'_>) -> Option<JobId> {
        self.0.pick(sys)
    }
    fn callback_at(&self) -> Option<Nanos> {
        self.0.callback_at()
    }
    fn kind(&self) -> PolicyKind {
        self.0.kind()
    }
    fn priority(&self, job: &Job) -> Option<Priority> {
        self.0.priority(job)
    }
    fn task_priority(&self, task: usize) -> Option<Priority> {
        self.0.task_priority(task)
    }
    fn data(&self) -> Option<serde_json::Value> {
        self.0.data()
    }
}

/// One form of every uniprocessor scheduler of the registry.
const FORMS: &[&str] = &[
    "fp:rm",
    "fp:given",
    "edf",
    "llf",
    "fifo",
    "np-edf",
    "rr:2ms",
    "rr:1ms:linux",
    "ipi",
    "multiburst",
    "multiburst:wake=immediate",
    "hybrid",
];

/// Two tasks sharing R, a third preempting them (jobs block and unblock).
fn sharing() -> TaskSet {
    let ms = Nanos::from_ms;
    let cs = |start, length| CriticalSection {
        resource: "R".into(),
        start: ms(start),
        length: ms(length),
    };
    let mut l = Task::new("L", ms(20), ms(6)).with_priority(1);
    l.critical_sections = vec![cs(1, 3)];
    let mut h = Task::new("H", ms(10), ms(2))
        .with_offset(ms(2))
        .with_priority(3);
    h.critical_sections = vec![cs(0, 1)];
    let m = Task::new("M", ms(40), ms(7))
        .with_offset(ms(3))
        .with_priority(2);
    TaskSet::new("sharing", vec![l, h, m])
}

fn outputs(set: &TaskSet, form: &str, protocol: LockingProtocol, wrap: bool) -> String {
    let spec: SchedulerSpec = form.parse().unwrap();
    let mut config = SimConfig::new(Nanos::from_ms(400));
    config.protocol = protocol;
    config.trace = Some(TraceWindow {
        from: Nanos::ZERO,
        to: config.duration,
    });
    let mut scheduler = spec.build_for(set).unwrap();
    if wrap {
        scheduler = Box::new(EveryHook(scheduler));
    }
    let mut sim = Simulator::with_scheduler(set, scheduler, config)
        .unwrap_or_else(|e| panic!("{form} with {protocol}: {e}"));
    sim.run();
    let report = serde_json::to_string(&sim.report()).unwrap();
    format!("{report}\n{:?}", sim.trace().map(|t| &t.records))
}

#[test]
fn the_declared_hooks_change_nothing() {
    for entry in SCHEDULERS.iter().filter(|e| e.scope == Scope::Uni) {
        assert!(
            FORMS
                .iter()
                .any(|f| f.split(':').next() == Some(entry.name)),
            "add a form of {} to FORMS",
            entry.name
        );
    }
    let hartstone = file::load("builtin:hartstone-ph").unwrap().set;
    for form in FORMS {
        for (set, protocol) in [
            (&hartstone, LockingProtocol::None),
            // Plain locks: every scheduler takes them, and jobs block.
            (&sharing(), LockingProtocol::None),
        ] {
            assert_eq!(
                outputs(set, form, protocol, false),
                outputs(set, form, protocol, true),
                "{form} on {}",
                set.name
            );
        }
    }
}
