//! Task sets shared by the integration tests, written out from the issue
//! text (issue 2) so the tests do not depend on the catalog's evolution.

#![allow(dead_code)]

use rtlab_model::{Nanos, Task, TaskSet};

/// `(name, C, T)` in microseconds, implicit deadlines, declaration order.
pub fn implicit(name: &str, tasks: &[(&str, u64, u64)]) -> TaskSet {
    TaskSet::new(
        name,
        tasks
            .iter()
            .map(|&(n, c, t)| Task::new(n, Nanos::from_us(t), Nanos::from_us(c)))
            .collect(),
    )
}

/// The Generic Avionics Platform (Locke, Vogel & Mesler 1991), C/T in ms.
pub const GAP_MS: [(&str, u64, u64); 16] = [
    ("weapon_release", 3, 200),
    ("radar_tracking_filter", 2, 25),
    ("rwr_contact_mgmt", 5, 25),
    ("data_bus_poll_device", 1, 40),
    ("weapon_aiming", 3, 50),
    ("radar_target_update", 5, 50),
    ("nav_update", 8, 59),
    ("display_graphic", 9, 80),
    ("display_hook_update", 2, 80),
    ("tracking_target_update", 5, 100),
    ("nav_steering_cmds", 3, 200),
    ("display_stores_update", 1, 200),
    ("display_key_set", 1, 200),
    ("display_stat_update", 3, 200),
    ("bet_e_status_update", 1, 1000),
    ("nav_status", 1, 1000),
];

/// Paper 004's 15-task avionics set: GAP without Weapon Release (U = 0.8301).
pub fn avionics() -> TaskSet {
    let tasks: Vec<(&str, u64, u64)> = GAP_MS[1..]
        .iter()
        .map(|&(n, c, t)| (n, c * 1000, t * 1000))
        .collect();
    implicit("avionics", &tasks)
}

/// Paper 004 Table 2, the INS set, C/T in us (U = 0.8840), times `scale`.
pub fn ins(scale: u64) -> TaskSet {
    let table = [
        (1180, 2500),
        (4280, 40000),
        (10280, 62500),
        (20280, 1000000),
        (100280, 1000000),
        (25000, 1250000),
    ];
    let names = ["ins1", "ins2", "ins3", "ins4", "ins5", "ins6"];
    let tasks: Vec<(&str, u64, u64)> = table
        .iter()
        .zip(names)
        .map(|(&(c, t), n)| (n, c * scale, t * scale))
        .collect();
    implicit("ins", &tasks)
}
