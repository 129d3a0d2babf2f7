// Tests of the C++17 wrapper (weight_manifest.hpp) over the real library.

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "weight_manifest.hpp"

namespace wm = weight_manifest;

namespace {

std::string example(const std::string& name) {
  std::ifstream in(std::string(WEIGHT_MANIFEST_EXAMPLE_DIR) + "/" + name, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const char* const kEmptyModelId =
    R"({"fragments":[],"model_id":"","placement_id":null,"revision":"r","tensors":[]})";

static_assert(!std::is_copy_constructible_v<wm::Placement>, "handles are move-only");
static_assert(std::is_nothrow_move_constructible_v<wm::Placement>, "handles move cheaply");

TEST(Placement, ParsesWithIdDigestAndCanonicalText) {
  const wm::Placement placement = wm::Placement::parse(example("placement.json"));
  EXPECT_EQ(placement.placement_id().rfind("sha256:", 0), 0U);
  EXPECT_EQ(placement.placement_id().size(), 7U + 64U);
  EXPECT_EQ(placement.digest().size(), 64U);
  const std::string canonical = placement.canonical();
  EXPECT_EQ(canonical.find('\n'), std::string::npos);
  const wm::Placement again = wm::Placement::parse(canonical);
  EXPECT_EQ(again.placement_id(), placement.placement_id());
  EXPECT_EQ(again.canonical(), canonical);
}

TEST(Error, CarriesCodeNamePathAndWhat) {
  try {
    wm::Placement::parse(kEmptyModelId);
    FAIL() << "expected a rejection";
  } catch (const wm::Error& e) {
    EXPECT_EQ(e.code(), WM_CODE_EMPTY_STRING);
    EXPECT_EQ(e.code_name(), "empty_string");
    ASSERT_TRUE(e.path().has_value());
    EXPECT_EQ(*e.path(), "/model_id");
    EXPECT_FALSE(e.message().empty());
    EXPECT_EQ(std::string(e.what()), "error[empty_string]: " + e.message() + " at /model_id");
  }
}

TEST(Error, WithoutPath) {
  const auto result = wm::Placement::try_parse(R"({"a":)");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), WM_CODE_INVALID_JSON);
  EXPECT_FALSE(result.error().path().has_value());
  EXPECT_FALSE(result.error().detail().has_value());
}

TEST(Error, DuplicateKeyPointsAtTheMember) {
  const auto result = wm::Placement::try_parse(R"({"a":1,"a":2})");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), WM_CODE_DUPLICATE_KEY);
  EXPECT_EQ(result.error().path(), std::optional<std::string>("/a"));
}

TEST(Error, CarriesTheNumbersBehindTheRule) {
  // Two fragments, the second in the input first by id; its 4x4 box of 2-byte items is 32
  // bytes, not 31.
  const std::string document =
      R"({"fragments":[)"
      R"({"aliases":[],"global_offset":[4,0],"local_shape":[4,4],"nbytes":32,)"
      R"("placement_fragment_id":"w/b","rank":{"dp":0,"ep":0,"pp":0,"tp":1},"tensor_id":"w"},)"
      R"({"aliases":[],"global_offset":[0,0],"local_shape":[4,4],"nbytes":31,)"
      R"("placement_fragment_id":"w/a","rank":{"dp":0,"ep":0,"pp":0,"tp":0},"tensor_id":"w"}],)"
      R"("model_id":"m","placement_id":null,"revision":"r","tensors":[{"dtype":"bfloat16",)"
      R"("expert_id":null,"global_shape":[8,4],"itemsize":2,"layer_id":null,)"
      R"("layout_fingerprint":"f","partition_dim":0,"shard_dims":null,"tensor_id":"w"}]})";
  const auto result = wm::Placement::try_parse(document);
  ASSERT_FALSE(result);
  const wm::Error& e = result.error();
  EXPECT_EQ(e.code(), WM_CODE_NBYTES_MISMATCH);
  EXPECT_EQ(e.path(), std::optional<std::string>("/fragments/1/nbytes"));
  ASSERT_TRUE(e.detail().has_value());
  EXPECT_EQ(e.detail()->json, R"({"expected":32,"got":31,"other":null})");
  EXPECT_EQ(e.detail()->summary, "expected 32, got 31");
}

TEST(Error, MessagesKeepEmbeddedNulCharacters) {
  const std::string document =
      R"({"fragments":[{"aliases":[],"global_offset":[0],"local_shape":[1],"nbytes":1,)"
      R"("placement_fragment_id":"f","rank":{"dp":0,"ep":0,"pp":0,"tp":0},"tensor_id":"x\u0000y"}],)"
      R"("model_id":"m","placement_id":null,"revision":"r","tensors":[]})";
  const auto result = wm::Placement::try_parse(document);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code_name(), "unknown_tensor_id");
  EXPECT_NE(result.error().message().find(std::string("x\0y", 3)), std::string::npos);
}

TEST(Result, NonThrowingFormHoldsValueOrError) {
  auto ok = wm::Placement::try_parse(example("placement.json"));
  ASSERT_TRUE(ok.has_value());
  EXPECT_FALSE(ok->digest().empty());
  EXPECT_THROW((void)ok.error(), std::logic_error);

  auto bad = wm::Placement::try_parse(kEmptyModelId);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), WM_CODE_EMPTY_STRING);
  EXPECT_THROW((void)bad.value(), wm::Error);
}

TEST(Input, BytesThatAreNotUtf8AreInvalidJson) {
  const std::string text = "{\"model_id\":\"\xff\"}";
  EXPECT_EQ(wm::Placement::try_parse(text).error().code(), WM_CODE_INVALID_JSON);
  EXPECT_EQ(wm::Placement::try_parse(std::string_view()).error().code(), WM_CODE_INVALID_JSON);
  EXPECT_EQ(wm::Runtime::try_parse("").error().code_name(), "invalid_json");
}

TEST(Handles, MovedFromHandlesAreEmptyAndRejectedAsArguments) {
  wm::Runtime runtime = wm::Runtime::from_inventory(example("runtime-inventory.json"));
  const wm::Runtime moved = std::move(runtime);
  EXPECT_FALSE(moved.json().empty());
  EXPECT_EQ(runtime.json(), "");  // NOLINT(bugprone-use-after-move): tested on purpose
  EXPECT_FALSE(runtime.generation().has_value());
  const auto projected = wm::try_project_placement(runtime);
  ASSERT_FALSE(projected);
  EXPECT_EQ(projected.error().code(), WM_CODE_INVALID_ARGUMENT);
  EXPECT_EQ(projected.error().code_name(), "invalid_argument");
}

TEST(Operations, ProjectAndBindRoundTrip) {
  const wm::Runtime runtime = wm::Runtime::from_inventory(example("runtime-inventory.json"));
  ASSERT_TRUE(runtime.generation().has_value());
  const wm::Placement placement = wm::project_placement(runtime);
  const wm::Binding binding = wm::project_binding(runtime, placement.placement_id());
  const wm::Runtime bound = wm::bind(placement, binding);
  EXPECT_EQ(bound.generation(), runtime.generation());
  EXPECT_EQ(wm::project_placement(bound).canonical(), placement.canonical());
  EXPECT_EQ(wm::project_binding(bound).json(), binding.json());
  EXPECT_EQ(wm::Runtime::parse(bound.json()).json(), bound.json());
  EXPECT_EQ(wm::Binding::parse(binding.json()).json(), binding.json());

  const wm::Binding inventory = wm::Binding::from_inventory(example("binding-inventory.json"));
  EXPECT_NO_THROW(wm::bind(placement, inventory));
}

TEST(Operations, ExpectedPlacementIdIsChecked) {
  const wm::Runtime runtime = wm::Runtime::from_inventory(example("runtime-inventory.json"));
  EXPECT_EQ(wm::try_project_placement(runtime, "sha256:00").error().code(),
            WM_CODE_PLACEMENT_ID_MISMATCH);
  // A given empty id is an empty string, not "not given".
  EXPECT_EQ(wm::try_project_placement(runtime, std::string_view()).error().code(),
            WM_CODE_EMPTY_STRING);
}

TEST(Operations, AddressSemanticsOption) {
  const std::string text = example("binding-inventory.json");
  EXPECT_TRUE(wm::Binding::try_from_inventory(text));
  EXPECT_TRUE(wm::Binding::try_from_inventory(text, wm::InventoryOptions::view()));
  for (std::string_view value : {std::string_view("View"), std::string_view()}) {
    wm::InventoryOptions options;
    options.address_semantics = value;
    const auto result = wm::Binding::try_from_inventory(text, options);
    ASSERT_FALSE(result) << value;
    EXPECT_EQ(result.error().code(), WM_CODE_ADDRESS_SEMANTICS_INVALID) << value;
  }
}

TEST(Codes, NamesAreUniqueAndNumberedWithoutGaps) {
  // 0 (ok), then the core's codes from 1 without a gap: the contract's 57 at least.
  std::set<std::string_view> names;
  std::uint32_t n = 0;
  for (; !wm::code_name(static_cast<wm::Code>(n)).empty(); ++n) {
    names.insert(wm::code_name(static_cast<wm::Code>(n)));
  }
  EXPECT_GE(n, 58U);
  EXPECT_EQ(names.size(), n);
  EXPECT_TRUE(wm::code_name(static_cast<wm::Code>(999)).empty());
  EXPECT_EQ(wm::code_name(WM_CODE_FRAGMENT_OVERLAP), "fragment_overlap");
  EXPECT_EQ(static_cast<std::uint32_t>(WM_CODE_FRAGMENT_OVERLAP), 33U);
  EXPECT_EQ(wm::code_name(WM_CODE_BINDING_NBYTES_MISMATCH), "binding_nbytes_mismatch");
  EXPECT_EQ(wm::code_name(WM_CODE_INTERNAL_ERROR), "internal_error");
  EXPECT_FALSE(wm::version().empty());
}

TEST(Handles, ConcurrentReadsSeeOneText) {
  const wm::Placement placement = wm::Placement::parse(example("placement.json"));
  std::vector<std::string> seen(4);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&placement, &seen, i] { seen[i] = placement.canonical(); });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  for (const auto& text : seen) {
    EXPECT_EQ(text, seen[0]);
  }
  EXPECT_FALSE(seen[0].empty());
}

TEST(Analysis, CoverageAndPlan) {
  const wm::Placement placement = wm::Placement::parse(example("placement.json"));
  const wm::Coverage coverage = wm::coverage(placement, true);
  EXPECT_TRUE(coverage.is_complete());
  EXPECT_NE(coverage.json().find("\"tensors\""), std::string::npos);

  const wm::Plan identity = wm::plan(placement, placement);
  EXPECT_FALSE(identity.plan_id().empty());
  EXPECT_EQ(wm::plan(placement, placement, wm::default_plan_limits()).json(), identity.json());

  wm::PlanLimits tight = wm::default_plan_limits();
  tight.max_regions = 0;
  const auto limited = wm::try_plan(placement, placement, tight);
  ASSERT_FALSE(limited);
  EXPECT_EQ(limited.error().code_name(), "plan_limit_exceeded");
}

std::string plan_bind_vector(const std::string& name) {
  std::ifstream in(std::string(WEIGHT_MANIFEST_PLAN_BIND_DIR) + "/" + name, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(Analysis, BindPlan) {
  const wm::Plan plan = wm::Plan::parse(plan_bind_vector("plan.json"));
  EXPECT_EQ(plan.json(), plan_bind_vector("plan.json"));
  const wm::Binding source = wm::Binding::parse(plan_bind_vector("source-binding.json"));
  const wm::Binding target = wm::Binding::parse(plan_bind_vector("target-binding.json"));
  const wm::BoundPlan bound = wm::bind_plan(plan, source, target, 3, 12);
  EXPECT_EQ(bound.json(), plan_bind_vector("bound-plan.json"));
  EXPECT_NE(bound.json().find(bound.bound_plan_id()), std::string::npos);
  EXPECT_EQ(wm::bind_plan(plan, source, target).json(), bound.json());

  const auto stale = wm::try_bind_plan(plan, source, target, std::nullopt, 11);
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().code_name(), "plan_binding_generation_mismatch");
  EXPECT_FALSE(stale.error().path());
  const auto swapped = wm::try_bind_plan(plan, target, source);
  ASSERT_FALSE(swapped);
  EXPECT_EQ(swapped.error().code_name(), "plan_binding_placement_id_mismatch");
  const auto tampered = wm::Plan::try_parse("{}");
  ASSERT_FALSE(tampered);
  EXPECT_EQ(tampered.error().code_name(), "plan_document_invalid");
}

TEST(Error, BuiltByCallers) {
  const wm::Error error(WM_CODE_FRAGMENT_OVERLAP, "boxes overlap", std::string("/fragments/3"));
  EXPECT_EQ(error.code_name(), "fragment_overlap");
  EXPECT_STREQ(error.what(), "error[fragment_overlap]: boxes overlap at /fragments/3");
  const wm::Error root(WM_CODE_NOT_AN_OBJECT, "not an object", std::string());
  EXPECT_STREQ(root.what(), "error[not_an_object]: not an object at /");
}

}  // namespace
