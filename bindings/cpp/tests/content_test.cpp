// Content digests through the C++ wrapper (weight_manifest_content.hpp over the C ABI's
// wm_content_*): partials and block values over the caller's memory, contiguous and
// strided, against the content oracle's records (tests/content/*.json, written by the
// plain-Python oracle over the C reference xxHash); combination; the content manifest
// (verify, a holder's fragment checked against it, compare); the error model.

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "json.hpp"
#include "weight_manifest.hpp"

namespace wm = weight_manifest;
namespace json = testee::json;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

json::Value record(const std::string& name) {
  return json::parse(read_file(std::string(WEIGHT_MANIFEST_CONTENT_DIR) + "/" + name + ".json"));
}

std::vector<std::uint64_t> u64s(const json::Value& list) {
  std::vector<std::uint64_t> out;
  for (const json::Value& v : list.items) {
    out.push_back(std::stoull(v.text));
  }
  return out;
}

std::vector<std::uint8_t> hex(const std::string& text) {
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i + 1 < text.size(); i += 2) {
    out.push_back(static_cast<std::uint8_t>(std::stoul(text.substr(i, 2), nullptr, 16)));
  }
  return out;
}

/// Canonical JSON of a parsed value whose objects the records write with sorted keys.
std::string text_of(const json::Value& value) {
  std::string out;
  json::write(out, value);
  return out;
}

struct Record {
  json::Value doc;
  std::vector<std::uint64_t> shape;
  std::uint64_t itemsize;
  std::vector<std::uint8_t> data;

  explicit Record(const std::string& name)
      : doc(record(name)),
        shape(u64s(*doc.find("global_shape"))),
        itemsize(std::stoull(doc.find("itemsize")->text)),
        data(hex(doc.find("data")->text)) {}

  wm::ContentTensor tensor() const {
    return wm::ContentTensor::make(doc.find("tensor_id")->text, shape, itemsize,
                                   std::stoull(doc.find("block_elements")->text));
  }

  /// The byte strides of the whole row-major tensor: a box of it is a view at its offset.
  std::vector<std::uint64_t> strides() const {
    std::vector<std::uint64_t> out(shape.size(), itemsize);
    for (std::size_t k = shape.size() - 1; k > 0; --k) {
      out[k - 1] = out[k] * shape[k];
    }
    return out;
  }

  std::size_t at(const std::vector<std::uint64_t>& offset) const {
    const std::vector<std::uint64_t> s = strides();
    std::size_t byte = 0;
    for (std::size_t k = 0; k < s.size(); ++k) {
      byte += offset[k] * s[k];
    }
    return byte;
  }
};

}  // namespace

TEST(Content, PartialsOverAStridedViewOfTheTensorAreTheOraclesAndCombineToItsDigest) {
  for (const char* name : {"tp-columns-cut-inside-blocks", "grid-3d-uneven", "ep-experts-4d",
                           "one-dimensional", "unicode-tensor-id"}) {
    const Record rec(name);
    const wm::ContentTensor tensor = rec.tensor();
    std::vector<wm::ContentPartial> partials;
    std::vector<wm::ContentFragment> fragments;
    for (const json::Value& f : rec.doc.find("fragments")->items) {
      const wm::ContentBox box{u64s(*f.find("global_offset")), u64s(*f.find("local_shape"))};
      // The fragment read in place from the whole tensor's memory, by strides.
      const std::size_t start = rec.at(box.global_offset);
      const wm::ContentBytes view{rec.data.data() + start, rec.data.size() - start, rec.strides()};
      wm::ContentPartial partial = wm::ContentPartial::compute(tensor, box, view);
      EXPECT_EQ(partial.json(), text_of(*f.find("partial"))) << name;
      const wm::ContentValues values = wm::ContentValues::compute(tensor, box, view);
      EXPECT_EQ(values.json(), text_of(*f.find("values"))) << name;
      EXPECT_EQ(wm::ContentPartial::parse(partial.json()), partial) << name;
      partials.push_back(std::move(partial));
      fragments.push_back(wm::ContentFragment{box, nullptr});
    }
    for (std::size_t i = 0; i < fragments.size(); ++i) {
      fragments[i].partial = &partials[i];
    }
    EXPECT_EQ(wm::combine(tensor, fragments), rec.doc.find("expect")->find("digest")->text)
        << name;
  }
}

TEST(Content, ContiguousBytesMustBeExactlyTheBoxAndAViewMustStayInsideTheMemory) {
  const Record rec("tp-columns-cut-inside-blocks");  // [4, 10] float32
  const wm::ContentTensor tensor = rec.tensor();
  const wm::ContentBox box{{0, 3}, {4, 4}};
  std::vector<std::uint8_t> contiguous;
  for (std::uint64_t r = 0; r < 4; ++r) {
    const std::size_t start = rec.at({r, 3});
    contiguous.insert(contiguous.end(), rec.data.begin() + static_cast<std::ptrdiff_t>(start),
                      rec.data.begin() + static_cast<std::ptrdiff_t>(start + 16));
  }
  const auto whole = wm::ContentPartial::try_compute(
      tensor, box, wm::ContentBytes{contiguous.data(), contiguous.size(), {}});
  ASSERT_TRUE(whole);
  const std::size_t start = rec.at({0, 3});
  const wm::ContentBytes view{rec.data.data() + start, rec.data.size() - start, rec.strides()};
  EXPECT_EQ(*whole, wm::ContentPartial::compute(tensor, box, view));

  const auto short_by_one = wm::ContentPartial::try_compute(
      tensor, box, wm::ContentBytes{contiguous.data(), contiguous.size() - 1, {}});
  ASSERT_FALSE(short_by_one);
  EXPECT_EQ(short_by_one.error().code(), WM_CODE_CONTENT_BUFFER_INVALID);
  EXPECT_FALSE(short_by_one.error().message().empty());
  // The view's last byte is row 3, column 6: 3 * 40 + 3 * 4 + 4 = 136 bytes from its start.
  const auto view_short = wm::ContentPartial::try_compute(
      tensor, box, wm::ContentBytes{rec.data.data() + start, 135, rec.strides()});
  ASSERT_FALSE(view_short);
  EXPECT_EQ(view_short.error().code(), WM_CODE_CONTENT_BUFFER_INVALID);
  EXPECT_TRUE(wm::ContentPartial::try_compute(
      tensor, box, wm::ContentBytes{rec.data.data() + start, 136, rec.strides()}));
  const auto outside = wm::ContentValues::try_compute(
      tensor, wm::ContentBox{{0, 7}, {4, 4}}, wm::ContentBytes{contiguous.data(), 64, {}});
  ASSERT_FALSE(outside);
  EXPECT_EQ(outside.error().code_name(), "content_shape_invalid");
  const auto ranks = wm::ContentPartial::try_compute(
      tensor, wm::ContentBox{{0}, {4, 4}}, wm::ContentBytes{contiguous.data(), 64, {}});
  ASSERT_FALSE(ranks);
  EXPECT_EQ(ranks.error().code(), WM_CODE_CONTENT_SHAPE_INVALID);
  EXPECT_THROW(wm::ContentTensor::make("w", {4, 0}, 4, 64), wm::Error);
}

TEST(Content, CombiningRejectsAGapAReplicaThatDiffersAndOverlaps) {
  const wm::ContentTensor tensor = wm::ContentTensor::make("w", {2, 6}, 1, 4);
  const std::vector<std::uint8_t> left{0, 1, 2, 6, 7, 8};
  const std::vector<std::uint8_t> right{3, 4, 5, 9, 10, 11};
  std::vector<std::uint8_t> other = right;
  other[0] ^= 1U;
  const wm::ContentBox a{{0, 0}, {2, 3}};
  const wm::ContentBox b{{0, 3}, {2, 3}};
  const auto pa = wm::ContentPartial::compute(tensor, a, {left.data(), left.size(), {}});
  const auto pb = wm::ContentPartial::compute(tensor, b, {right.data(), right.size(), {}});
  const auto pc = wm::ContentPartial::compute(tensor, b, {other.data(), other.size(), {}});
  EXPECT_NE(pb, pc);
  const std::vector<std::uint8_t> all{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  const auto whole =
      wm::ContentPartial::compute(tensor, {{0, 0}, {2, 6}}, {all.data(), all.size(), {}});
  const std::string digest = wm::combine(tensor, {{{{0, 0}, {2, 6}}, &whole}});
  EXPECT_EQ(digest.size(), 43U);
  EXPECT_EQ(wm::combine(tensor, {{a, &pa}, {b, &pb}, {b, &pb}}), digest);
  EXPECT_NE(wm::combine(tensor, {{a, &pa}, {b, &pc}}), digest);
  const auto gap = wm::try_combine(tensor, {{a, &pa}});
  ASSERT_FALSE(gap);
  EXPECT_EQ(gap.error().code(), WM_CODE_CONTENT_PARTITION_INVALID);
  const auto replica = wm::try_combine(tensor, {{a, &pa}, {b, &pb}, {b, &pc}});
  ASSERT_FALSE(replica);
  EXPECT_EQ(replica.error().code(), WM_CODE_CONTENT_REPLICA_MISMATCH);
  const auto missing = wm::try_combine(tensor, {{a, &pa}, {b, nullptr}});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), WM_CODE_INVALID_ARGUMENT);
}

TEST(Content, AHoldersFragmentIsCheckedAgainstTheManifest) {
  const std::string dir = WEIGHT_MANIFEST_CORPUS_DIR;
  const json::Value fixture = json::parse(read_file(dir + "/manifest-b4-fragments.json"));
  const std::string text = fixture.find("input")->find("document")->text;
  const wm::ContentManifest manifest = wm::ContentManifest::parse(text);
  EXPECT_FALSE(manifest.verify());
  EXPECT_EQ(manifest.json(), text);

  // frag-001 is the box [0, 3] of shape [4, 4] of the [4, 10] tensor.
  const Record rec("tp-columns-cut-inside-blocks");
  const auto tensor = manifest.tensor(rec.doc.find("tensor_id")->text);
  ASSERT_TRUE(tensor);
  const wm::ContentBox box{{0, 3}, {4, 4}};
  const std::size_t start = rec.at(box.global_offset);
  const wm::ContentBytes view{rec.data.data() + start, rec.data.size() - start, rec.strides()};
  const auto landed = wm::ContentPartial::compute(*tensor, box, view);
  EXPECT_FALSE(manifest.check_fragment("frag-001", landed));
  const auto elsewhere = manifest.check_fragment("frag-000", landed);
  ASSERT_TRUE(elsewhere);
  EXPECT_EQ(elsewhere->code(), WM_CODE_CONTENT_DIGEST_MISMATCH);
  std::vector<std::uint8_t> torn = rec.data;
  torn[start + 40] ^= 0x80U;  // one bit of row 1 of the box
  const auto bad = wm::ContentPartial::compute(
      *tensor, box, wm::ContentBytes{torn.data() + start, torn.size() - start, rec.strides()});
  const auto flipped = manifest.check_fragment("frag-001", bad);
  ASSERT_TRUE(flipped);
  EXPECT_EQ(flipped->code_name(), "content_digest_mismatch");
  const auto unknown = manifest.check_fragment("frag-999", landed);
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->code(), WM_CODE_CONTENT_MANIFEST_INVALID);
  EXPECT_FALSE(manifest.tensor("not.listed"));

  const auto same = manifest.compare(manifest);
  ASSERT_TRUE(same);
  EXPECT_EQ(same->size(), 0U);
  const json::Value other = json::parse(read_file(dir + "/manifest-digest-of-another-tensor.json"));
  const auto changed = wm::ContentManifest::parse(other.find("input")->find("document")->text);
  const auto mismatch = changed.verify();
  ASSERT_TRUE(mismatch);
  EXPECT_EQ(mismatch->code(), WM_CODE_CONTENT_DIGEST_MISMATCH);
  const auto differs = manifest.compare(changed);
  ASSERT_TRUE(differs);
  EXPECT_EQ(differs->size(), 1U);
  EXPECT_EQ(differs->json(),
            R"([{"difference":"differs","tensor_id":"layers.0.mlp.down_proj.weight"}])");
  const auto invalid = wm::ContentManifest::try_parse(R"({"algorithm":"x"})");
  ASSERT_FALSE(invalid);
  EXPECT_EQ(invalid.error().code_name(), "content_manifest_invalid");
}

TEST(Content, BlockValuesAreReadOneByOne) {
  const wm::ContentTensor tensor = wm::ContentTensor::make("w", {2, 9}, 1, 4);
  std::vector<std::uint8_t> bytes(18);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<std::uint8_t>(i);
  }
  const auto values =
      wm::ContentValues::compute(tensor, {{0, 0}, {2, 9}}, {bytes.data(), bytes.size(), {}});
  ASSERT_EQ(values.size(), 6U);  // blocks 0, 1 (whole) and 2 (one element, also whole)
  EXPECT_EQ(values.at(5).row, 1U);
  EXPECT_EQ(values.at(5).block, 2U);
  EXPECT_NE(values.at(0).value_hi | values.at(0).value_lo, 0U);
  EXPECT_THROW(values.at(6), std::out_of_range);
}
