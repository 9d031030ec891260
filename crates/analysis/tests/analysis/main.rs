//! Integration tests of rtlab-analysis: textbook examples with known
//! response times, paper 004's figures, and properties that tie the tests
//! together (checked against a brute-force simulator).

mod common;
mod multiprocessor;
mod paper004;
mod properties;
mod textbook;
