//! The platform a task set runs on: `m` identical processors, optionally
//! grouped into clusters, and the fixed processor of each task (`cpu`), as a
//! partitioned scheduler reads it (SimSo's `Fixed_PEDF`).
//!
//! ```toml
//! processors = 4              # default 1
//! clusters = [[0, 1], [2, 3]] # optional; see the rules below
//! [[task]]
//! name = "t1"
//! period = "10ms"
//! wcet = "2ms"
//! cpu = 2                     # optional fixed assignment, 0-based
//! ```
//!
//! Rules (each broken one is refused with a line naming `file:line:col`):
//!
//! - `processors` is from 1 to [`MAX_PROCESSORS`];
//! - processors are numbered `0 .. processors - 1`; a cluster or a task's
//!   `cpu` naming any other number is refused;
//! - clusters, when given, **partition** the processors: no cluster is
//!   empty, none overlaps another, and together they cover every processor
//!   (a processor left out of every cluster would be a processor no
//!   scheduler may use; write it as a cluster of its own). No clusters means
//!   one cluster of all processors (global scheduling).
//!
//! Defaults are not written back: a one-processor set without clusters or
//! `cpu` fields is the same file, byte for byte, as before platforms existed.

use crate::task::{FieldPath, PathSegment, Task};
use crate::text::printable;

/// The largest processor count rtlab models.
pub const MAX_PROCESSORS: u32 = 1024;

/// `m` identical processors and their clusters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Platform {
    /// Number of identical processors `m`, numbered `0 .. m - 1`.
    pub processors: u32,
    /// Disjoint groups of processors covering all of them, or empty for
    /// one global cluster.
    pub clusters: Vec<Vec<u32>>,
}

impl Default for Platform {
    /// One processor, no clusters.
    fn default() -> Platform {
        Platform::new(1)
    }
}

impl Platform {
    /// `processors` identical processors, no clusters.
    pub fn new(processors: u32) -> Platform {
        Platform {
            processors,
            clusters: Vec::new(),
        }
    }

    /// True for the default one-processor platform without clusters.
    pub fn is_default(&self) -> bool {
        *self == Platform::default()
    }

    /// The clusters as given, or one cluster of every processor when none
    /// are.
    pub fn effective_clusters(&self) -> Vec<Vec<u32>> {
        if self.clusters.is_empty() {
            vec![(0..self.processors).collect()]
        } else {
            self.clusters.clone()
        }
    }

    /// The index of the cluster holding `cpu` in [`Platform::effective_clusters`].
    pub fn cluster_of(&self, cpu: u32) -> Option<usize> {
        if self.clusters.is_empty() {
            return (cpu < self.processors).then_some(0);
        }
        self.clusters.iter().position(|c| c.contains(&cpu))
    }

    /// One line for people: `4 processors`, `4 processors in clusters {0,1} {2,3}`.
    pub fn describe(&self) -> String {
        let mut out = match self.processors {
            1 => "1 processor".to_string(),
            m => format!("{m} processors"),
        };
        if !self.clusters.is_empty() {
            let clusters: Vec<String> = self
                .clusters
                .iter()
                .map(|c| {
                    let cpus: Vec<String> = c.iter().map(u32::to_string).collect();
                    format!("{{{}}}", cpus.join(","))
                })
                .collect();
            out.push_str(" in clusters ");
            out.push_str(&clusters.join(" "));
        }
        out
    }

    /// "numbered 0 to 3", "numbered 0" for one processor.
    fn numbering(&self) -> String {
        match self.processors {
            0 => "has no processor".to_string(),
            1 => "numbers its one processor 0".to_string(),
            m => format!("numbers them 0 to {}", m - 1),
        }
    }

    /// Every broken rule of the platform and of the tasks' `cpu` fields,
    /// as (where, what) in file order.
    pub fn check(&self, tasks: &[Task]) -> Vec<(FieldPath, String)> {
        let mut out = Vec::new();
        let m = self.processors;
        if m == 0 {
            out.push((
                FieldPath::root("processors"),
                "`processors` is 0: a platform needs at least 1 processor".to_string(),
            ));
        } else if m > MAX_PROCESSORS {
            out.push((
                FieldPath::root("processors"),
                format!("`processors` is {m}: rtlab models at most {MAX_PROCESSORS} processors"),
            ));
        }
        let numbering = format!("processors = {m} {}", self.numbering());
        if !self.clusters.is_empty() && (1..=MAX_PROCESSORS).contains(&m) {
            let mut owner: Vec<Option<usize>> = vec![None; m as usize];
            for (i, cluster) in self.clusters.iter().enumerate() {
                if cluster.is_empty() {
                    out.push((
                        cluster_path(i, None),
                        format!("cluster #{} is empty: a cluster needs a processor", i + 1),
                    ));
                }
                for (j, &cpu) in cluster.iter().enumerate() {
                    let at = cluster_path(i, Some(j));
                    match owner.get_mut(cpu as usize) {
                        None => out.push((
                            at,
                            format!(
                                "cluster #{} names processor {cpu}, which does not exist ({numbering})",
                                i + 1
                            ),
                        )),
                        Some(Some(other)) => out.push((
                            at,
                            if *other == i {
                                format!("cluster #{} names processor {cpu} twice", i + 1)
                            } else {
                                format!(
                                    "processor {cpu} is in cluster #{} and cluster #{}: clusters must not overlap",
                                    *other + 1,
                                    i + 1
                                )
                            },
                        )),
                        Some(slot) => *slot = Some(i),
                    }
                }
            }
            let missing: Vec<String> = owner
                .iter()
                .enumerate()
                .filter(|(_, o)| o.is_none())
                .map(|(cpu, _)| cpu.to_string())
                .take(8)
                .collect();
            if !missing.is_empty() {
                let what = if missing.len() == 1 {
                    format!("processor {} is", missing[0])
                } else {
                    format!("processors {} are", missing.join(", "))
                };
                out.push((
                    FieldPath::root("clusters"),
                    format!(
                        "{what} in no cluster: clusters must cover every processor (write a processor alone as a cluster of its own)"
                    ),
                ));
            }
        }
        for (index, task) in tasks.iter().enumerate() {
            if let Some(cpu) = task.cpu {
                if cpu >= m && m > 0 {
                    out.push((
                        FieldPath::task(index, "cpu"),
                        format!(
                            "task `{}`: cpu {cpu} does not exist ({numbering})",
                            printable(&task.name)
                        ),
                    ));
                }
            }
        }
        out
    }
}

fn cluster_path(i: usize, j: Option<usize>) -> FieldPath {
    let mut path = vec![PathSegment::Key("clusters"), PathSegment::Index(i)];
    path.extend(j.map(PathSegment::Index));
    FieldPath(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Nanos;

    fn task(cpu: Option<u32>) -> Task {
        let mut t = Task::new("a", Nanos::from_ms(10), Nanos::from_ms(1));
        t.cpu = cpu;
        t
    }

    fn messages(p: &Platform, tasks: &[Task]) -> Vec<String> {
        p.check(tasks).into_iter().map(|(_, m)| m).collect()
    }

    #[test]
    fn default_is_one_processor_one_cluster() {
        let p = Platform::default();
        assert!(p.is_default());
        assert_eq!(p.effective_clusters(), vec![vec![0]]);
        assert_eq!(p.describe(), "1 processor");
        assert!(p.check(&[task(Some(0))]).is_empty());
    }

    #[test]
    fn processor_count_bounds() {
        assert_eq!(
            messages(&Platform::new(0), &[]),
            ["`processors` is 0: a platform needs at least 1 processor"]
        );
        assert_eq!(
            messages(&Platform::new(1025), &[]),
            ["`processors` is 1025: rtlab models at most 1024 processors"]
        );
        assert!(messages(&Platform::new(1024), &[]).is_empty());
    }

    #[test]
    fn clusters_must_partition_the_processors() {
        let p = |clusters: Vec<Vec<u32>>| Platform {
            processors: 4,
            clusters,
        };
        assert!(messages(&p(vec![vec![0, 1], vec![2, 3]]), &[]).is_empty());
        assert_eq!(
            messages(&p(vec![vec![0, 1], vec![1, 2, 3]]), &[]),
            ["processor 1 is in cluster #1 and cluster #2: clusters must not overlap"]
        );
        assert_eq!(
            messages(&p(vec![vec![0, 1], vec![2, 3, 4]]), &[]),
            ["cluster #2 names processor 4, which does not exist (processors = 4 numbers them 0 to 3)"]
        );
        assert_eq!(
            messages(&p(vec![vec![0, 1]]), &[]),
            ["processors 2, 3 are in no cluster: clusters must cover every processor (write a processor alone as a cluster of its own)"]
        );
        assert_eq!(
            messages(&p(vec![vec![0, 1, 2, 3], vec![]]), &[]),
            ["cluster #2 is empty: a cluster needs a processor"]
        );
        assert_eq!(
            messages(&p(vec![vec![0, 0, 1, 2, 3]]), &[]),
            ["cluster #1 names processor 0 twice"]
        );
        let ok = p(vec![vec![3, 1], vec![0, 2]]);
        assert_eq!(ok.cluster_of(1), Some(0));
        assert_eq!(ok.cluster_of(2), Some(1));
        assert_eq!(ok.cluster_of(4), None);
        assert_eq!(ok.describe(), "4 processors in clusters {3,1} {0,2}");
    }

    #[test]
    fn a_task_cpu_must_exist() {
        let found = Platform::new(2).check(&[task(Some(1)), task(Some(2))]);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0.to_string(), "task[1].cpu");
        assert_eq!(
            found[0].1,
            "task `a`: cpu 2 does not exist (processors = 2 numbers them 0 to 1)"
        );
        assert_eq!(
            messages(&Platform::new(1), &[task(Some(1))]),
            ["task `a`: cpu 1 does not exist (processors = 1 numbers its one processor 0)"]
        );
    }
}
