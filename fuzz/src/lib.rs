//! The invariants the fuzz targets check, one function per input kind.
//!
//! Each target feeds arbitrary UTF-8 text to the library entry point the CLI
//! uses and checks more than "no panic":
//!
//! - an error renders as exactly one line (rtlab's promise for every error);
//! - what is accepted is valid (a loaded task set has no validation error);
//! - what is accepted round-trips: printed in rtlab's own format and parsed
//!   again, it gives the same value.

use rtlab_model::file::{self, Format};
use rtlab_model::overheads::Overheads;
use rtlab_model::{Nanos, Severity};
use rtlab_sim::SchedulerSpec;

/// Panics unless `message` is one non-empty line.
pub fn assert_one_line(message: &str) {
    assert!(!message.is_empty(), "empty error message");
    assert!(
        !message.contains(['\n', '\r']),
        "error message spans lines: {message:?}"
    );
}

/// A task-set document (`format`): an error is one line; an accepted set has
/// no validation error and survives a round trip through both formats.
pub fn check_taskset(text: &str, format: Format) {
    match file::parse_str(text, format, "fuzz", "fuzz") {
        Err(e) => assert_one_line(&e.to_string()),
        Ok(loaded) => {
            let set = &loaded.set;
            assert!(
                set.validate().iter().all(|d| d.severity != Severity::Error),
                "a loaded set fails validation: {set:?}"
            );
            for (again, format) in [
                (file::to_toml_string(set), Format::Toml),
                (file::to_json_string(set), Format::Json),
            ] {
                let reloaded =
                    file::parse_str(&again, format, "again", "fuzz").unwrap_or_else(|e| {
                        panic!("{format:?} written by rtlab does not load: {e}\n{again}")
                    });
                assert_eq!(&reloaded.set, set, "{format:?} round trip changed the set");
            }
        }
    }
}

/// An overheads file: an error is one line; an accepted file round-trips
/// through [`Overheads::to_toml_string`].
pub fn check_overheads(text: &str) {
    match Overheads::parse_toml(text, "fuzz", "fuzz") {
        Err(e) => assert_one_line(&e.to_string()),
        Ok(overheads) => {
            let again = overheads.to_toml_string();
            let reloaded = Overheads::parse_toml(&again, "again", "fuzz")
                .unwrap_or_else(|e| panic!("overheads written by rtlab do not load: {e}\n{again}"));
            assert_eq!(reloaded, overheads, "round trip changed the overheads");
        }
    }
}

/// A duration: an error is one line; a parsed duration prints and parses
/// back to the same value.
pub fn check_duration(text: &str) {
    match text.parse::<Nanos>() {
        Err(e) => assert_one_line(&e.to_string()),
        Ok(d) => {
            let printed = d.to_string();
            assert_eq!(
                printed.parse::<Nanos>(),
                Ok(d),
                "`{text}` printed as `{printed}`"
            );
        }
    }
}

/// A `--scheduler` spec: an error is one line; a parsed spec prints and
/// parses back to the same spec, and builds a scheduler for a small set.
pub fn check_scheduler_spec(text: &str) {
    match text.parse::<SchedulerSpec>() {
        Err(e) => assert_one_line(&e.to_string()),
        Ok(spec) => {
            let printed = spec.to_string();
            assert_eq!(
                printed.parse::<SchedulerSpec>().as_ref(),
                Ok(&spec),
                "`{text}` printed as `{printed}`"
            );
            let set = rtlab_model::catalog::build("lf-scenario-4").expect("a catalog set");
            if let Err(e) = spec.build_for(&set) {
                assert_one_line(&e.to_string());
            }
        }
    }
}
