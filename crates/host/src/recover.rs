//! What every measuring command does first: put back what dead rtlab
//! processes left changed. Beside both the ledger ([`crate::kernel_state`])
//! and the cpusets ([`crate::cpuset`]) so that neither needs the other.

use crate::kernel_state::{recover_dead_owners, Recovery, StateDir};

/// Restores what dead rtlab processes recorded in [`StateDir::from_env`],
/// then removes `rtlab-edf-*` cpusets that no state file describes and whose
/// pid is gone (left by an rtlab older than the state files). Returns one
/// [`Recovery`] per process.
pub fn recover_left_state() -> std::io::Result<Vec<Recovery>> {
    let dir = StateDir::from_env();
    let mut recoveries = recover_dead_owners(&dir)?;
    recoveries.extend(crate::cpuset::remove_stray_cpusets(&dir)?);
    Ok(recoveries)
}
