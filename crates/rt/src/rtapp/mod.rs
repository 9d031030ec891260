//! rt-app (scheduler-tools/rt-app), the Linux scheduler developers'
//! synthetic workload generator, side by side with rtlab:
//!
//! * [`export`]: a task set as an rt-app workload (`rtlab taskset export
//!   --format rt-app`); reading one back is the model's file loader's job
//!   (`rtlab_model::file`, detected by content);
//! * [`log`]: rt-app's per-thread logs;
//! * [`summary`]: per-task figures from a log, and the comparison with a
//!   `rtlab run` of the same set;
//! * [`runner`]: runs a set under rt-app with `rtlab run`'s settings
//!   (`rtlab compare --with rt-app`).

pub mod export;
pub mod log;
pub mod runner;
pub mod summary;

pub use export::{
    export, export_with_policies, Calibration, ExportOptions, Exported, RtAppDocument,
};
pub use runner::{find_rtapp, INSTALL_HINT};
pub use summary::{summarize, RtAppComparison, RtAppRun, RtAppTaskComparison, RtAppTaskMetrics};
