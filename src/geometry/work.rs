//! The work budget of the box searches ([`Limits::max_geometry_work`]).
//!
//! A search over `n` boxes (one §8.3 group, one tensor's tiling analysis, one tensor of a
//! plan) may spend `max_geometry_work × n` units, a unit being one index node visited or
//! one box compared. The index ([`super::BoxIndex`]) bounds a query by
//! O(n^(1−1/D) + k) units for D = 2 × (searched axes); that bound grows with the number
//! of axes, so the budget caps what any input can cost, and a search that runs out fails
//! closed ([`Exhausted`]; the callers report `limit_exceeded` naming the tensor).
//!
//! The units per box come with every search as an argument, from the [`Limits`] of the
//! constructor's [`Options`](crate::Options) or the [`PlanLimits`](crate::PlanLimits) of
//! the plan; an entry point that takes neither ([`crate::bind()`], the projections, the
//! in-memory constructors) searches under [`Limits::default()`].
//!
//! [`Limits`]: crate::Limits
//! [`Limits::default()`]: crate::Limits::default

use crate::error::{Code, Error};

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
    /// The budget of a search over `boxes` boxes (stored and queried) at `per_box` units
    /// each (`max_geometry_work`).
    pub(crate) fn new(per_box: u64, boxes: usize) -> Work {
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
    #[cfg(all(test, wm_tools))]
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

#[cfg(test)]
mod tests {
    use super::Work;

    #[test]
    fn budgets_scale_with_the_boxes_and_run_out() {
        let mut work = Work::new(3, 2);
        assert!(work.spend(5).is_ok());
        assert!(work.spend(1).is_ok());
        assert_eq!(work.spend(1).unwrap_err().per_box, 3);
        assert!(Work::new(u64::MAX, usize::MAX).spend(u64::MAX).is_ok());
    }
}
