//! Task-set files in TOML, as `rtlab taskset validate set.toml` reads them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtlab_model::file::Format;

fuzz_target!(|text: &str| rtlab_fuzz::check_taskset(text, Format::Toml));
