//! The planner's limits: a plan is counted before it is materialised, and a plan that
//! would exceed a limit is `plan_limit_exceeded` (fail-closed).

use crate::error::{Code, Error, Result};

/// Default [`PlanLimits::max_regions`]: 2^20. A region costs a few hundred bytes in
/// memory and in the wire form; a DeepSeek-V3-sized reshard (TP8/EP8/PP4/DP2 to
/// TP4/EP16/PP8/DP2) needs about 10^5.
pub const DEFAULT_MAX_REGIONS: u64 = 1 << 20;

/// Default [`PlanLimits::max_segments`]: 2^28. Segments (contiguous runs) are never
/// materialised, but each is one copy operation for the executor; the DeepSeek-V3-sized
/// reshard needs about 1.4 × 10^7.
pub const DEFAULT_MAX_SEGMENTS: u64 = 1 << 28;

/// Upper bounds on the size of a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanLimits {
    /// The largest number of regions a plan may have.
    pub max_regions: u64,
    /// The largest total number of contiguous runs (segments) over all regions.
    pub max_segments: u64,
    /// The work budget of the source search, per box ([`Limits::max_geometry_work`]).
    ///
    /// [`Limits::max_geometry_work`]: crate::Limits::max_geometry_work
    pub max_geometry_work: u64,
}

impl Default for PlanLimits {
    fn default() -> Self {
        PlanLimits {
            max_regions: DEFAULT_MAX_REGIONS,
            max_segments: DEFAULT_MAX_SEGMENTS,
            max_geometry_work: crate::limits::Limits::default().max_geometry_work,
        }
    }
}

/// The running totals of a counting pass.
pub(crate) struct Budget {
    limits: PlanLimits,
    pub regions: u64,
    pub segments: u64,
}

impl Budget {
    pub(crate) fn new(limits: PlanLimits) -> Budget {
        Budget {
            limits,
            regions: 0,
            segments: 0,
        }
    }

    /// Counts one region of `segments` runs; fails as soon as a limit is passed (a total
    /// beyond 2^64−1 is past any limit).
    pub(crate) fn add(&mut self, segments: u64) -> Result<()> {
        let exceeded = |what: &str, max: u64| {
            Error::new(
                Code::PlanLimitExceeded,
                format!("reshard plan needs more than max_{what} = {max} {what}"),
            )
        };
        self.regions = self
            .regions
            .checked_add(1)
            .filter(|&n| n <= self.limits.max_regions)
            .ok_or_else(|| exceeded("regions", self.limits.max_regions))?;
        self.segments = self
            .segments
            .checked_add(segments)
            .filter(|&n| n <= self.limits.max_segments)
            .ok_or_else(|| exceeded("segments", self.limits.max_segments))?;
        Ok(())
    }
}
