// Mooncake's formats through the C++ wrapper (weight_manifest_mooncake.hpp over the C
// ABI's wm_mooncake_*), against upstream's own answers: the corpus's mooncake/ fixtures,
// rendered from what upstream's wheel did with each text (tests/mooncake/corpus/).

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "json.hpp"
#include "weight_manifest.hpp"

namespace wm = weight_manifest;
namespace json = testee::json;

namespace {

json::Value fixture(const std::string& name) {
  std::ifstream in(std::string(WEIGHT_MANIFEST_MOONCAKE_CORPUS_DIR) + "/" + name + ".json",
                   std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

std::string member(const json::Value& fx, const char* part, const char* key) {
  return fx.find(part)->find(key)->text;
}

}  // namespace

TEST(Mooncake, APlacementIsWrittenBackAsUpstreamWritesItWithItsIds) {
  const json::Value fx = fixture("placement-ok-grid-tp1-dp1-pp1-unsorted-keys");
  const wm::MooncakePlacement p = wm::MooncakePlacement::parse(member(fx, "input", "mooncake"));
  EXPECT_EQ(p.json(), member(fx, "expect", "canonical"));
  EXPECT_EQ(p.placement_id(), member(fx, "expect", "placement_id"));
  EXPECT_EQ(p.digest(), member(fx, "expect", "digest"));
  EXPECT_EQ(p.topology_id(), member(fx, "expect", "topology_id"));
  EXPECT_EQ(wm::MooncakePlacement::parse(p.json()).json(), p.json());
}

TEST(Mooncake, RejectionsCarryTheCodeAndThePointerUpstreamsMutationNames) {
  const json::Value fx = fixture("placement-cover-dp2-pp2-ep2-tp2-drop-split-fragment");
  const auto p = wm::MooncakePlacement::try_parse(member(fx, "input", "mooncake"));
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code(), WM_CODE_MOONCAKE_NOT_COVERED);
  EXPECT_EQ(p.error().path(), std::optional<std::string>("/tensors/0"));
  EXPECT_FALSE(p.error().message().empty());
  // This contract's placement given as a Mooncake one is named as such.
  const auto ours = wm::MooncakePlacement::try_parse(
      R"({"fragments":[],"model_id":"m","placement_id":null,"revision":"r","tensors":[]})");
  ASSERT_FALSE(ours);
  EXPECT_EQ(ours.error().code_name(), "fields_mismatch");
}

TEST(Mooncake, AStoreManifestIsValidatedAndWrittenAsUpstreamDoes) {
  const json::Value ok = fixture("storage-ok-four-aliases-reversed");
  const wm::MooncakeStorage m = wm::MooncakeStorage::parse(member(ok, "input", "mooncake"));
  EXPECT_EQ(m.json(), member(ok, "expect", "mooncake_text"));
  EXPECT_EQ(m.digest(), member(ok, "expect", "digest"));
  const json::Value bad = fixture("storage-reject-four-duplicate-geometry");
  const auto rejected = wm::MooncakeStorage::try_parse(member(bad, "input", "mooncake"));
  ASSERT_FALSE(rejected);
  EXPECT_EQ(rejected.error().code(), WM_CODE_MOONCAKE_STORAGE_DUPLICATE_GEOMETRY);
  EXPECT_EQ(rejected.error().path(), std::optional<std::string>("/fragments/9"));
}

TEST(Mooncake, OurPlacementIsExportedAsUpstreamWritesIt) {
  const json::Value fx = fixture("export-given-ok-tp2");
  const wm::MooncakePlacement p = wm::MooncakePlacement::from_placement(
      member(fx, "input", "document"), member(fx, "input", "overrides"));
  EXPECT_EQ(p.json(), member(fx, "expect", "canonical"));
  EXPECT_EQ(p.placement_id(), member(fx, "expect", "placement_id"));
  EXPECT_EQ(p.digest(), member(fx, "expect", "digest"));
  EXPECT_EQ(p.topology_id(), member(fx, "expect", "topology_id"));
  // Without overrides everything is inferred; upstream's reader takes the result back.
  const wm::MooncakePlacement inferred =
      wm::MooncakePlacement::from_placement(member(fx, "input", "document"));
  EXPECT_EQ(wm::MooncakePlacement::parse(inferred.json()).json(), inferred.json());
}

TEST(Mooncake, ExportRejectionsNameTheOverrideOrThePlacement) {
  const json::Value fx = fixture("export-reject-override-unknown-member");
  const auto p = wm::MooncakePlacement::try_from_placement(member(fx, "input", "document"),
                                                           member(fx, "input", "overrides"));
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code(), WM_CODE_MOONCAKE_EXPORT_OVERRIDE_INVALID);
  EXPECT_EQ(p.error().path(), std::optional<std::string>("/tp_size"));
  // A Mooncake placement is not this contract's placement: the export refuses it.
  const json::Value theirs = fixture("placement-ok-tp2");
  const auto wrong = wm::MooncakePlacement::try_from_placement(member(theirs, "input", "mooncake"));
  ASSERT_FALSE(wrong);
  EXPECT_FALSE(wrong.error().message().empty());
}

TEST(Mooncake, APlacementIsImportedAsThisContractsPlacement) {
  const json::Value fx = fixture("import-ok-tp2-reordered");
  const wm::Placement p = wm::import_mooncake(member(fx, "input", "mooncake"));
  EXPECT_EQ(p.canonical(), member(fx, "expect", "canonical"));
  EXPECT_EQ(p.placement_id(), member(fx, "expect", "placement_id"));
  EXPECT_EQ(p.digest(), member(fx, "expect", "digest"));
  // Exported again with nothing given, upstream's reader takes it, and importing that gives
  // the same placement back (§20.7).
  const wm::MooncakePlacement back = wm::MooncakePlacement::from_placement(p.canonical());
  EXPECT_EQ(wm::import_mooncake(back.json()).canonical(), p.canonical());
}

TEST(Mooncake, ImportRejectsWhatThisContractCannotHold) {
  const json::Value fx = fixture("import-ok-mutant-tp2-split-replica-in-two");
  const auto p = wm::try_import_mooncake(member(fx, "input", "mooncake"));
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code(), WM_CODE_REPLICATED_FRAGMENT_INCOMPLETE);
  EXPECT_FALSE(p.error().message().empty());
  // This contract's own placement is not Mooncake's: named at the root.
  const json::Value ours = fixture("import-reject-our-format");
  const auto wrong = wm::try_import_mooncake(member(ours, "input", "mooncake"));
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().code(), WM_CODE_FIELDS_MISMATCH);
  EXPECT_EQ(wrong.error().path(), std::optional<std::string>(""));
}

TEST(Mooncake, APlanHasUpstreamsRegions) {
  for (const char* name : {"plan-tp2-pp1-ep1-dp1-to-tp4-pp1-ep1-dp1",
                           "plan-stored-to-tp2-pp1-ep1-dp1",
                           "plan-nd-nd-tp1-ep1-to-nd-tp2-ep1"}) {
    const json::Value fx = fixture(name);
    const wm::MooncakePlan plan =
        wm::MooncakePlan::plan(member(fx, "input", "source"), member(fx, "input", "target"));
    EXPECT_EQ(plan.json(), member(fx, "expect", "mooncake_plan")) << name;
  }
}

TEST(Mooncake, APlanBetweenGenerationsIsRejectedAtTheTargetsGeneration) {
  const json::Value fx = fixture("plan-generation-gen1-to-gen2");
  const auto plan =
      wm::MooncakePlan::try_plan(member(fx, "input", "source"), member(fx, "input", "target"));
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().code(), WM_CODE_MOONCAKE_GENERATION_MISMATCH);
  EXPECT_EQ(plan.error().path(), std::optional<std::string>("/weight_generation"));
  EXPECT_THROW(wm::MooncakePlan::plan(member(fx, "input", "source"), "{}"), wm::Error);
}

TEST(Mooncake, BindingsAreCheckedAsUpstreamChecksThem) {
  const json::Value good = fixture("binding-tp2-pp1-ep1-dp2-ok");
  EXPECT_FALSE(wm::try_validate_mooncake_bindings(member(good, "input", "mooncake"),
                                                  member(good, "input", "placement"))
                   .has_value());
  const json::Value bad = fixture("binding-tp2-pp1-ep1-dp2-overlap");
  const auto error = wm::try_validate_mooncake_bindings(member(bad, "input", "mooncake"),
                                                        member(bad, "input", "placement"));
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code(), WM_CODE_ADDRESS_OVERLAP);
  EXPECT_THROW(wm::validate_mooncake_bindings(member(bad, "input", "mooncake"),
                                              member(bad, "input", "placement")),
               wm::Error);
}
