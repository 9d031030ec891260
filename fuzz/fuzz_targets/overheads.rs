//! Overheads files, as `--overheads FILE` reads them.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| rtlab_fuzz::check_overheads(text));
