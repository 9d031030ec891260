//! Where the threads of a multiprocessor run go (`rtlab run --cpus LIST
//! --policy linux-dl|pedf|cedf|gfp|pfp`), and the Linux rules that decide how.
//!
//! A run on m CPUs has *domains*: groups of CPUs inside which the kernel
//! schedules globally. Global scheduling is one domain of every CPU of the
//! run, partitioned scheduling one domain per CPU, clustered EDF one domain
//! per cluster. Each task belongs to one domain.
//!
//! * **SCHED_FIFO** (`gfp`, `pfp`): a thread's affinity is its domain. The
//!   RT class pushes and pulls runnable threads between the CPUs of its
//!   affinity, so a domain of several CPUs is global fixed priority (as far
//!   as push/pull keeps up) and a domain of one CPU is partitioned.
//! * **SCHED_DEADLINE** (`linux-dl`, `pedf`, `cedf`): global EDF *per root
//!   domain*. The kernel refuses `sched_setattr` to a thread whose affinity
//!   does not cover its whole root domain (EPERM), because its admission
//!   test is made per root domain: the sum of runtime/period of the
//!   domain's deadline threads must stay within its CPUs x
//!   sched_rt_runtime_us / sched_rt_period_us (minus the fair server's
//!   share since Linux 6.12). A domain that is not the whole machine must
//!   therefore become a root domain of its own: an exclusive cpuset holding
//!   exactly its CPUs, with load balancing off at the root cpuset
//!   ([`super::cpuset::DomainCpusets`]). A domain of every online CPU is the
//!   default root domain and needs no cpuset.
//!
//! Model processor k (the task file's `cpu = k`, or the partitioning
//! heuristic's bin k) runs on the k-th CPU of `--cpus`.

use rtlab_model::TaskSet;

use crate::error::RtError;

use rtlab_model::policy::Scope;

/// The CPUs, domains and task placement of a multiprocessor run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// Global, partitioned or clustered.
    pub scope: Scope,
    /// The run's CPUs, in `--cpus` order (model processor k is `cpus[k]`).
    pub cpus: Vec<usize>,
    /// The domains, each a list of real CPUs.
    pub domains: Vec<Vec<usize>>,
    /// Per task (declaration order), the index of its domain.
    pub task_domain: Vec<usize>,
}

impl Placement {
    /// Every task in one domain of all `cpus`.
    pub fn global(cpus: Vec<usize>, tasks: usize) -> Placement {
        Placement {
            scope: Scope::Global,
            domains: vec![cpus.clone()],
            cpus,
            task_domain: vec![0; tasks],
        }
    }

    /// One domain per CPU; task i on model processor `set.tasks[i].cpu`.
    /// `None` when a task has no `cpu` or names a processor beyond `cpus`.
    pub fn partitioned(cpus: Vec<usize>, set: &TaskSet) -> Option<Placement> {
        let task_domain = set
            .tasks
            .iter()
            .map(|t| t.cpu.map(|c| c as usize).filter(|&c| c < cpus.len()))
            .collect::<Option<Vec<usize>>>()?;
        Some(Placement {
            scope: Scope::Partitioned,
            domains: cpus.iter().map(|&c| vec![c]).collect(),
            cpus,
            task_domain,
        })
    }

    /// One domain per cluster (`clusters`: model processors) with the
    /// tasks' clusters `task_cluster`.
    pub fn clustered(
        cpus: Vec<usize>,
        clusters: &[Vec<u32>],
        task_cluster: Vec<usize>,
    ) -> Placement {
        Placement {
            scope: Scope::Clustered,
            domains: clusters
                .iter()
                .map(|c| {
                    c.iter()
                        .filter_map(|&k| cpus.get(k as usize).copied())
                        .collect()
                })
                .collect(),
            cpus,
            task_domain: task_cluster,
        }
    }

    /// The tasks (indices) of domain `d`.
    pub fn tasks_of(&self, d: usize) -> Vec<usize> {
        (0..self.task_domain.len())
            .filter(|&i| self.task_domain[i] == d)
            .collect()
    }

    /// The CPUs task `i` may run on.
    pub fn cpus_of_task(&self, i: usize) -> &[usize] {
        &self.domains[self.task_domain[i]]
    }

    /// Refuses CPUs the run cannot use, before anything is changed: a CPU
    /// listed twice, more CPUs than the machine has online, a CPU that is
    /// offline or missing, one this process may not use (its affinity or
    /// cpuset, e.g. systemd's `AllowedCPUs`).
    pub fn check_cpus(&self, online: &[usize], allowed: &[usize]) -> Result<(), RtError> {
        check_cpus(&self.cpus, online, allowed)
    }
}

/// See [`Placement::check_cpus`].
pub fn check_cpus(cpus: &[usize], online: &[usize], allowed: &[usize]) -> Result<(), RtError> {
    let refuse = |why: String| RtError::Setting {
        setting: "cpus",
        value: Some(list(cpus)),
        why,
    };
    if cpus.is_empty() {
        return Err(refuse("name at least one CPU".into()));
    }
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        return Err(refuse(format!("CPU {} is listed twice", w[0])));
    }
    if cpus.len() > online.len() {
        return Err(refuse(format!(
            "{} CPUs asked for, but this machine has {} online ({})",
            cpus.len(),
            online.len(),
            list(online)
        )));
    }
    if let Some(c) = cpus.iter().find(|c| !online.contains(c)) {
        return Err(refuse(format!(
            "CPU {c} is offline or does not exist (online: {}; see /sys/devices/system/cpu/online)",
            list(online)
        )));
    }
    if let Some(c) = cpus.iter().find(|c| !allowed.contains(c)) {
        return Err(refuse(format!(
            "this process may not use CPU {c} (its affinity or cpuset allows {}; systemd's AllowedCPUs, \
             taskset or a cpuset narrowed it)",
            list(allowed)
        )));
    }
    Ok(())
}

/// `0,1,3`.
pub fn list(cpus: &[usize]) -> String {
    cpus.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_model::{Nanos, Task};

    #[test]
    fn cpus_offline_twice_too_many_or_not_allowed_are_refused_in_words() {
        let online = [0, 1];
        assert!(check_cpus(&[0, 1], &online, &online).is_ok());
        let e = |c: &[usize], allowed: &[usize]| {
            check_cpus(c, &online, allowed).unwrap_err().to_string()
        };
        assert!(e(&[0, 5], &online).contains("CPU 5 is offline or does not exist"));
        assert!(e(&[0, 1, 2], &online).contains("3 CPUs asked for, but this machine has 2 online"));
        assert!(e(&[1, 1], &online).contains("CPU 1 is listed twice"));
        assert!(e(&[0, 1], &[1]).contains("may not use CPU 0"));
        assert!(e(&[], &online).contains("at least one CPU"));
    }

    #[test]
    fn partitioned_places_model_processor_k_on_the_kth_cpu() {
        let ms = Nanos::from_ms;
        let mut set = TaskSet::new(
            "s",
            vec![
                Task::new("a", ms(10), ms(1)),
                Task::new("b", ms(10), ms(1)),
                Task::new("c", ms(10), ms(1)),
            ],
        );
        assert_eq!(Placement::partitioned(vec![2, 3], &set), None);
        for (t, c) in set.tasks.iter_mut().zip([1, 0, 1]) {
            t.cpu = Some(c);
        }
        let p = Placement::partitioned(vec![2, 3], &set).unwrap();
        assert_eq!(p.domains, vec![vec![2], vec![3]]);
        assert_eq!(p.cpus_of_task(0), &[3]);
        assert_eq!(p.cpus_of_task(1), &[2]);
        assert_eq!(p.tasks_of(1), vec![0, 2]);
        let g = Placement::global(vec![0, 1], 3);
        assert_eq!(g.cpus_of_task(2), &[0, 1]);
        let c = Placement::clustered(vec![4, 5, 6, 7], &[vec![0, 1], vec![2, 3]], vec![1, 0, 0]);
        assert_eq!(c.domains, vec![vec![4, 5], vec![6, 7]]);
        assert_eq!(c.cpus_of_task(0), &[6, 7]);
    }
}
