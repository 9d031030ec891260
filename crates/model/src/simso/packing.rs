//! The processor assignments SimSo's partitioned schedulers make for
//! themselves (`simso/utils/PartitionedScheduler.py`, `P_RM.py`), computed
//! as SimSo computes them, so that a `P_EDF` or `P_RM` configuration read by
//! rtlab gets the `cpu` fields SimSo would simulate, and an export knows
//! whether SimSo will place the tasks where rtlab has them.
//!
//! SimSo works in doubles of milliseconds (`task.wcet`, `task.period` as the
//! XML's decimals): these functions take each time as the double of its
//! decimal in milliseconds ([`super::format_ms`], the text rtlab writes) and
//! repeat SimSo's arithmetic step for step, so a sum that is exactly 1 in
//! rationals is compared as SimSo's doubles compare it.

use crate::task::Task;

use super::millis::format_ms;

/// `(wcet, period)` of each task in milliseconds, as SimSo's doubles.
fn millis(tasks: &[Task]) -> Vec<(f64, f64)> {
    let ms = |ns: u64| {
        format_ms(ns)
            .and_then(|text| text.parse::<f64>().ok())
            .unwrap_or(ns as f64 / 1e6)
    };
    tasks
        .iter()
        .map(|t| (ms(t.wcet.as_ns()), ms(t.period.as_ns())))
        .collect()
}

/// `P_EDF`'s assignment (`decreasing_first_fit`): the tasks sorted by
/// decreasing `wcet / period` (a stable sort: equal ones keep file order),
/// each put on the first of the `m` processors (file order) where
/// `load × period + wcet <= period`, `load` the sum of the `wcet / period`
/// placed there before. Each task's processor index (0-based), in file
/// order; `Err(i)` names the first task no processor takes (SimSo then
/// stops with `Packing failed`).
pub fn p_edf(tasks: &[Task], m: u32) -> Result<Vec<u32>, usize> {
    let times = millis(tasks);
    let mut order: Vec<usize> = (0..tasks.len()).collect();
    order.sort_by(|&a, &b| {
        let u = |i: usize| -(times[i].0 / times[i].1);
        u(a).total_cmp(&u(b))
    });
    let mut load = vec![0.0f64; m as usize];
    let mut cpu = vec![0u32; tasks.len()];
    for i in order {
        let (wcet, period) = times[i];
        let j = load
            .iter()
            .position(|l| l * period + wcet <= period)
            .ok_or(i)?;
        load[j] += wcet / period;
        cpu[i] = j as u32;
    }
    Ok(cpu)
}

/// `P_RM`'s assignment (its own `packer`): each task in file order on the
/// processor of the lowest load so far (the first such in file order), no
/// capacity check; load is the sum of `wcet / period`.
pub fn p_rm(tasks: &[Task], m: u32) -> Vec<u32> {
    let mut load = vec![0.0f64; m.max(1) as usize];
    millis(tasks)
        .into_iter()
        .map(|(wcet, period)| {
            let mut j = 0;
            for (i, l) in load.iter().enumerate() {
                if *l < load[j] {
                    j = i;
                }
            }
            load[j] += wcet / period;
            j as u32
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Nanos;

    fn task(c_ms: u64, t_ms: u64) -> Task {
        Task::new("t", Nanos::from_ms(t_ms), Nanos::from_ms(c_ms))
    }

    #[test]
    fn p_edf_is_first_fit_on_decreasing_utilization() {
        // u = 0.3, 0.6, 0.5, 0.4, 0.2: placed 0.6 -> 0, 0.5 -> 1, 0.4 -> 0
        // (1.0 fits exactly), 0.3 -> 1, 0.2 -> 1 (0.5 + 0.3 + 0.2 = 1.0).
        let tasks = [
            task(3, 10),
            task(6, 10),
            task(5, 10),
            task(4, 10),
            task(2, 10),
        ];
        assert_eq!(p_edf(&tasks, 2), Ok(vec![1, 0, 1, 0, 1]));
        // Equal utilizations keep file order; the third 0.6 fits nowhere.
        let tasks = [task(6, 10), task(6, 10), task(6, 10)];
        assert_eq!(p_edf(&tasks, 2), Err(2));
    }

    #[test]
    fn p_rm_takes_the_least_loaded_processor_in_file_order() {
        // loads: [0.5, 0] -> [0.5, 0.2] -> [0.5, 0.5] -> 0.1 to the first.
        let tasks = [task(5, 10), task(2, 10), task(3, 10), task(1, 10)];
        assert_eq!(p_rm(&tasks, 2), vec![0, 1, 1, 0]);
        // No capacity check: 3 x 0.9 on two processors.
        assert_eq!(
            p_rm(&[task(9, 10), task(9, 10), task(9, 10)], 2),
            vec![0, 1, 0]
        );
    }
}
