//! Coverage analysis and the reshard planner over validated placements: the coverage
//! report of one placement, and the plan that moves the bytes of a source placement into
//! a target placement (the `coverage` and `plan` operations).

use std::ffi::c_char;
use std::sync::OnceLock;

use weight_manifest::{Coverage, Options, Plan, PlanLimits, Quantization};

use crate::api::{handle_arg, run, Failure};
use crate::error::WmError;
use crate::guard::guard;
use crate::handles::{expose, free, WmPlacement};
use crate::text::{bytes_arg, CText};

/// The coverage report of a placement. Opaque; free it with `wm_coverage_free`.
#[derive(Debug)]
pub struct WmCoverage {
    inner: Coverage,
    json: OnceLock<CText>,
}

/// A reshard plan from a source to a target placement. Opaque; free it with
/// `wm_plan_free`.
#[derive(Debug)]
pub struct WmPlan {
    pub(crate) inner: Plan,
    id: CText,
    json: OnceLock<CText>,
}

impl WmPlan {
    /// The handle of a plan.
    pub(crate) fn new(inner: Plan) -> WmPlan {
        WmPlan {
            id: CText::new(inner.plan_id()),
            inner,
            json: OnceLock::new(),
        }
    }
}

/// The limits of a reshard plan: the largest number of regions, and the largest total
/// number of contiguous runs (segments) over all regions.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WmPlanLimits {
    /// The largest number of regions a plan may have.
    pub max_regions: u64,
    /// The largest total number of segments over all regions.
    pub max_segments: u64,
}

impl From<PlanLimits> for WmPlanLimits {
    fn from(limits: PlanLimits) -> Self {
        WmPlanLimits {
            max_regions: limits.max_regions,
            max_segments: limits.max_segments,
        }
    }
}

/// The default plan limits (the ones a NULL `limits` argument of `wm_plan` means).
#[no_mangle]
pub extern "C" fn wm_plan_limits_default() -> WmPlanLimits {
    WmPlanLimits::from(PlanLimits::default())
}

/// The coverage report of a placement (`coverage`). With `require_complete`, a placement
/// that is not complete is rejected with `coverage_incomplete` instead.
///
/// # Safety
/// `placement` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_coverage(
    placement: *const WmPlacement,
    require_complete: bool,
    out: *mut *mut WmCoverage,
) -> *mut WmError {
    // SAFETY: forwarded caller promises.
    unsafe {
        run(out, || {
            let placement = handle_arg(placement, "placement")?;
            let coverage =
                weight_manifest::coverage(&placement.inner, &weight_manifest::Limits::default())
                    .map_err(Failure::Core)?;
            if require_complete {
                coverage.require_complete().map_err(Failure::Core)?;
            }
            Ok(WmCoverage {
                inner: coverage,
                json: OnceLock::new(),
            })
        })
    }
}

/// The coverage report as canonical JSON text, NUL-terminated and owned by the handle;
/// its length in `len` unless NULL. NULL for a NULL handle.
///
/// # Safety
/// `coverage` is NULL or a live handle; `len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_coverage_json(
    coverage: *const WmCoverage,
    len: *mut usize,
) -> *const c_char {
    // SAFETY: forwarded caller promises.
    unsafe {
        expose(coverage, len, |c| {
            c.json.get_or_init(|| CText::new(&c.inner.to_json()))
        })
    }
}

/// Whether every tensor of the placement is completely covered. False for a NULL handle.
///
/// # Safety
/// `coverage` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wm_coverage_is_complete(coverage: *const WmCoverage) -> bool {
    guard(false, || {
        // SAFETY: the caller promises NULL or live; `as_ref` checks NULL.
        unsafe { coverage.as_ref() }.is_some_and(|c| c.inner.is_complete())
    })
}

/// Frees a coverage report; NULL does nothing.
///
/// # Safety
/// `coverage` is NULL or a report from this library, not yet freed, not used after.
#[no_mangle]
pub unsafe extern "C" fn wm_coverage_free(coverage: *mut WmCoverage) {
    // SAFETY: forwarded caller promise.
    unsafe { free(coverage) }
}

/// Plans the move from `source` to `target` (`plan`) within `limits` (NULL: the defaults
/// of `wm_plan_limits_default`).
///
/// # Safety
/// `source` and `target` are each NULL or a live handle; `limits` is NULL or readable;
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_plan(
    source: *const WmPlacement,
    target: *const WmPlacement,
    limits: *const WmPlanLimits,
    out: *mut *mut WmPlan,
) -> *mut WmError {
    // SAFETY: forwarded caller promises; `as_ref` checks NULL.
    unsafe {
        run(out, || {
            let source = handle_arg(source, "source")?;
            let target = handle_arg(target, "target")?;
            let limits = limits
                .as_ref()
                .map_or_else(PlanLimits::default, |l| PlanLimits {
                    max_regions: l.max_regions,
                    max_segments: l.max_segments,
                    ..PlanLimits::default()
                });
            let plan = weight_manifest::plan(&source.inner, &target.inner, &limits)?;
            Ok(WmPlan::new(plan))
        })
    }
}

/// Plans the move from `source` to `target` with the target quantizing in flight (`plan`
/// with a quantization spec, contract §17.8): `spec` is `spec_len` bytes of a quantization
/// spec's JSON (NULL with length 0 is the empty text); `limits` as in `wm_plan`.
///
/// # Safety
/// `source` and `target` are each NULL or a live handle; `spec` is NULL or points to
/// `spec_len` readable bytes; `limits` is NULL or readable; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_plan_quantized(
    source: *const WmPlacement,
    target: *const WmPlacement,
    spec: *const c_char,
    spec_len: usize,
    limits: *const WmPlanLimits,
    out: *mut *mut WmPlan,
) -> *mut WmError {
    // SAFETY: forwarded caller promises; `as_ref` checks NULL.
    unsafe {
        run(out, || {
            let source = handle_arg(source, "source")?;
            let target = handle_arg(target, "target")?;
            let spec = bytes_arg(spec, spec_len, "spec")?;
            let limits = limits
                .as_ref()
                .map_or_else(PlanLimits::default, |l| PlanLimits {
                    max_regions: l.max_regions,
                    max_segments: l.max_segments,
                    ..PlanLimits::default()
                });
            let spec = Quantization::from_json(spec, &Options::default())?;
            let plan =
                weight_manifest::plan_quantized(&source.inner, &target.inner, &spec, &limits)?;
            Ok(WmPlan::new(plan))
        })
    }
}

/// The plan as canonical JSON text, NUL-terminated and owned by the handle; its length in
/// `len` unless NULL. NULL for a NULL handle.
///
/// # Safety
/// `plan` is NULL or a live handle; `len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_plan_json(plan: *const WmPlan, len: *mut usize) -> *const c_char {
    // SAFETY: forwarded caller promises.
    unsafe {
        expose(plan, len, |p| {
            p.json.get_or_init(|| CText::new(&p.inner.to_json()))
        })
    }
}

/// The plan_id, NUL-terminated and owned by the handle; its length in `len` unless NULL.
/// NULL for a NULL handle.
///
/// # Safety
/// `plan` is NULL or a live handle; `len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_plan_id(plan: *const WmPlan, len: *mut usize) -> *const c_char {
    // SAFETY: forwarded caller promises.
    unsafe { expose(plan, len, |p| &p.id) }
}

/// Frees a plan; NULL does nothing.
///
/// # Safety
/// `plan` is NULL or a plan from this library, not yet freed, not used after.
#[no_mangle]
pub unsafe extern "C" fn wm_plan_free(plan: *mut WmPlan) {
    // SAFETY: forwarded caller promise.
    unsafe { free(plan) }
}

#[cfg(test)]
mod tests {
    use std::ptr::{null, null_mut};

    use super::*;
    use crate::code::WmCode;
    use crate::error::{wm_error_code, wm_error_free};

    const PLACEMENT: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/moe-ep-pp/placement.json"
    );

    fn placement() -> *mut WmPlacement {
        let text = std::fs::read(PLACEMENT).unwrap();
        let mut out = null_mut();
        // SAFETY: a live slice and a local out pointer.
        let error = unsafe {
            crate::api::wm_placement_parse(text.as_ptr().cast(), text.len(), &raw mut out)
        };
        assert!(error.is_null());
        out
    }

    #[test]
    fn coverage_and_plan_match_the_core() {
        let core = weight_manifest::Placement::from_json(
            std::fs::read(PLACEMENT).unwrap(),
            &weight_manifest::Options::default(),
        )
        .unwrap();
        let p = placement();
        // SAFETY: live handles and local out pointers; each handle is freed once.
        unsafe {
            let mut coverage = null_mut();
            assert!(wm_coverage(p, true, &raw mut coverage).is_null());
            assert!(wm_coverage_is_complete(coverage));
            let mut len = 0;
            let json = wm_coverage_json(coverage, &raw mut len);
            let json = std::slice::from_raw_parts(json.cast::<u8>(), len);
            assert_eq!(
                json,
                weight_manifest::coverage(&core, &weight_manifest::Limits::default())
                    .unwrap()
                    .to_json()
                    .as_bytes()
            );
            wm_coverage_free(coverage);

            let mut plan = null_mut();
            assert!(wm_plan(p, p, null(), &raw mut plan).is_null());
            let expected = weight_manifest::plan(&core, &core, &PlanLimits::default()).unwrap();
            let id = wm_plan_id(plan, &raw mut len);
            assert_eq!(
                std::slice::from_raw_parts(id.cast::<u8>(), len),
                expected.plan_id().as_bytes()
            );
            let json = wm_plan_json(plan, &raw mut len);
            assert_eq!(
                std::slice::from_raw_parts(json.cast::<u8>(), len),
                expected.to_json().as_bytes()
            );
            wm_plan_free(plan);

            let tight = WmPlanLimits {
                max_regions: 0,
                max_segments: 0,
            };
            let error = wm_plan(p, p, &raw const tight, &raw mut plan);
            assert!(plan.is_null());
            assert_eq!(wm_error_code(error), WmCode::PlanLimitExceeded);
            wm_error_free(error);

            let error = wm_plan(p, null(), null(), &raw mut plan);
            assert_eq!(wm_error_code(error), WmCode::InvalidArgument);
            wm_error_free(error);
            crate::handles::wm_placement_free(p);
        }
        assert_eq!(
            wm_plan_limits_default(),
            WmPlanLimits::from(PlanLimits::default())
        );
    }
}
