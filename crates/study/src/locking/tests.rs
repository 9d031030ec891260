use super::*;

fn us(v: u64) -> u64 {
    v * 1_000
}

fn ms(v: u64) -> u64 {
    v * 1_000_000
}

/// H (T = D = 10 ms, first release 1 ms) and L (T = D = 20 ms), each with
/// one 2 ms call of the procedure: H after 0.5 ms of its 1 ms of work, L
/// after 1 ms of its 2 ms. c = 100 us, r = 50 us, 20 ms.
fn pair() -> LockingConfig {
    let task = |name: &str, t, o, c, at| SharedTask {
        name: name.into(),
        period_ns: ms(t),
        deadline_ns: ms(t),
        offset_ns: ms(o),
        compute_ns: us(c),
        section_at_ns: us(at),
    };
    LockingConfig {
        tasks: vec![task("H", 10, 1, 1000, 500), task("L", 20, 0, 2000, 1000)],
        lengths: vec![Nanos::from_ms(2)],
        priority_change_cost: Nanos::from_us(100),
        clock_read_cost: Nanos::from_us(50),
        duration: Nanos::from_ms(20),
    }
}

/// The schedule by hand, times in ms, each lock or unlock costing k
/// (0.1 under IPCP, 0.15 under DFP) in which no job runs:
///
/// * 0: L runs. 1: L locks (IPCP: ceiling = H's priority; DFP: deadline
///   1 + floor 10 = 11) just as H arrives (deadline 11): the tie goes to
///   the running L. L's section runs 1+k .. 3+k, its unlock costs k.
/// * H runs from 3+2k: locks at 3.5+2k, unlocks at 5.5+3k, completes at
///   6+4k (response 5+4k); L finishes its last 1 ms at 7+4k.
/// * H's second job (11): locks at 11.5, unlocks at 13.5+k, completes at
///   14+2k (response 3+2k). L's second job would arrive at 20, the end.
///
/// IPCP: responses H 5.4, L 7.4; DFP: H 5.6, L 7.6. Six operations each:
/// overhead 0.6 ms and 0.9 ms. H is blocked by L's whole section, 2 ms,
/// the blocking bound of both analyses; L is never blocked.
#[test]
fn lock_costs_on_a_hand_computed_schedule() {
    let section = run(&pair()).unwrap();
    assert_eq!(section.rows.len(), 2);
    let (ipcp, dfp) = (&section.rows[0], &section.rows[1]);
    assert_eq!(
        (ipcp.protocol, dfp.protocol),
        (LockingArm::Ipcp, LockingArm::Dfp)
    );
    assert_eq!(
        (ipcp.scheduler.as_str(), dfp.scheduler.as_str()),
        ("fp:dm", "edf")
    );
    assert_eq!(
        (ipcp.operation_cost_ns, dfp.operation_cost_ns),
        (us(100), us(150))
    );
    assert_eq!((ipcp.released, ipcp.misses), (3, 0));
    assert_eq!((dfp.released, dfp.misses), (3, 0));
    assert_eq!((ipcp.operations, dfp.operations), (Some(6), Some(6)));
    assert_eq!((ipcp.overhead_ns, dfp.overhead_ns), (us(600), us(900)));
    assert_eq!(ipcp.overhead_ns_per_s, 30_000_000.0);
    assert_eq!(ipcp.utilization, 0.5);
    assert_eq!(
        (ipcp.max_blocking_bound_ns, dfp.max_blocking_bound_ns),
        (ms(2), ms(2))
    );
    assert_eq!(
        (
            ipcp.max_observed_inversion_ns,
            dfp.max_observed_inversion_ns
        ),
        (ms(2), ms(2))
    );
    assert!(ipcp.trace_complete && dfp.trace_complete);

    let per_task: Vec<(LockingArm, &str, Option<u64>, u64, u64)> = section
        .task_rows
        .iter()
        .map(|t| {
            (
                t.protocol,
                t.task.as_str(),
                t.max_response_ns,
                t.blocking_bound_ns,
                t.observed_inversion_ns,
            )
        })
        .collect();
    assert_eq!(
        per_task,
        vec![
            (LockingArm::Ipcp, "H", Some(us(5400)), ms(2), ms(2)),
            (LockingArm::Ipcp, "L", Some(us(7400)), 0, 0),
            (LockingArm::Dfp, "H", Some(us(5600)), ms(2), ms(2)),
            (LockingArm::Dfp, "L", Some(us(7600)), 0, 0),
        ]
    );

    assert_eq!(
        section.comparisons,
        vec![OverheadComparison {
            length_ns: ms(2),
            ipcp_overhead_ns: us(600),
            dfp_overhead_ns: us(900),
            dfp_minus_ipcp_ns: 300_000,
            dfp_over_ipcp: Some(1.5),
        }]
    );
    // One length: no line, no last step.
    assert_eq!(section.growth[0].slope_ns_per_doubling, None);
    assert_eq!(section.growth[1].last_step_change, None);
}

#[test]
fn without_costs_there_is_no_overhead_and_no_operation_count() {
    let config = LockingConfig {
        priority_change_cost: Nanos::ZERO,
        clock_read_cost: Nanos::ZERO,
        ..pair()
    };
    let section = run(&config).unwrap();
    for row in &section.rows {
        assert_eq!((row.overhead_ns, row.operations), (0, None));
    }
    assert_eq!(section.comparisons[0].dfp_over_ipcp, None);
    // H's first response without costs: 5 ms under both protocols.
    assert_eq!(section.task_rows[0].max_response_ns, Some(ms(5)));
    assert_eq!(section.task_rows[2].max_response_ns, Some(ms(5)));
}

#[test]
fn growth_is_fitted_against_log2_of_the_length() {
    let row = |length_ns, overhead_ns| LockingRow {
        length_ns,
        protocol: LockingArm::Dfp,
        scheduler: "edf".into(),
        utilization: 0.5,
        operation_cost_ns: 1,
        released: 1,
        misses: 0,
        operations: Some(overhead_ns),
        overhead_ns,
        overhead_ns_per_s: 0.0,
        overhead_share: 0.0,
        max_blocking_bound_ns: 0,
        max_observed_inversion_ns: 0,
        trace_complete: true,
    };
    // 100 ns more per doubling: exactly logarithmic; last step 400 -> 500.
    let rows = [
        row(1000, 200),
        row(2000, 300),
        row(4000, 400),
        row(8000, 500),
    ];
    let g = growth(&rows, LockingArm::Dfp);
    assert!((g.slope_ns_per_doubling.unwrap() - 100.0).abs() < 1e-9);
    assert!((g.r_squared.unwrap() - 1.0).abs() < 1e-12);
    assert!((g.last_step_change.unwrap() - 0.25).abs() < 1e-12);
    assert_eq!(growth(&rows, LockingArm::Ipcp).slope_ns_per_doubling, None);
}

#[test]
fn settings_that_cannot_mean_anything_are_refused() {
    let message = |config: LockingConfig| run(&config).unwrap_err().to_string();
    let mut late_call = pair();
    late_call.tasks[0].section_at_ns = ms(2);
    assert_eq!(
        message(late_call),
        "locking: tasks: task `H` calls the procedure after its own work ends (section_at 2ms > compute 1ms)"
    );
    assert!(message(LockingConfig {
        lengths: vec![Nanos::ZERO],
        ..pair()
    })
    .starts_with("locking: lengths: give at least one procedure length"));
    // 10 ms of procedure makes H's C = 11 ms > D = 10 ms.
    assert!(message(LockingConfig {
        lengths: vec![Nanos::from_ms(10)],
        ..pair()
    })
    .starts_with("locking: lengths: with a 10ms procedure: "));
}

/// The defaults: prints the tables the report quotes
/// (`cargo test -p rtlab-study --release -- --ignored --nocapture locking_defaults`).
#[test]
#[ignore = "prints figures; run by hand"]
fn locking_defaults() {
    let section = run(&LockingConfig::default()).unwrap();
    println!("length_us proto U     released misses ops  overhead_us per_s_us share   bound_us observed_us");
    for r in &section.rows {
        println!(
            "{:>8} {:<5} {:.3} {:>8} {:>6} {:>4?} {:>10} {:>8.0} {:.5} {:>8} {:>8}",
            r.length_ns / 1000,
            r.protocol.name(),
            r.utilization,
            r.released,
            r.misses,
            r.operations,
            r.overhead_ns / 1000,
            r.overhead_ns_per_s / 1000.0,
            r.overhead_share,
            r.max_blocking_bound_ns / 1000,
            r.max_observed_inversion_ns / 1000,
        );
    }
    for t in &section.task_rows {
        println!(
            "{:>6} {:<5} {} misses {} maxR {:?} bound {} observed {}",
            t.length_ns / 1000,
            t.protocol.name(),
            t.task,
            t.misses,
            t.max_response_ns.map(|n| n / 1000),
            t.blocking_bound_ns / 1000,
            t.observed_inversion_ns / 1000
        );
    }
    for c in &section.comparisons {
        println!("{c:?}");
    }
    for g in &section.growth {
        println!("{g:?}");
    }
}
