//! rtlab's results as pictures and pages: the data of each plot extracted
//! from a stored run ([`series`]), drawn as SVG ([`plot`]), chosen per kind
//! of run ([`figures`]) and put into one self-contained HTML file
//! ([`html`]); and each command's text, CSV and documents, one module per
//! command ([`study_text`], [`hartstone_text`], [`breakdown_text`],
//! [`latency_text`], [`lag_study_text`], ...).
#![forbid(unsafe_code)]

pub mod analyze_text;
pub mod breakdown_text;
pub mod characterize_text;
pub mod compare_text;
pub mod demo_text;
pub mod disturbance_text;
pub mod doctor_text;
pub mod drift;
pub mod figures;
pub mod global_partitioned;
pub mod hartstone_text;
pub mod headline;
pub mod html;
pub mod human;
pub mod kernel_trace;
pub mod lag_study_text;
pub mod latency_text;
pub mod partition_text;
pub mod plot;
pub mod repeat;
pub mod results_text;
pub mod run_text;
pub mod series;
pub mod sim_text;
pub mod sources;
pub mod study_text;
pub mod sweep_text;
pub mod table;
pub mod taskset_text;
pub mod view;
