// weight_manifest_analysis.hpp: coverage analysis, the reshard planner and plan binding,
// part of the C++17 wrapper (included by weight_manifest.hpp; include that one).

#ifndef WEIGHT_MANIFEST_ANALYSIS_HPP
#define WEIGHT_MANIFEST_ANALYSIS_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

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
  /// Reads a reshard plan document (the JSON text json() gives, in any spelling) strictly
  /// and checks its plan_id (contract §17.3, "Reading a plan"); rejections:
  /// plan_document_invalid, plan_id_mismatch, the reader's codes and limit_exceeded.
  static Result<Plan> try_parse(std::string_view json) {
    return detail::Access::run<Plan, ::WmPlan>(
        [&](::WmPlan** out) { return ::wm_plan_parse(json.data(), json.size(), out); });
  }
  static Plan parse(std::string_view json) { return detail::value_or_throw(try_parse(json)); }

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

/// A reshard plan bound to the runtime bindings of its two placements: the copy list,
/// grouped by (source worker, target worker), with absolute addresses (contract §17.4).
class BoundPlan {
 public:
  /// Reads a bound plan document (what a worker receives from its coordinator) strictly
  /// and checks its bound_plan_id.
  static Result<BoundPlan> try_parse(std::string_view json) {
    return detail::Access::run<BoundPlan, ::WmBoundPlan>([&](::WmBoundPlan** out) {
      return ::wm_bound_plan_parse(json.data(), json.size(), out);
    });
  }
  static BoundPlan parse(std::string_view json) { return detail::value_or_throw(try_parse(json)); }

  /// The bound plan as canonical JSON text.
  std::string json() const {
    std::size_t len = 0;
    const char* text = ::wm_bound_plan_json(handle_.get(), &len);
    return detail::copy(text, len);
  }
  /// The bound_plan_id.
  std::string bound_plan_id() const {
    std::size_t len = 0;
    const char* text = ::wm_bound_plan_id(handle_.get(), &len);
    return detail::copy(text, len);
  }

 private:
  friend struct detail::Access;
  explicit BoundPlan(::WmBoundPlan* handle) noexcept : handle_(handle) {}
  std::unique_ptr<::WmBoundPlan, detail::Deleter<::WmBoundPlan, ::wm_bound_plan_free>> handle_;
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

/// Plans the move from `source` to `target` with the target quantizing in flight (plan
/// with a quantization spec, contract §17.8): `spec` is the spec's JSON text. Rejections:
/// the spec's reading (quantization_document_invalid, quantization_unsupported), then
/// plan_model_mismatch, the spec's rules against the placements (quantization_*), then
/// those of try_plan.
inline Result<Plan> try_plan_quantized(const Placement& source, const Placement& target,
                                       std::string_view spec,
                                       const std::optional<PlanLimits>& limits = std::nullopt) {
  return detail::Access::run<Plan, ::WmPlan>([&](::WmPlan** out) {
    return ::wm_plan_quantized(detail::Access::raw(source), detail::Access::raw(target), spec.data(),
                               spec.size(), limits ? &*limits : nullptr, out);
  });
}

/// Binds `plan` to the runtime bindings of its source and target placements (plan.bind).
/// A given generation is a fence: a binding of another generation is stale
/// (plan_binding_generation_mismatch); std::nullopt accepts any. Other rejections:
/// plan_binding_placement_id_mismatch, plan_binding_digest_mismatch, and per region
/// plan_document_invalid, plan_binding_fragment_missing, plan_binding_range_invalid.
inline Result<BoundPlan> try_bind_plan(const Plan& plan, const Binding& source,
                                       const Binding& target,
                                       std::optional<std::uint64_t> source_generation = std::nullopt,
                                       std::optional<std::uint64_t> target_generation = std::nullopt) {
  return detail::Access::run<BoundPlan, ::WmBoundPlan>([&](::WmBoundPlan** out) {
    return ::wm_bind_plan(detail::Access::raw(plan), detail::Access::raw(source),
                          detail::Access::raw(target),
                          source_generation ? &*source_generation : nullptr,
                          target_generation ? &*target_generation : nullptr, out);
  });
}
inline BoundPlan bind_plan(const Plan& plan, const Binding& source, const Binding& target,
                           std::optional<std::uint64_t> source_generation = std::nullopt,
                           std::optional<std::uint64_t> target_generation = std::nullopt) {
  return detail::value_or_throw(
      try_bind_plan(plan, source, target, source_generation, target_generation));
}

/// The side of a bound plan a fence belongs to.
enum class FenceSide { source, target };

namespace detail {
inline std::string_view side_name(FenceSide side) noexcept {
  return side == FenceSide::source ? std::string_view("source") : std::string_view("target");
}
inline std::optional<Error> fence_outcome(::WmError* error) {
  if (error == nullptr) {
    return std::nullopt;
  }
  return Access::take(error);
}
}  // namespace detail

/// The fence rule (contract §17.7): what one worker holds now, as a held fence document
/// (`fence.schema.json`), against `bound`'s fence for `side`. std::nullopt when it holds;
/// else transfer_fence_mismatch with the pointer `/{side}/{member}` of the bound plan (or
/// fence_document_invalid and the reader's codes for the document).
inline std::optional<Error> try_check_fence(const BoundPlan& bound, FenceSide side,
                                            std::string_view held) {
  const std::string_view name = detail::side_name(side);
  return detail::fence_outcome(::wm_fence_check(detail::Access::raw(bound), name.data(),
                                                name.size(), held.data(), held.size()));
}
/// The fence rule for a whole side's runtime binding (the placement's members too).
inline std::optional<Error> try_check_fence(const BoundPlan& bound, FenceSide side,
                                            const Binding& binding) {
  const std::string_view name = detail::side_name(side);
  return detail::fence_outcome(::wm_fence_check_binding(
      detail::Access::raw(bound), name.data(), name.size(), detail::Access::raw(binding)));
}
/// try_check_fence, throwing the Error when the fence does not hold.
template <class Held>
inline void check_fence(const BoundPlan& bound, FenceSide side, const Held& held) {
  if (auto error = try_check_fence(bound, side, held)) {
    throw std::move(*error);
  }
}

}  // namespace weight_manifest

#endif  // WEIGHT_MANIFEST_ANALYSIS_HPP
