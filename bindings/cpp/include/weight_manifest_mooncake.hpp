// weight_manifest_mooncake.hpp: Mooncake's formats (mooncake.reshard 0.3.13, contract §20),
// part of the C++17 wrapper (included by weight_manifest.hpp; include that one): a C++
// engine reads a Mooncake placement or Store manifest without Python, imports a placement as
// this contract's, plans a transfer in upstream's region form and checks runtime bindings as
// upstream does; every rule the Rust core's.

#ifndef WEIGHT_MANIFEST_MOONCAKE_HPP
#define WEIGHT_MANIFEST_MOONCAKE_HPP

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "weight_manifest.hpp"

namespace weight_manifest {

/// A Mooncake WeightPlacementManifest (mooncake.reshard 0.3.13, contract §20), read by
/// every Mooncake rule; its text is byte for byte what upstream writes.
class MooncakePlacement {
 public:
  static Result<MooncakePlacement> try_parse(std::string_view json) {
    return detail::Access::run<MooncakePlacement, ::WmMooncakePlacement>(
        [&](::WmMooncakePlacement** out) {
          return ::wm_mooncake_placement_parse(json.data(), json.size(), out);
        });
  }
  static MooncakePlacement parse(std::string_view json) {
    return detail::value_or_throw(try_parse(json));
  }
  /// This contract's placement (its JSON text) exported as a Mooncake placement (§20.7);
  /// `overrides` is the JSON text of an overrides document (weight_generation,
  /// placement_set_id, sizes, participants, parallel_axes), none when not given.
  static Result<MooncakePlacement> try_from_placement(
      std::string_view placement, std::optional<std::string_view> overrides = std::nullopt) {
    return detail::Access::run<MooncakePlacement, ::WmMooncakePlacement>(
        [&](::WmMooncakePlacement** out) {
          return ::wm_mooncake_export(placement.data(), placement.size(),
                                      overrides ? overrides->data() : nullptr,
                                      overrides ? overrides->size() : 0, out);
        });
  }
  static MooncakePlacement from_placement(
      std::string_view placement, std::optional<std::string_view> overrides = std::nullopt) {
    return detail::value_or_throw(try_from_placement(placement, overrides));
  }
  /// The canonical text (upstream's weight_placement_to_json).
  std::string json() const { return text(::wm_mooncake_placement_json); }
  /// The placement_id ("sha256:<hex>").
  std::string placement_id() const { return text(::wm_mooncake_placement_id); }
  /// The digest (64 hex digits).
  std::string digest() const { return text(::wm_mooncake_placement_digest); }
  /// The topology_id ("sha256:<hex>").
  std::string topology_id() const { return text(::wm_mooncake_placement_topology_id); }

 private:
  friend struct detail::Access;
  explicit MooncakePlacement(::WmMooncakePlacement* handle) noexcept : handle_(handle) {}
  std::string text(const char* (*get)(const ::WmMooncakePlacement*, std::size_t*)) const {
    std::size_t len = 0;
    const char* value = get(handle_.get(), &len);
    return detail::copy(value, len);
  }
  std::unique_ptr<::WmMooncakePlacement,
                  detail::Deleter<::WmMooncakePlacement, ::wm_mooncake_placement_free>>
      handle_;
};

/// A Mooncake Store WeightManifest (contract §20.6), validated as upstream validates it.
class MooncakeStorage {
 public:
  static Result<MooncakeStorage> try_parse(std::string_view json) {
    return detail::Access::run<MooncakeStorage, ::WmMooncakeStorage>(
        [&](::WmMooncakeStorage** out) {
          return ::wm_mooncake_storage_parse(json.data(), json.size(), out);
        });
  }
  static MooncakeStorage parse(std::string_view json) {
    return detail::value_or_throw(try_parse(json));
  }
  /// The text as upstream writes it (keys sorted, raw UTF-8).
  std::string json() const {
    std::size_t len = 0;
    const char* value = ::wm_mooncake_storage_json(handle_.get(), &len);
    return detail::copy(value, len);
  }
  /// The manifest_digest (64 hex digits).
  std::string digest() const {
    std::size_t len = 0;
    const char* value = ::wm_mooncake_storage_digest(handle_.get(), &len);
    return detail::copy(value, len);
  }

 private:
  friend struct detail::Access;
  explicit MooncakeStorage(::WmMooncakeStorage* handle) noexcept : handle_(handle) {}
  std::unique_ptr<::WmMooncakeStorage,
                  detail::Deleter<::WmMooncakeStorage, ::wm_mooncake_storage_free>>
      handle_;
};

/// A Mooncake placement (its JSON text) imported as this contract's placement (§20.7, the
/// mooncake.import operation): read by every Mooncake rule, then held to this contract's
/// (§8); the topology, axes, generation, set id and stage ids are dropped.
inline Result<Placement> try_import_mooncake(std::string_view json) {
  return detail::Access::run<Placement, ::WmPlacement>(
      [&](::WmPlacement** out) { return ::wm_mooncake_import(json.data(), json.size(), out); });
}
/// try_import_mooncake, throwing the Error on a rejection.
inline Placement import_mooncake(std::string_view json) {
  return detail::value_or_throw(try_import_mooncake(json));
}

/// A transfer plan between two Mooncake documents in upstream's region form (§20.9, the
/// mooncake.plan operation): upstream's plan_placement_transfer, or, from a Store manifest
/// (it has a manifest_key member), plan_stored_transfer_to_target_placement.
class MooncakePlan {
 public:
  /// Plans `source` (a Mooncake placement or Store manifest, JSON text) to `target` (a
  /// Mooncake placement); the weight generations must agree.
  static Result<MooncakePlan> try_plan(std::string_view source, std::string_view target) {
    return detail::Access::run<MooncakePlan, ::WmMooncakePlan>([&](::WmMooncakePlan** out) {
      return ::wm_mooncake_plan(source.data(), source.size(), target.data(), target.size(), out);
    });
  }
  static MooncakePlan plan(std::string_view source, std::string_view target) {
    return detail::value_or_throw(try_plan(source, target));
  }
  /// The regions as a canonical JSON array ordered by target_fragment_id, then
  /// overlap_offset; each with upstream's members (tensor_id, source_fragment_id,
  /// target_fragment_id, overlap_offset, overlap_shape, source_base_offset,
  /// target_base_offset, inner_bytes, outer_loop_counts, source_strides, target_strides).
  std::string json() const {
    std::size_t len = 0;
    const char* value = ::wm_mooncake_plan_json(handle_.get(), &len);
    return detail::copy(value, len);
  }

 private:
  friend struct detail::Access;
  explicit MooncakePlan(::WmMooncakePlan* handle) noexcept : handle_(handle) {}
  std::unique_ptr<::WmMooncakePlan, detail::Deleter<::WmMooncakePlan, ::wm_mooncake_plan_free>>
      handle_;
};

/// Mooncake runtime bindings (this project's JSON form of them: an array of
/// WeightRuntimeBindingManifest objects) checked against the Mooncake placement `placement`
/// as upstream's validate_runtime_bindings checks them (§20.10, the mooncake.binding
/// operation). std::nullopt when they hold, else the first rule broken.
inline std::optional<Error> try_validate_mooncake_bindings(std::string_view bindings,
                                                           std::string_view placement) {
  ::WmError* error = ::wm_mooncake_validate_bindings(bindings.data(), bindings.size(),
                                                     placement.data(), placement.size());
  if (error == nullptr) {
    return std::nullopt;
  }
  return detail::Access::take(error);
}
/// try_validate_mooncake_bindings, throwing the Error when the bindings do not hold.
inline void validate_mooncake_bindings(std::string_view bindings, std::string_view placement) {
  if (auto error = try_validate_mooncake_bindings(bindings, placement)) {
    throw std::move(*error);
  }
}

}  // namespace weight_manifest

#endif  // WEIGHT_MANIFEST_MOONCAKE_HPP
