//! `--trace FILE`: the simulator's Chrome trace through the one output-file
//! writer ([`rtlab_model::file::OutputFile`]): a regular file is written to
//! its `.partial` and renamed once the trace is whole; a device or pipe is
//! written in place, never replaced.

use std::cell::RefCell;
use std::rc::Rc;

use rtlab_model::file::{OutputFile, PendingOutput};

/// What opens `path` (if any) when the simulator starts its trace, and
/// what puts the trace at its path once it is whole ([`Placement::commit`]).
pub fn open(path: Option<String>) -> (Option<rtlab_sim::OpenOutput>, Placement) {
    let placement = Placement(Rc::new(RefCell::new(None)));
    let slot = placement.0.clone();
    let open = path.map(|path| -> rtlab_sim::OpenOutput {
        Box::new(move || {
            let (file, pending) = OutputFile::create(path)?.into_parts();
            *slot.borrow_mut() = Some(pending);
            Ok(Box::new(std::io::BufWriter::new(file)) as Box<dyn std::io::Write + Send>)
        })
    });
    (open, placement)
}

/// The rename still owed to an opened trace file (none before it opened,
/// nor without a path).
pub struct Placement(Rc<RefCell<Option<PendingOutput>>>);

impl Placement {
    /// After a run: a trace written whole is put at its path; one that
    /// failed leaves the old file as it was (its `.partial` removed).
    pub fn commit(self, written: std::io::Result<()>) -> std::io::Result<()> {
        let pending = self.0.borrow_mut().take();
        match (written, pending) {
            (Ok(()), Some(pending)) => pending.commit(),
            (written, _) => written,
        }
    }
}
