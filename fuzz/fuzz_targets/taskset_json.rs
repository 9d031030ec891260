//! Task-set files in JSON, as `rtlab taskset validate set.json` reads them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtlab_model::file::Format;

fuzz_target!(|text: &str| rtlab_fuzz::check_taskset(text, Format::Json));
