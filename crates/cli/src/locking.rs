//! `--locking` with a multiprocessor protocol, shared by `rtlab analyze`
//! and `rtlab sim`: the protocol's refusals (nesting it cannot handle, a
//! resource across clusters it cannot share, a uniprocessor protocol
//! across processors) as one line naming the file's place.

use rtlab_model::file::LoadedTaskSet;
use rtlab_model::mp_locking::{self, MpProtocol, Places};
use rtlab_model::{Diagnostic, TaskSet};

/// Refuses `set` (a placed copy of `loaded`'s set, same tasks) when
/// `protocol` cannot run it with task `i` in group `groups[i]`
/// (processors for the partitioned protocols, clusters for the OMLP).
pub fn check_protocol(
    loaded: &LoadedTaskSet,
    set: &TaskSet,
    protocol: MpProtocol,
    groups: &[u32],
) -> anyhow::Result<()> {
    let places = match protocol {
        MpProtocol::Omlp => Places::Clusters,
        _ => Places::Processors,
    };
    refuse(loaded, mp_locking::check(set, groups, protocol, places))
}

/// Refuses `set` when the uniprocessor protocol `protocol` would have to
/// share a resource across the processors of `groups`.
pub fn check_uniprocessor(
    loaded: &LoadedTaskSet,
    set: &TaskSet,
    protocol: &str,
    groups: &[u32],
) -> anyhow::Result<()> {
    refuse(
        loaded,
        mp_locking::check_uniprocessor(set, groups, protocol),
    )
}

/// The first finding at its place in the file, with how many more.
fn refuse(loaded: &LoadedTaskSet, found: Vec<Diagnostic>) -> anyhow::Result<()> {
    let count = found.len();
    let placed = loaded.place(found);
    match placed.first() {
        None => Ok(()),
        Some(first) if count == 1 => anyhow::bail!("{first}"),
        Some(first) => anyhow::bail!(
            "{first} (and {} more error{})",
            count - 1,
            if count == 2 { "" } else { "s" }
        ),
    }
}
