//! What a run measured in total (the `--json` schema): the document types
//! live in the result model (`rtlab_model::results::sim_report`), where the
//! report renders them without depending on the simulator; per task it is
//! the result model's [`TaskMetrics`], shared with real-thread runs.

pub use rtlab_model::results::sim_report::{Deadlock, DeadlockLink, ProcessorMetrics, SimReport};
pub use rtlab_model::results::TaskMetrics;
