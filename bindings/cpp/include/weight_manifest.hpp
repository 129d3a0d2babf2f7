// weight_manifest.hpp: the C++17 wrapper over the C ABI in weight_manifest.h.
//
// Header-only. JSON text goes in as std::string_view (any bytes: text that is not UTF-8
// is rejected with invalid_json), text comes out as std::string. Handles (Placement,
// Runtime, Binding) are move-only RAII owners of the C handles and immutable, so one may
// be read from several threads at once.
//
// Each operation comes in two forms:
//   Placement::parse(text)      throws weight_manifest::Error on a rejection;
//   Placement::try_parse(text)  returns Result<Placement>, an expected-style value that
//                               holds either the handle or the Error (it throws nothing
//                               but std::bad_alloc).
//
// Coverage analysis and the reshard planner (coverage(), plan()) are in
// weight_manifest_analysis.hpp, content digests (ContentPartial, ContentManifest) in
// weight_manifest_content.hpp, both included at the end of this file.
//
// Codes: weight_manifest::Code is the C enum WmCode (WM_CODE_FRAGMENT_OVERLAP, ...);
// Error::code_name() is the contract's spelling ("fragment_overlap").

#ifndef WEIGHT_MANIFEST_HPP
#define WEIGHT_MANIFEST_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include "weight_manifest.h"

namespace weight_manifest {

/// An error code: WM_CODE_OK, a contract code (WM_CODE_INVALID_JSON ...
/// WM_CODE_BINDING_NBYTES_MISMATCH) or a code of the C ABI (WM_CODE_INVALID_ARGUMENT,
/// WM_CODE_INTERNAL_ERROR).
using Code = ::WmCode;

/// The contract's spelling of a code ("fragment_overlap"); empty for a number that is no
/// code.
inline std::string_view code_name(Code code) noexcept {
  const char* name = ::wm_code_name(static_cast<std::uint32_t>(code));
  return name == nullptr ? std::string_view() : std::string_view(name);
}

/// The library's version.
inline std::string_view version() noexcept { return ::wm_version(); }

/// Where a document's text stops being JSON (an invalid_json rejection): the first
/// offending byte, or the end of the text when it ends early; for text that is not UTF-8,
/// the first byte of the first ill-formed sequence.
struct JsonLocation {
  /// The line, 1-based (lines end at LF only).
  std::uint64_t line = 0;
  /// The column, 1-based, counted in characters (Unicode scalar values) from the start of
  /// the line.
  std::uint64_t column = 0;
  /// The byte offset from the start of the text, 0-based.
  std::uint64_t offset = 0;

  friend bool operator==(const JsonLocation& a, const JsonLocation& b) noexcept {
    return a.line == b.line && a.column == b.column && a.offset == b.offset;
  }
  friend bool operator!=(const JsonLocation& a, const JsonLocation& b) noexcept {
    return !(a == b);
  }
};

namespace detail {

inline std::string copy(const char* text, std::size_t len) {
  return text == nullptr ? std::string() : std::string(text, len);
}

inline std::string render(std::string_view name, const std::string& message,
                          const std::optional<std::string>& path,
                          const std::optional<JsonLocation>& location = std::nullopt) {
  std::string text = "error[";
  text.append(name).append("]: ").append(message);
  if (path) {
    text.append(" at ").append(path->empty() ? std::string("/") : *path);
  }
  if (location) {
    text.append(" at line ").append(std::to_string(location->line));
    text.append(" column ").append(std::to_string(location->column));
    text.append(" (byte ").append(std::to_string(location->offset)).append(")");
  }
  return text;
}

struct Access;

}  // namespace detail

/// The numbers behind a rejection: a compact JSON object (keys sorted; its members per
/// rule are in docs/contract.md, "Error locations") and the same as one line for people.
struct Detail {
  std::string json;
  std::string summary;
};

/// A rejection: the contract's code, its message and, where the contract defines one, the
/// JSON pointer into the input document; an invalid_json rejection also has the location
/// where the text breaks, and a rejection with numbers behind it (expected and got, an
/// axis, the other element's pointer) its detail. what() is "error[code]: message at
/// /pointer", or for an error with a location "error[invalid_json]: message at line 3
/// column 17 (byte 52)".
class Error : public std::runtime_error {
 public:
  /// An error with the given parts (for tests and for callers that build their own).
  Error(Code code, std::string message, std::optional<std::string> path = std::nullopt,
        std::optional<JsonLocation> location = std::nullopt)
      : std::runtime_error(
            detail::render(weight_manifest::code_name(code), message, path, location)),
        code_(code),
        code_name_(weight_manifest::code_name(code)),
        message_(std::move(message)),
        path_(std::move(path)),
        location_(location) {}

  /// The code (WM_CODE_FRAGMENT_OVERLAP, ...).
  Code code() const noexcept { return code_; }
  /// The code's spelling ("fragment_overlap").
  const std::string& code_name() const noexcept { return code_name_; }
  /// The message, for people.
  const std::string& message() const noexcept { return message_; }
  /// The JSON pointer into the input ("" is the whole document), if the error has one.
  const std::optional<std::string>& path() const noexcept { return path_; }
  /// Where the text stops being JSON, for an invalid_json rejection; else empty.
  const std::optional<JsonLocation>& location() const noexcept { return location_; }
  /// The numbers behind the rejection, if it has some.
  const std::optional<Detail>& detail() const noexcept { return detail_; }

 private:
  friend struct detail::Access;

  Error(Code code, std::string code_name, std::string message,
        std::optional<std::string> path, std::optional<JsonLocation> location,
        std::optional<Detail> detail)
      : std::runtime_error(detail::render(code_name, message, path, location)),
        code_(code),
        code_name_(std::move(code_name)),
        message_(std::move(message)),
        path_(std::move(path)),
        location_(location),
        detail_(std::move(detail)) {}

  Code code_;
  std::string code_name_;
  std::string message_;
  std::optional<std::string> path_;
  std::optional<JsonLocation> location_;
  std::optional<Detail> detail_;
};

/// Either a value or an Error (the shape of C++23 std::expected).
template <class T>
class Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT
  Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool has_value() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  /// The value; throws the Error if there is none.
  T& value() & {
    throw_if_error();
    return std::get<0>(state_);
  }
  const T& value() const& {
    throw_if_error();
    return std::get<0>(state_);
  }
  T&& value() && {
    throw_if_error();
    return std::get<0>(std::move(state_));
  }

  /// The error; throws std::logic_error if there is a value instead.
  const Error& error() const {
    if (has_value()) {
      throw std::logic_error("weight_manifest::Result holds a value, not an error");
    }
    return std::get<1>(state_);
  }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  void throw_if_error() const {
    if (!has_value()) {
      throw std::get<1>(state_);
    }
  }

  std::variant<T, Error> state_;
};

/// Options of the runtime and binding inventory readers (contract §10.2).
struct InventoryOptions {
  /// Not given (std::nullopt) or "view"; any other value is rejected with
  /// address_semantics_invalid.
  std::optional<std::string_view> address_semantics;

  /// Options declaring view address semantics.
  static InventoryOptions view() { return InventoryOptions{std::string_view("view")}; }
};

class Placement;
class Runtime;
class Binding;

namespace detail {

template <class Handle, void (*Free)(Handle*)>
struct Deleter {
  void operator()(Handle* handle) const noexcept { Free(handle); }
};

/// Builds wrappers from C results; the one place that touches raw handles and errors.
struct Access {
  static Error take(::WmError* raw) {
    std::unique_ptr<::WmError, Deleter<::WmError, ::wm_error_free>> owned(raw);
    std::size_t message_len = 0;
    std::size_t path_len = 0;
    const char* message = ::wm_error_message(raw, &message_len);
    const char* path = ::wm_error_path(raw, &path_len);
    const char* name = ::wm_error_code_name(raw);
    std::optional<std::string> pointer;
    if (path != nullptr) {
      pointer = std::string(path, path_len);
    }
    std::optional<JsonLocation> location;
    JsonLocation at;
    if (::wm_error_json_location(raw, &at.line, &at.column, &at.offset)) {
      location = at;
    }
    std::optional<weight_manifest::Detail> numbers;
    std::size_t json_len = 0;
    std::size_t summary_len = 0;
    const char* json = ::wm_error_detail_json(raw, &json_len);
    const char* summary = ::wm_error_detail_summary(raw, &summary_len);
    if (json != nullptr) {
      numbers = weight_manifest::Detail{copy(json, json_len), copy(summary, summary_len)};
    }
    return Error(::wm_error_code(raw), name == nullptr ? std::string() : std::string(name),
                 copy(message, message_len), std::move(pointer), location, std::move(numbers));
  }

  /// Calls `call(&out)`; wraps `out` in T or the returned error in Error.
  template <class T, class Raw, class Call>
  static Result<T> run(Call&& call) {
    Raw* out = nullptr;
    ::WmError* error = std::forward<Call>(call)(&out);
    if (error != nullptr) {
      return take(error);
    }
    return T(out);
  }

  template <class T>
  static auto raw(const T& wrapper) noexcept {
    return wrapper.handle_.get();
  }
};

inline const char* data_or_null(const std::optional<std::string_view>& text) noexcept {
  // A given empty string must stay distinguishable from "not given": never pass NULL
  // for it.
  if (!text) {
    return nullptr;
  }
  return text->data() == nullptr ? "" : text->data();
}

inline std::size_t size_or_zero(const std::optional<std::string_view>& text) noexcept {
  return text ? text->size() : 0;
}

template <class T>
T value_or_throw(Result<T>&& result) {
  return std::move(result).value();
}

}  // namespace detail

/// A validated placement manifest (contract §2.6) with its placement_id and digest.
class Placement {
 public:
  /// Parses and validates placement manifest JSON (placement.parse).
  static Result<Placement> try_parse(std::string_view json) {
    return detail::Access::run<Placement, ::WmPlacement>(
        [&](::WmPlacement** out) { return ::wm_placement_parse(json.data(), json.size(), out); });
  }
  static Placement parse(std::string_view json) { return detail::value_or_throw(try_parse(json)); }

  /// Reads a placement inventory (placement.from_inventory, contract §10.5).
  static Result<Placement> try_from_inventory(std::string_view json) {
    return detail::Access::run<Placement, ::WmPlacement>([&](::WmPlacement** out) {
      return ::wm_placement_from_inventory(json.data(), json.size(), out);
    });
  }
  static Placement from_inventory(std::string_view json) {
    return detail::value_or_throw(try_from_inventory(json));
  }

  /// The canonical JSON text (contract §6.1).
  std::string canonical() const {
    std::size_t len = 0;
    const char* text = ::wm_placement_canonical(handle_.get(), &len);
    return detail::copy(text, len);
  }
  /// The placement_id ("sha256:<hex>").
  std::string placement_id() const {
    std::size_t len = 0;
    const char* text = ::wm_placement_id(handle_.get(), &len);
    return detail::copy(text, len);
  }
  /// The digest (64 lowercase hex digits).
  std::string digest() const {
    std::size_t len = 0;
    const char* text = ::wm_placement_digest(handle_.get(), &len);
    return detail::copy(text, len);
  }

  /// The C handle (owned by this object), for calling the C ABI directly.
  const ::WmPlacement* c_handle() const noexcept { return handle_.get(); }

 private:
  friend struct detail::Access;
  explicit Placement(::WmPlacement* handle) noexcept : handle_(handle) {}
  std::unique_ptr<::WmPlacement, detail::Deleter<::WmPlacement, ::wm_placement_free>> handle_;
};

/// A validated runtime manifest (contract §9.1).
class Runtime {
 public:
  /// Parses and validates runtime manifest JSON (runtime.parse).
  static Result<Runtime> try_parse(std::string_view json) {
    return detail::Access::run<Runtime, ::WmRuntime>(
        [&](::WmRuntime** out) { return ::wm_runtime_parse(json.data(), json.size(), out); });
  }
  static Runtime parse(std::string_view json) { return detail::value_or_throw(try_parse(json)); }

  /// Reads a runtime inventory (runtime.from_inventory, contract §10.3).
  static Result<Runtime> try_from_inventory(std::string_view json,
                                            const InventoryOptions& options = {}) {
    return detail::Access::run<Runtime, ::WmRuntime>([&](::WmRuntime** out) {
      return ::wm_runtime_from_inventory(json.data(), json.size(),
                                         detail::data_or_null(options.address_semantics),
                                         detail::size_or_zero(options.address_semantics), out);
    });
  }
  static Runtime from_inventory(std::string_view json, const InventoryOptions& options = {}) {
    return detail::value_or_throw(try_from_inventory(json, options));
  }

  /// The canonical JSON text.
  std::string json() const {
    std::size_t len = 0;
    const char* text = ::wm_runtime_json(handle_.get(), &len);
    return detail::copy(text, len);
  }
  /// The generation, if the manifest has one.
  std::optional<std::uint64_t> generation() const noexcept {
    std::uint64_t value = 0;
    if (::wm_runtime_generation(handle_.get(), &value)) {
      return value;
    }
    return std::nullopt;
  }

  /// The C handle (owned by this object), for calling the C ABI directly.
  const ::WmRuntime* c_handle() const noexcept { return handle_.get(); }

 private:
  friend struct detail::Access;
  explicit Runtime(::WmRuntime* handle) noexcept : handle_(handle) {}
  std::unique_ptr<::WmRuntime, detail::Deleter<::WmRuntime, ::wm_runtime_free>> handle_;
};

/// A validated runtime binding manifest (contract §9.2).
class Binding {
 public:
  /// Parses and validates runtime binding manifest JSON (binding.parse).
  static Result<Binding> try_parse(std::string_view json) {
    return detail::Access::run<Binding, ::WmBinding>(
        [&](::WmBinding** out) { return ::wm_binding_parse(json.data(), json.size(), out); });
  }
  static Binding parse(std::string_view json) { return detail::value_or_throw(try_parse(json)); }

  /// Reads a runtime binding inventory (binding.from_inventory, contract §10.4).
  static Result<Binding> try_from_inventory(std::string_view json,
                                            const InventoryOptions& options = {}) {
    return detail::Access::run<Binding, ::WmBinding>([&](::WmBinding** out) {
      return ::wm_binding_from_inventory(json.data(), json.size(),
                                         detail::data_or_null(options.address_semantics),
                                         detail::size_or_zero(options.address_semantics), out);
    });
  }
  static Binding from_inventory(std::string_view json, const InventoryOptions& options = {}) {
    return detail::value_or_throw(try_from_inventory(json, options));
  }

  /// The canonical JSON text.
  std::string json() const {
    std::size_t len = 0;
    const char* text = ::wm_binding_json(handle_.get(), &len);
    return detail::copy(text, len);
  }

  /// The C handle (owned by this object), for calling the C ABI directly.
  const ::WmBinding* c_handle() const noexcept { return handle_.get(); }

 private:
  friend struct detail::Access;
  explicit Binding(::WmBinding* handle) noexcept : handle_(handle) {}
  std::unique_ptr<::WmBinding, detail::Deleter<::WmBinding, ::wm_binding_free>> handle_;
};

/// Projects a runtime manifest to its placement (project.placement, contract §11.1);
/// `placement_id`, if given, must be the projection's canonical id.
inline Result<Placement> try_project_placement(
    const Runtime& runtime, std::optional<std::string_view> placement_id = std::nullopt) {
  return detail::Access::run<Placement, ::WmPlacement>([&](::WmPlacement** out) {
    return ::wm_project_placement(detail::Access::raw(runtime), detail::data_or_null(placement_id),
                                  detail::size_or_zero(placement_id), out);
  });
}
inline Placement project_placement(const Runtime& runtime,
                                   std::optional<std::string_view> placement_id = std::nullopt) {
  return detail::value_or_throw(try_project_placement(runtime, placement_id));
}

/// Projects a runtime manifest to its binding (project.binding, contract §11.2).
inline Result<Binding> try_project_binding(
    const Runtime& runtime, std::optional<std::string_view> placement_id = std::nullopt) {
  return detail::Access::run<Binding, ::WmBinding>([&](::WmBinding** out) {
    return ::wm_project_binding(detail::Access::raw(runtime), detail::data_or_null(placement_id),
                                detail::size_or_zero(placement_id), out);
  });
}
inline Binding project_binding(const Runtime& runtime,
                               std::optional<std::string_view> placement_id = std::nullopt) {
  return detail::value_or_throw(try_project_binding(runtime, placement_id));
}

/// Binds a placement and a binding into a runtime manifest (bind, contract §12).
inline Result<Runtime> try_bind(const Placement& placement, const Binding& binding) {
  return detail::Access::run<Runtime, ::WmRuntime>([&](::WmRuntime** out) {
    return ::wm_bind(detail::Access::raw(placement), detail::Access::raw(binding), out);
  });
}
inline Runtime bind(const Placement& placement, const Binding& binding) {
  return detail::value_or_throw(try_bind(placement, binding));
}

}  // namespace weight_manifest

// Coverage analysis and the reshard planner (Coverage, Plan, coverage(), plan()).
#include "weight_manifest_analysis.hpp"
// Content digests over the caller's memory (ContentTensor, ContentPartial, ContentManifest).
#include "weight_manifest_content.hpp"
// Mooncake's placement and Store manifest (MooncakePlacement, MooncakeStorage).
#include "weight_manifest_mooncake.hpp"

#endif  // WEIGHT_MANIFEST_HPP
