//! Helpers shared by the real-thread test binaries (`mod common;`).

use rtlab_host::cpu_lock::{lock_cpus, CpuLock, WhenBusy};
use rtlab_host::kernel_state::StateDir;

/// One real-time test at a time in the binary (the binary's serial guard),
/// and the per-CPU measurement lock of the CPU the runs pin to, as `rtlab`
/// takes it: a test waits for another rtlab measuring there instead of
/// failing from its noise.
pub fn one_at_a_time() -> (std::sync::MutexGuard<'static, ()>, CpuLock) {
    let serial = rtlab_testkit::serial();
    let cpu = lock_cpus(
        &StateDir::from_env(),
        &[rtlab_rt::executor::default_cpu()],
        WhenBusy::Wait,
        |holder| eprintln!("waiting for CPU {}: {holder}", holder.cpu),
    )
    .expect("the measurement lock");
    (serial, cpu)
}
