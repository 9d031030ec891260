//! Human durations (`25ms`, `1.18ms`), as every file field and flag reads them.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| rtlab_fuzz::check_duration(text));
