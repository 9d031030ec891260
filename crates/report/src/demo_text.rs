//! `rtlab demo`'s tables: deadline misses per scheduler or policy (rows)
//! in each of the four scenarios of paper 000 (columns).

use crate::table;

/// `rows`: the scheduler or policy, then one cell per scenario; `first`
/// names the first column.
pub fn scenario_table(first: &str, rows: &[Vec<String>]) -> String {
    let columns = ["scenario 1", "scenario 2", "scenario 3", "scenario 4"];
    let mut header = vec![first];
    header.extend(columns);
    let mut t = table::new(&header, &columns);
    for row in rows {
        t.add_row(row.clone());
    }
    t.render()
}
