// weight_manifest_analysis.hpp: coverage analysis and the reshard planner, part of the
// C++17 wrapper (included by weight_manifest.hpp; include that one).

#ifndef WEIGHT_MANIFEST_ANALYSIS_HPP
#define WEIGHT_MANIFEST_ANALYSIS_HPP

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "weight_manifest.hpp"

namespace weight_manifest {

/// The limits of a reshard plan (`max_regions`, `max_segments`).
using PlanLimits = ::WmPlanLimits;

/// The default plan limits.
inline PlanLimits default_plan_limits() noexcept { return ::wm_plan_limits_default(); }

/// The coverage report of a placement (which tensors its fragments tile completely).
class Coverage {
 public:
  /// The report as canonical JSON text.
  std::string json() const {
    std::size_t len = 0;
    const char* text = ::wm_coverage_json(handle_.get(), &len);
    return detail::copy(text, len);
  }
  /// Whether every tensor is complete.
  bool is_complete() const noexcept { return ::wm_coverage_is_complete(handle_.get()); }

 private:
  friend struct detail::Access;
  explicit Coverage(::WmCoverage* handle) noexcept : handle_(handle) {}
  std::unique_ptr<::WmCoverage, detail::Deleter<::WmCoverage, ::wm_coverage_free>> handle_;
};

/// A reshard plan: the byte regions that move a source placement's data into a target
/// placement.
class Plan {
 public:
  /// The plan as canonical JSON text.
  std::string json() const {
    std::size_t len = 0;
    const char* text = ::wm_plan_json(handle_.get(), &len);
    return detail::copy(text, len);
  }
  /// The plan_id.
  std::string plan_id() const {
    std::size_t len = 0;
    const char* text = ::wm_plan_id(handle_.get(), &len);
    return detail::copy(text, len);
  }

 private:
  friend struct detail::Access;
  explicit Plan(::WmPlan* handle) noexcept : handle_(handle) {}
  std::unique_ptr<::WmPlan, detail::Deleter<::WmPlan, ::wm_plan_free>> handle_;
};

/// The coverage report of `placement` (coverage); with `require_complete`, a placement
/// that is not complete is rejected with coverage_incomplete.
inline Result<Coverage> try_coverage(const Placement& placement, bool require_complete = false) {
  return detail::Access::run<Coverage, ::WmCoverage>([&](::WmCoverage** out) {
    return ::wm_coverage(detail::Access::raw(placement), require_complete, out);
  });
}
inline Coverage coverage(const Placement& placement, bool require_complete = false) {
  return detail::value_or_throw(try_coverage(placement, require_complete));
}

/// Plans the move from `source` to `target` (plan) within `limits` (std::nullopt: the
/// defaults).
inline Result<Plan> try_plan(const Placement& source, const Placement& target,
                             const std::optional<PlanLimits>& limits = std::nullopt) {
  return detail::Access::run<Plan, ::WmPlan>([&](::WmPlan** out) {
    return ::wm_plan(detail::Access::raw(source), detail::Access::raw(target),
                     limits ? &*limits : nullptr, out);
  });
}
inline Plan plan(const Placement& source, const Placement& target,
                 const std::optional<PlanLimits>& limits = std::nullopt) {
  return detail::value_or_throw(try_plan(source, target, limits));
}

}  // namespace weight_manifest

#endif  // WEIGHT_MANIFEST_ANALYSIS_HPP
