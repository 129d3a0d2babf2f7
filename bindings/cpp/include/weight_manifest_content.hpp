// weight_manifest_content.hpp: content digests (contract §19) over the caller's own
// memory, part of the C++17 wrapper (included by weight_manifest.hpp; include that one).
//
// A receiver checks what landed in its buffers without Python: ContentManifest::parse the
// manifest the sender wrote, take each tensor's geometry from it (manifest.tensor(id)),
// compute the partial of each fragment it holds over its memory (ContentPartial::compute,
// contiguous or with byte strides) and check it against the manifest's
// (manifest.check_fragment), or in one call from the manifest's box (manifest.check_bytes).
// Holders of a whole partition combine their partials into the
// tensor digest (combine). Every rule is the Rust core's.

#ifndef WEIGHT_MANIFEST_CONTENT_HPP
#define WEIGHT_MANIFEST_CONTENT_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weight_manifest.hpp"

namespace weight_manifest {

namespace detail {
inline std::optional<Error> outcome(::WmError* error) {
  if (error == nullptr) {
    return std::nullopt;
  }
  return Access::take(error);
}
}  // namespace detail

/// A tensor's geometry for content digests: tensor_id, global shape, itemsize (the dtype's
/// bytes per element) and block size B.
class ContentTensor {
 public:
  /// Checks the geometry (content_shape_invalid: no dimension, a zero extent, itemsize or
  /// B of 0, a byte size past 2^64 - 1).
  static Result<ContentTensor> try_make(std::string_view tensor_id,
                                        const std::vector<std::uint64_t>& global_shape,
                                        std::uint64_t itemsize, std::uint64_t block_elements) {
    return detail::Access::run<ContentTensor, ::WmContentTensor>([&](::WmContentTensor** out) {
      return ::wm_content_tensor_new(tensor_id.data(), tensor_id.size(), global_shape.data(),
                                     global_shape.size(), itemsize, block_elements, out);
    });
  }
  static ContentTensor make(std::string_view tensor_id,
                            const std::vector<std::uint64_t>& global_shape,
                            std::uint64_t itemsize, std::uint64_t block_elements) {
    return detail::value_or_throw(try_make(tensor_id, global_shape, itemsize, block_elements));
  }

 private:
  friend struct detail::Access;
  friend class ContentManifest;
  explicit ContentTensor(::WmContentTensor* handle) noexcept : handle_(handle) {}
  std::unique_ptr<::WmContentTensor, detail::Deleter<::WmContentTensor, ::wm_content_tensor_free>>
      handle_;
};

/// Where a fragment's bytes are in the caller's memory: `data` (`size` readable bytes),
/// contiguous row-major when `strides_bytes` is empty, else a view with these byte strides
/// whose first element is at `data`. Only read, during the call.
struct ContentBytes {
  const void* data = nullptr;
  std::size_t size = 0;
  std::vector<std::uint64_t> strides_bytes;
};

/// A fragment's box of its tensor.
struct ContentBox {
  std::vector<std::uint64_t> global_offset;
  std::vector<std::uint64_t> local_shape;
};

namespace detail {
/// Checks that a box's two lists have one length, as the C ABI's `ndim` needs.
inline std::optional<Error> box_ranks(const ContentBox& box, const ContentBytes* bytes) {
  const bool strides_ok = bytes == nullptr || bytes->strides_bytes.empty() ||
                          bytes->strides_bytes.size() == box.local_shape.size();
  if (box.global_offset.size() != box.local_shape.size() || !strides_ok) {
    return Error(WM_CODE_CONTENT_SHAPE_INVALID,
                 "a box's global_offset, local_shape and strides must have one length");
  }
  return std::nullopt;
}
}  // namespace detail

/// A fragment's partial (contract §19.3): the sum of its whole blocks and the pieces of
/// the blocks it holds only part of.
class ContentPartial {
 public:
  /// The partial of `box` of `tensor`, its bytes in the caller's memory. Rejections:
  /// content_shape_invalid (a box of another rank, a zero extent, outside the tensor),
  /// content_buffer_invalid (contiguous bytes of another size than the box's; a strided
  /// view reaching past `size`).
  static Result<ContentPartial> try_compute(const ContentTensor& tensor, const ContentBox& box,
                                            const ContentBytes& bytes) {
    if (auto error = detail::box_ranks(box, &bytes)) {
      return std::move(*error);
    }
    return detail::Access::run<ContentPartial, ::WmContentPartial>([&](::WmContentPartial** out) {
      return ::wm_content_partial(
          detail::Access::raw(tensor), box.global_offset.data(), box.local_shape.data(),
          box.local_shape.size(), static_cast<const std::uint8_t*>(bytes.data), bytes.size,
          bytes.strides_bytes.empty() ? nullptr : bytes.strides_bytes.data(), out);
    });
  }
  static ContentPartial compute(const ContentTensor& tensor, const ContentBox& box,
                                const ContentBytes& bytes) {
    return detail::value_or_throw(try_compute(tensor, box, bytes));
  }

  /// Reads a partial from its JSON text (json() of another holder); content_manifest_invalid
  /// for another shape.
  static Result<ContentPartial> try_parse(std::string_view json) {
    return detail::Access::run<ContentPartial, ::WmContentPartial>([&](::WmContentPartial** out) {
      return ::wm_content_partial_parse(json.data(), json.size(), out);
    });
  }
  static ContentPartial parse(std::string_view json) {
    return detail::value_or_throw(try_parse(json));
  }

  /// The partial as canonical JSON text.
  std::string json() const {
    std::size_t len = 0;
    const char* text = ::wm_content_partial_json(handle_.get(), &len);
    return detail::copy(text, len);
  }

  /// Equal sums and equal edges as sets (how replicas are compared).
  friend bool operator==(const ContentPartial& a, const ContentPartial& b) noexcept {
    return ::wm_content_partial_equal(a.handle_.get(), b.handle_.get());
  }
  friend bool operator!=(const ContentPartial& a, const ContentPartial& b) noexcept {
    return !(a == b);
  }

 private:
  friend struct detail::Access;
  explicit ContentPartial(::WmContentPartial* handle) noexcept : handle_(handle) {}
  std::unique_ptr<::WmContentPartial,
                  detail::Deleter<::WmContentPartial, ::wm_content_partial_free>>
      handle_;
};

/// One block's coordinate and value (the value's upper and lower 64 bits).
struct BlockValue {
  std::uint64_t row = 0;
  std::uint64_t block = 0;
  std::uint64_t value_hi = 0;
  std::uint64_t value_lo = 0;
};

/// The values of the blocks wholly inside a fragment, by row, then block (for deltas).
class ContentValues {
 public:
  /// As ContentPartial::try_compute, with the same rejections.
  static Result<ContentValues> try_compute(const ContentTensor& tensor, const ContentBox& box,
                                           const ContentBytes& bytes) {
    if (auto error = detail::box_ranks(box, &bytes)) {
      return std::move(*error);
    }
    return detail::Access::run<ContentValues, ::WmContentValues>([&](::WmContentValues** out) {
      return ::wm_content_block_values(
          detail::Access::raw(tensor), box.global_offset.data(), box.local_shape.data(),
          box.local_shape.size(), static_cast<const std::uint8_t*>(bytes.data), bytes.size,
          bytes.strides_bytes.empty() ? nullptr : bytes.strides_bytes.data(), out);
    });
  }
  static ContentValues compute(const ContentTensor& tensor, const ContentBox& box,
                               const ContentBytes& bytes) {
    return detail::value_or_throw(try_compute(tensor, box, bytes));
  }

  /// The number of values.
  std::size_t size() const noexcept { return ::wm_content_values_count(handle_.get()); }
  /// Value `index` (std::out_of_range past the end).
  BlockValue at(std::size_t index) const {
    BlockValue v;
    if (!::wm_content_values_get(handle_.get(), index, &v.row, &v.block, &v.value_hi,
                                 &v.value_lo)) {
      throw std::out_of_range("weight_manifest::ContentValues::at");
    }
    return v;
  }
  /// The values as canonical JSON text ([{"block", "row", "value"}]).
  std::string json() const {
    std::size_t len = 0;
    const char* text = ::wm_content_values_json(handle_.get(), &len);
    return detail::copy(text, len);
  }

 private:
  friend struct detail::Access;
  explicit ContentValues(::WmContentValues* handle) noexcept : handle_(handle) {}
  std::unique_ptr<::WmContentValues, detail::Deleter<::WmContentValues, ::wm_content_values_free>>
      handle_;
};

/// A fragment given to combine: its box and its partial (borrowed for the call).
struct ContentFragment {
  ContentBox box;
  const ContentPartial* partial = nullptr;
};

/// The tensor's digest ("xxh3sum128:" + 32 hex digits) from the partials of fragments that
/// hold all of it; replicas count once (contract §19.4). Rejections: content_shape_invalid,
/// content_replica_mismatch, content_partition_invalid.
inline Result<std::string> try_combine(const ContentTensor& tensor,
                                       const std::vector<ContentFragment>& fragments) {
  std::vector<::WmContentFragment> raw;
  raw.reserve(fragments.size());
  for (const ContentFragment& f : fragments) {
    if (auto error = detail::box_ranks(f.box, nullptr)) {
      return std::move(*error);
    }
    raw.push_back(::WmContentFragment{f.box.global_offset.data(), f.box.local_shape.data(),
                                      f.box.local_shape.size(),
                                      f.partial == nullptr ? nullptr : detail::Access::raw(*f.partial)});
  }
  ::WmContentDigest digest{};
  if (auto error = detail::outcome(
          ::wm_content_combine(detail::Access::raw(tensor), raw.data(), raw.size(), &digest))) {
    return std::move(*error);
  }
  return std::string(digest.text);
}
inline std::string combine(const ContentTensor& tensor,
                           const std::vector<ContentFragment>& fragments) {
  return detail::value_or_throw(try_combine(tensor, fragments));
}

/// The tensors that differ between two content manifests.
class ContentComparison {
 public:
  /// How many tensors differ (0: the manifests agree).
  std::size_t size() const noexcept { return ::wm_content_comparison_count(handle_.get()); }
  /// [{"difference": "differs" | "only_in_a" | "only_in_b", "tensor_id"}], canonical.
  std::string json() const {
    std::size_t len = 0;
    const char* text = ::wm_content_comparison_json(handle_.get(), &len);
    return detail::copy(text, len);
  }

 private:
  friend struct detail::Access;
  explicit ContentComparison(::WmContentComparison* handle) noexcept : handle_(handle) {}
  std::unique_ptr<::WmContentComparison,
                  detail::Deleter<::WmContentComparison, ::wm_content_comparison_free>>
      handle_;
};

/// A content manifest (contract §19.5), read strictly.
class ContentManifest {
 public:
  /// Reads the manifest (content_manifest_invalid and content_shape_invalid with their
  /// pointers, the reader's codes); its fragments are recombined by verify().
  static Result<ContentManifest> try_parse(std::string_view json) {
    return detail::Access::run<ContentManifest, ::WmContentManifest>(
        [&](::WmContentManifest** out) {
          return ::wm_content_manifest_parse(json.data(), json.size(), out);
        });
  }
  static ContentManifest parse(std::string_view json) {
    return detail::value_or_throw(try_parse(json));
  }

  /// std::nullopt when every tensor's fragments recombine to its digest; else the error
  /// (content_digest_mismatch naming the tensor, or the combination's).
  std::optional<Error> verify() const {
    return detail::outcome(::wm_content_manifest_verify(handle_.get()));
  }

  /// The manifest's tensor `tensor_id` with its block size (content_manifest_invalid if
  /// it lists none).
  Result<ContentTensor> tensor(std::string_view tensor_id) const {
    return detail::Access::run<ContentTensor, ::WmContentTensor>([&](::WmContentTensor** out) {
      return ::wm_content_manifest_tensor(handle_.get(), tensor_id.data(), tensor_id.size(),
                                          out);
    });
  }

  /// std::nullopt when `partial` equals the partial the manifest records for the fragment
  /// `placement_fragment_id`; else content_digest_mismatch (or content_manifest_invalid
  /// when the manifest lists no such fragment).
  std::optional<Error> check_fragment(std::string_view placement_fragment_id,
                                      const ContentPartial& partial) const {
    return detail::outcome(::wm_content_manifest_check_fragment(
        handle_.get(), placement_fragment_id.data(), placement_fragment_id.size(),
        detail::Access::raw(partial)));
  }

  /// Checks the bytes of fragment `placement_fragment_id` as they landed in the caller's
  /// memory (its tensor and box are the manifest's; strides, if given, one per dimension of
  /// the box): std::nullopt when every byte agrees with the manifest; else
  /// content_digest_mismatch naming the fragment, content_manifest_invalid (no such
  /// fragment) or content_buffer_invalid (memory of the wrong size).
  std::optional<Error> check_bytes(std::string_view placement_fragment_id,
                                   const ContentBytes& bytes) const {
    return detail::outcome(::wm_content_manifest_check_bytes(
        handle_.get(), placement_fragment_id.data(), placement_fragment_id.size(),
        static_cast<const std::uint8_t*>(bytes.data), bytes.size,
        bytes.strides_bytes.empty() ? nullptr : bytes.strides_bytes.data()));
  }

  /// Compares with `other` tensor by tensor (content_manifest_invalid for another
  /// algorithm or block size).
  Result<ContentComparison> compare(const ContentManifest& other) const {
    return detail::Access::run<ContentComparison, ::WmContentComparison>(
        [&](::WmContentComparison** out) {
          return ::wm_content_manifest_compare(handle_.get(), other.handle_.get(), out);
        });
  }

  /// The manifest in the canonical encoding.
  std::string json() const {
    std::size_t len = 0;
    const char* text = ::wm_content_manifest_json(handle_.get(), &len);
    return detail::copy(text, len);
  }

 private:
  friend struct detail::Access;
  explicit ContentManifest(::WmContentManifest* handle) noexcept : handle_(handle) {}
  std::unique_ptr<::WmContentManifest,
                  detail::Deleter<::WmContentManifest, ::wm_content_manifest_free>>
      handle_;
};

}  // namespace weight_manifest

#endif  // WEIGHT_MANIFEST_CONTENT_HPP
