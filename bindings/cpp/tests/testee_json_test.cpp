// Tests of the testee's minimal JSON reader and writer.

#include <gtest/gtest.h>

#include <string>

#include "json.hpp"

namespace json = testee::json;

namespace {

TEST(TesteeJson, ReadsTheRequestEnvelope) {
  const json::Value request = json::parse(
      R"( {"id":"placement/a","op":"placement.parse","input":{"document":"{\"a\":[1,2]}\n","placement_id":null}} )");
  ASSERT_NE(request.find("id"), nullptr);
  EXPECT_EQ(request.find("id")->text, "placement/a");
  EXPECT_EQ(request.find("op")->text, "placement.parse");
  const json::Value* input = request.find("input");
  ASSERT_NE(input, nullptr);
  EXPECT_EQ(input->find("document")->text, "{\"a\":[1,2]}\n");
  EXPECT_EQ(input->find("placement_id")->kind, json::Value::Kind::Null);
  EXPECT_EQ(input->find("missing"), nullptr);
}

TEST(TesteeJson, DecodesEscapesToUtf8) {
  const json::Value value = json::parse(R"("\u00e9\u20ac\ud83d\ude00\u0000\/")");
  EXPECT_EQ(value.text, std::string("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\0/", 11));
}

TEST(TesteeJson, RejectsMalformedText) {
  for (const char* text : {"", "{", "{\"a\"}", "[1,]", "\"\\ud800\"", "\"\\udc00\"", "\"a", "01x",
                           "tru", "{} x", "\"\x01\"", "-", "1.", "1e"}) {
    EXPECT_THROW(json::parse(text), json::ParseError) << text;
  }
  EXPECT_THROW(json::parse(std::string(1000, '[')), json::ParseError);
}

TEST(TesteeJson, WritesWhatItReads) {
  const std::string text =
      R"({"id":[1,-2.5e3,true,false,null],"s":"a\"b\\c\n\u0001\u001f","o":{}})";
  std::string out;
  json::write(out, json::parse(text));
  EXPECT_EQ(out, text);
  const std::string object =
      json::ObjectWriter().string("a", "x").raw("b", "1").boolean("c", false).finish();
  EXPECT_EQ(object, R"({"a":"x","b":1,"c":false})");
  EXPECT_EQ(json::ObjectWriter().finish(), "{}");
}

}  // namespace
