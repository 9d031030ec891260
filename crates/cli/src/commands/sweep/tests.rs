//! Flag parsing of `rtlab sweep`: the default tests and `--shard I/N`.

use super::*;
use rtlab_analysis::sweep::DEFAULT_TESTS;

#[test]
fn the_default_tests_are_the_libraries() {
    use clap::Parser;
    #[derive(Parser)]
    struct Line {
        #[command(flatten)]
        args: SweepArgs,
    }
    let args = Line::parse_from(["sweep"]).args;
    assert_eq!(args.tests, None);
    let spec = args.spec_of_flags();
    assert_eq!(spec, SweepSpec::default());
    assert_eq!(
        spec.tests.iter().map(SweepColumn::name).collect::<Vec<_>>(),
        DEFAULT_TESTS
    );
}

#[test]
fn shard_flags_read_i_of_n() {
    assert_eq!(parse_shard("3/8"), Ok((3, 8)));
    assert!(parse_shard("8/8").unwrap_err().contains("outside 0..8"));
    assert!(parse_shard("1/0").unwrap_err().contains("at least 1"));
    assert!(parse_shard("3").unwrap_err().contains("I/N"));
}
