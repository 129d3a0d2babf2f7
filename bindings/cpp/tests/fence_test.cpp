// The fence rule through the C++ wrapper (try_check_fence / check_fence over
// wm_fence_check): the plan_bind vectors' bound plan against the vector bindings and
// against held fence documents of one worker, with the exact code and pointer.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "weight_manifest.hpp"

namespace wm = weight_manifest;

namespace {

std::string vector(const std::string& name) {
  std::ifstream in(std::string(WEIGHT_MANIFEST_PLAN_BIND_DIR) + "/" + name, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string worker(int generation) {
  return R"({"generation":)" + std::to_string(generation) +
         R"(,"instance_id":"server","lease_id":"lease-server-12","placement_digest":null,)"
         R"("placement_id":null,"worker_id":"server-0"})";
}

}  // namespace

TEST(Fence, AWorkersHeldFenceIsTheBoundPlansOrNamesTheMember) {
  const wm::BoundPlan bound = wm::BoundPlan::parse(vector("bound-plan.json"));
  EXPECT_FALSE(wm::try_check_fence(bound, wm::FenceSide::target, worker(12)));
  const auto next = wm::try_check_fence(bound, wm::FenceSide::target, worker(13));
  ASSERT_TRUE(next);
  EXPECT_EQ(next->code_name(), "transfer_fence_mismatch");
  EXPECT_EQ(next->path(), std::optional<std::string>("/target/generation"));
  EXPECT_EQ(next->message(),
            "the target worker server-0 holds generation 13, the bound plan was bound at 12: "
            "bind again");
  const auto other_side = wm::try_check_fence(bound, wm::FenceSide::source, worker(12));
  ASSERT_TRUE(other_side);
  EXPECT_EQ(other_side->path(), std::optional<std::string>("/source/instance_id"));
  const auto invalid = wm::try_check_fence(bound, wm::FenceSide::target, std::string("{}"));
  ASSERT_TRUE(invalid);
  EXPECT_EQ(invalid->code_name(), "fence_document_invalid");
  EXPECT_THROW(wm::check_fence(bound, wm::FenceSide::target, worker(13)), wm::Error);
}

TEST(Fence, AWholeBindingIsCheckedMemberByMember) {
  const wm::BoundPlan bound = wm::BoundPlan::parse(vector("bound-plan.json"));
  const wm::Binding current = wm::Binding::parse(vector("target-binding.json"));
  wm::check_fence(bound, wm::FenceSide::target, current);
  const wm::Binding stale = wm::Binding::parse(vector("target-binding-stale.json"));
  const auto error = wm::try_check_fence(bound, wm::FenceSide::target, stale);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->path(), std::optional<std::string>("/target/lease_id"));
  const wm::Binding other = wm::Binding::parse(vector("target-binding-other-digest.json"));
  EXPECT_EQ(wm::try_check_fence(bound, wm::FenceSide::target, other)->path(),
            std::optional<std::string>("/target/placement_digest"));
  const wm::Binding source = wm::Binding::parse(vector("source-binding.json"));
  wm::check_fence(bound, wm::FenceSide::source, source);
}
