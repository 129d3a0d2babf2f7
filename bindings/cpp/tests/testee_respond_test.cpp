// Tests of the testee's protocol handling (one request line in, one response line out).

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "respond.hpp"

namespace json = testee::json;

namespace {

/// A request line for `op` with `input` (an object's JSON text).
std::string request(const std::string& id, const std::string& op, const std::string& input) {
  return R"({"id":")" + id + R"(","op":")" + op + R"(","input":)" + input + "}";
}

std::string quoted(const std::string& text) {
  std::string out;
  json::write_string(out, text);
  return out;
}

std::string example(const std::string& name) {
  std::ifstream in(std::string(WEIGHT_MANIFEST_EXAMPLE_DIR) + "/" + name, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

json::Value answer(const std::string& line) { return json::parse(testee::respond(line)); }

std::string error_code(const json::Value& response) {
  const json::Value* error = response.find("error");
  return error == nullptr ? std::string() : error->find("code")->text;
}

TEST(TesteeRespond, PlacementParseSucceedsWithTheThreeFields) {
  const json::Value response = answer(
      request("a", "placement.parse", R"({"document":)" + quoted(example("placement.json")) + "}"));
  EXPECT_EQ(response.find("id")->text, "a");
  EXPECT_TRUE(response.find("ok")->boolean);
  const json::Value* result = response.find("result");
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(result->find("placement_id")->text.rfind("sha256:", 0), 0U);
  EXPECT_EQ(result->find("digest")->text.size(), 64U);
  EXPECT_FALSE(result->find("canonical")->text.empty());
}

TEST(TesteeRespond, RejectionsCarryCodeMessageAndPath) {
  const std::string document =
      R"({"fragments":[],"model_id":"","placement_id":null,"revision":"r","tensors":[]})";
  const json::Value response =
      answer(request("b", "placement.parse", R"({"document":)" + quoted(document) + "}"));
  EXPECT_FALSE(response.find("ok")->boolean);
  EXPECT_EQ(error_code(response), "empty_string");
  EXPECT_EQ(response.find("error")->find("path")->text, "/model_id");
  EXPECT_FALSE(response.find("error")->find("message")->text.empty());
}

TEST(TesteeRespond, RuntimeResultsHaveAGeneration) {
  const std::string line = request("c", "runtime.from_inventory",
                                   R"({"document":)" + quoted(example("runtime-inventory.json")) +
                                       R"(,"address_semantics":null})");
  const json::Value response = answer(line);
  ASSERT_TRUE(response.find("ok")->boolean) << testee::respond(line);
  const json::Value* result = response.find("result");
  EXPECT_EQ(result->find("generation")->kind, json::Value::Kind::Number);
  EXPECT_EQ(result->find("generation")->text, "12");
  EXPECT_FALSE(result->find("runtime")->text.empty());
}

TEST(TesteeRespond, UnknownOperationsAreSkippedWhateverTheirInput) {
  const json::Value response = answer(R"({"id":"d","op":"frobnicate","input":{"frob":[1],"max":3}})");
  EXPECT_TRUE(response.find("skipped")->boolean);
  EXPECT_EQ(response.find("ok"), nullptr);
  EXPECT_TRUE(answer(R"({"id":"e","op":7})").find("skipped")->boolean);
}

TEST(TesteeRespond, BadRequestsAreAnsweredNotFatal) {
  EXPECT_EQ(error_code(answer("not json")), "bad_request");
  EXPECT_EQ(answer("not json").find("id")->kind, json::Value::Kind::Null);
  EXPECT_EQ(error_code(answer(R"({"id":"f"})")), "bad_request");
  EXPECT_EQ(error_code(answer(request("g", "placement.parse", "{}"))), "bad_request");
  EXPECT_EQ(error_code(answer(request("h", "bind", R"({"placement":"{}"})"))), "bad_request");
  EXPECT_EQ(error_code(answer(request("i", "placement.parse", R"({"document":1})"))), "bad_request");
  EXPECT_EQ(error_code(answer(request("j", "placement.parse", R"({"document":"{}","x":""})"))),
            "bad_request");
  // A null member is an absent one.
  EXPECT_EQ(error_code(answer(request("k", "placement.parse", R"({"document":null})"))),
            "bad_request");
}

TEST(TesteeRespond, TypedInputMembers) {
  const std::string placement = quoted(example("placement.json"));
  const json::Value plan = answer(request(
      "l", "plan", R"({"source":)" + placement + R"(,"target":)" + placement +
                       R"(,"max_regions":18446744073709551615,"max_segments":null})"));
  ASSERT_TRUE(plan.find("ok")->boolean);
  EXPECT_FALSE(plan.find("result")->find("plan_id")->text.empty());
  EXPECT_FALSE(plan.find("result")->find("plan")->text.empty());
  for (const char* bad : {"18446744073709551616", "-1", "1.0", "\"3\""}) {
    const std::string line = request("m", "plan", R"({"source":"{}","target":"{}","max_regions":)" +
                                                      std::string(bad) + "}");
    EXPECT_EQ(error_code(answer(line)), "bad_request") << bad;
  }
  const json::Value coverage =
      answer(request("n", "coverage", R"({"document":)" + placement + R"(,"require_complete":true})"));
  ASSERT_TRUE(coverage.find("ok")->boolean);
  EXPECT_FALSE(coverage.find("result")->find("report")->text.empty());
  EXPECT_EQ(error_code(answer(request("o", "coverage", R"({"document":"{}","require_complete":1})"))),
            "bad_request");
  // plan.bind: the fences are u64 integers or null; the three documents are required.
  for (const char* bad : {"-1", "1.5", "\"3\"", "true"}) {
    const std::string line = request(
        "p", "plan.bind",
        R"({"plan":"[]","source_binding":"{}","target_binding":"{}","source_generation":)" +
            std::string(bad) + "}");
    EXPECT_EQ(error_code(answer(line)), "bad_request") << bad;
  }
  EXPECT_EQ(error_code(answer(request("q", "plan.bind", R"({"plan":"[]","source_binding":"{}"})"))),
            "bad_request");
  EXPECT_EQ(error_code(answer(request("r", "plan.bind",
                                      R"({"plan":"[]","source_binding":"{}","target_binding":"{}",)"
                                      R"("target_generation":null})"))),
            "plan_document_invalid");
}

TEST(TesteeRespond, EchoesAnyId) {
  const json::Value response = answer(R"({"id":[1,{"x":null}],"op":"nope"})");
  std::string id;
  json::write(id, *response.find("id"));
  EXPECT_EQ(id, R"([1,{"x":null}])");
}

TEST(TesteeRespond, BlankLines) {
  EXPECT_TRUE(testee::blank(" \t\r"));
  EXPECT_FALSE(testee::blank(" {}"));
}

}  // namespace
