//! `rtlab sim --scheduler` specs (`fp:rm`, `rr:2ms`, `ipi:burst=4ms`, ...).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| rtlab_fuzz::check_scheduler_spec(text));
