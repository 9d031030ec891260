//! `rtlab sweep --locking`: the multiprocessor locking protocols as
//! sweep columns, and the critical sections every set gets
//! (`model::generate::sections`, drawn from their own stream).

use clap::Args;
use rtlab_analysis::sweep::{SharingSpec, SweepColumn, SweepSpec};
use rtlab_model::Nanos;

/// The locking flags of `rtlab sweep`.
#[derive(Debug, Clone, Args)]
pub struct LockingFlags {
    /// Multiprocessor locking protocols to count, comma-separated: mpcp, dpcp, fmlp+, mrsp, msrp
    /// (partitioned by --partition under RM) and omlp (global EDF), or all; every set gets
    /// critical sections drawn by --resources, --sharing, --requests and --cs-length.
    #[arg(long, value_delimiter = ',', value_parser = parse_locking)]
    pub locking: Vec<String>,

    /// Locking: resources shared (r1..rN).
    #[arg(long, default_value_t = 2, requires = "locking")]
    pub resources: u32,

    /// Locking: probability that a task uses each resource.
    #[arg(long, default_value_t = 0.5, requires = "locking")]
    pub sharing: f64,

    /// Locking: critical sections per job on each resource a task uses.
    #[arg(long, default_value_t = 1, requires = "locking")]
    pub requests: u32,

    /// Locking: length of a critical section, uniform in MIN..MAX.
    #[arg(long, default_value = "10us..100us", value_name = "MIN..MAX", value_parser = parse_range, requires = "locking")]
    pub cs_length: (Nanos, Nanos),

    /// Locking: how the partitioned protocols place the tasks (ff, bf, wf, nf, with -decreasing
    /// or -decreasing-density), under RM; worst fit spreads the load and leaves each processor
    /// slack for blocking, first fit fills one to the brim.
    #[arg(
        long,
        default_value = "wf-decreasing",
        value_name = "HEURISTIC",
        requires = "locking"
    )]
    pub partition: String,
}

impl LockingFlags {
    /// The sections' model, with `--locking` only.
    pub fn sharing(&self) -> Option<SharingSpec> {
        (!self.locking.is_empty()).then(|| SharingSpec {
            resources: self.resources,
            sharing: self.sharing,
            requests: self.requests,
            cs_min: self.cs_length.0,
            cs_max: self.cs_length.1,
            heuristic: self.partition.clone(),
        })
    }

    /// `--test`'s columns (the default ones without it, unless only
    /// `--locking` is given), then `--locking`'s protocols.
    pub fn columns(&self, tests: Option<&[SweepColumn]>, cpus: u32) -> Vec<SweepColumn> {
        let mut columns = match tests {
            Some(tests) => tests.to_vec(),
            None if self.locking.is_empty() => SweepSpec::default_tests(cpus),
            None => Vec::new(),
        };
        for name in &self.locking {
            let protocols = match name.as_str() {
                "all" => rtlab_model::mp_locking::MpProtocol::ALL.to_vec(),
                one => one.parse().into_iter().collect(),
            };
            for p in protocols {
                let column = SweepColumn::Locking(p);
                if !columns.contains(&column) {
                    columns.push(column);
                }
            }
        }
        columns
    }
}

/// One `--locking` value: a multiprocessor protocol or `all`.
fn parse_locking(text: &str) -> Result<String, String> {
    if text == "all" {
        return Ok(text.to_string());
    }
    text.parse::<rtlab_model::mp_locking::MpProtocol>()
        .map(|p| p.name().to_string())
        .map_err(|e| format!("{e}, or all"))
}

/// `MIN..MAX` durations.
fn parse_range(text: &str) -> Result<(Nanos, Nanos), String> {
    let (a, b) = text
        .split_once("..")
        .ok_or_else(|| format!("`{text}`: write MIN..MAX, e.g. 10us..100us"))?;
    let parse = |t: &str| t.parse::<Nanos>().map_err(|e| format!("`{text}`: {e}"));
    Ok((parse(a)?, parse(b)?))
}
