//! The work budget of the box searches ([`Limits::max_geometry_work`]).
//!
//! A search over `n` boxes (one §8.3 group, one tensor's tiling analysis, one tensor of a
//! plan) may spend `max_geometry_work × n` units, a unit being one index node visited or
//! one box compared. The index ([`super::BoxIndex`]) bounds a query by
//! O(n^(1−1/D) + k) units for D = 2 × (searched axes); that bound grows with the number
//! of axes, so the budget caps what any input can cost, and a search that runs out fails
//! closed ([`Exhausted`]; the callers report `limit_exceeded` naming the tensor).
//!
//! Entry points that take no [`Limits`] (validation inside the parsers, [`crate::plan()`])
//! read the budget of the current thread: [`Limits::default()`] unless the caller runs
//! them inside [`crate::limits::with_limits`].

use std::cell::Cell;

use crate::error::{Code, Error};
use crate::limits::Limits;

thread_local! {
    /// Units per box for the searches of this thread.
    static PER_BOX: Cell<u64> = Cell::new(Limits::default().max_geometry_work);
}

/// The budget of one search ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Exhausted {
    /// The units per box that were in force.
    pub per_box: u64,
}

impl Exhausted {
    /// The `limit_exceeded` error for a search over the boxes of `tensor_id`; `what`
    /// names the search ("same-rank overlap search", "coverage analysis", ...).
    #[cold]
    pub(crate) fn error(self, what: &str, tensor_id: &str) -> Error {
        Error::new(
            Code::LimitExceeded,
            format!(
                "{what} of tensor {tensor_id} exceeds max_geometry_work ({} units per box)",
                self.per_box
            ),
        )
    }
}

/// The units one search may still spend.
#[derive(Debug)]
pub(crate) struct Work {
    left: u64,
    per_box: u64,
    spent: u64,
}

impl Work {
    /// The budget of a search over `boxes` boxes (stored and queried) under this thread's
    /// `max_geometry_work`.
    pub(crate) fn for_boxes(boxes: usize) -> Work {
        Work::with_per_box(PER_BOX.with(Cell::get), boxes)
    }

    /// The budget of a search over `boxes` boxes at `per_box` units each.
    pub(crate) fn with_per_box(per_box: u64, boxes: usize) -> Work {
        let boxes = u64::try_from(boxes).unwrap_or(u64::MAX).max(1);
        Work {
            left: per_box.saturating_mul(boxes),
            per_box,
            spent: 0,
        }
    }

    /// A budget that never runs out (tests that compare with a brute force).
    #[cfg(test)]
    pub(crate) fn unlimited() -> Work {
        Work {
            left: u64::MAX,
            per_box: u64::MAX,
            spent: 0,
        }
    }

    /// The units spent so far.
    #[cfg(test)]
    pub(crate) fn spent(&self) -> u64 {
        self.spent
    }

    /// Spends `units`; `Err` once the budget is gone.
    pub(crate) fn spend(&mut self, units: u64) -> Result<(), Exhausted> {
        match self.left.checked_sub(units) {
            Some(left) => {
                self.left = left;
                self.spent = self.spent.saturating_add(units);
                Ok(())
            }
            None => Err(Exhausted {
                per_box: self.per_box,
            }),
        }
    }
}

/// Runs `f` with `per_box` as this thread's `max_geometry_work`, restoring the previous
/// value afterwards (also when `f` unwinds).
pub(crate) fn with_per_box<R>(per_box: u64, f: impl FnOnce() -> R) -> R {
    struct Restore(u64);
    impl Drop for Restore {
        fn drop(&mut self) {
            PER_BOX.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(PER_BOX.with(|c| c.replace(per_box)));
    f()
}

#[cfg(test)]
mod tests {
    use super::{with_per_box, Work};

    #[test]
    fn budgets_scale_with_the_boxes_and_run_out() {
        let mut work = Work::with_per_box(3, 2);
        assert!(work.spend(5).is_ok());
        assert!(work.spend(1).is_ok());
        assert_eq!(work.spend(1).unwrap_err().per_box, 3);
        assert!(Work::with_per_box(u64::MAX, usize::MAX)
            .spend(u64::MAX)
            .is_ok());
        let inner = with_per_box(7, || Work::for_boxes(1).spend(8).is_err());
        assert!(inner);
        assert!(
            Work::for_boxes(1).spend(8).is_ok(),
            "restored after the scope"
        );
    }
}
