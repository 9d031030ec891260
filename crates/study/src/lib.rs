//! The EDF-versus-FPS study of paper 001 (Carletto & Vardanega, Ada-Europe
//! 2017): a fair comparison in which only the scheduler changes, answering
//! four questions as four sections.
//!
//! * [`utilization`]: the highest schedulable utilization per task-set type
//!   (constrained or implicit deadlines x period classes), with the counts
//!   of regular completions (RC), deadline misses (DM) and preemptions (PR);
//! * [`overload`]: transient and permanent overload at several load levels,
//!   misses per task and in total, for EDF, FPS and the hybrid;
//! * [`locking`]: IPCP under FPS against the Deadline Floor Protocol under
//!   EDF, with a protected procedure of growing length and an explicit
//!   per-operation lock cost.
//!
//! Every section drives its runs through one [`rtlab_model::runner::Runner`],
//! so the same experiment runs in the simulator
//! ([`rtlab_sim::runner::SimRunner`]) and, where Linux can run it, on real
//! threads ([`rtlab_rt::runner::RealRunner`], set up by [`real::runner`]),
//! and is testable with a scripted runner. A real miss that would end a
//! series is confirmed by a rerun first ([`confirm`]). The
//! sections' results together are a [`document::StudyDocument`].

#![forbid(unsafe_code)]

pub mod breakdown;
pub mod confirm;
pub mod document;
pub mod global_partitioned;
pub mod hartstone;
pub mod lag_study;
pub mod locking;
pub mod overload;
pub mod real;
pub mod real_parts;
pub mod runner;
pub mod utilization;
