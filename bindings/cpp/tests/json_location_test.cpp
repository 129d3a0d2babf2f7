// invalid_json rejections carry where the text breaks: Error::location() (line, column in
// characters, byte offset), also in what(); every other error has none.

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "weight_manifest.hpp"

namespace wm = weight_manifest;

namespace {

wm::Error rejection(const std::string& text) {
  auto result = wm::Placement::try_parse(text);
  EXPECT_FALSE(result.has_value());
  return result.error();
}

}  // namespace

TEST(JsonLocation, SyntaxErrorOnALaterLine) {
  // Line 3 is `  "revision":"é""tensors": []`: the second `"` after é is its 17th
  // character and byte 52 of the text (é takes two bytes).
  const wm::Error error = rejection(
      "{\n  \"model_id\": \"mixtral-8x7b-v0\",\n  \"revision\":\"\xc3\xa9\"\"tensors\": []\n}\n");
  EXPECT_EQ(error.code(), WM_CODE_INVALID_JSON);
  EXPECT_EQ(error.message(), "placement manifest is not valid JSON");
  EXPECT_FALSE(error.path().has_value());
  ASSERT_TRUE(error.location().has_value());
  EXPECT_EQ(error.location()->line, 3U);
  EXPECT_EQ(error.location()->column, 17U);
  EXPECT_EQ(error.location()->offset, 52U);
  EXPECT_STREQ(error.what(),
               "error[invalid_json]: placement manifest is not valid JSON at line 3 column 17 "
               "(byte 52)");
}

TEST(JsonLocation, TruncatedAndInvalidUtf8) {
  const wm::JsonLocation end{2, 17, 18};
  EXPECT_EQ(rejection("{\n  \"fragments\": [").location(), std::optional<wm::JsonLocation>(end));
  const wm::JsonLocation bad_byte{1, 18, 17};
  EXPECT_EQ(rejection("{\"model_id\": \"caf\xe9\"}").location(),
            std::optional<wm::JsonLocation>(bad_byte));
  const wm::JsonLocation empty{1, 1, 0};
  EXPECT_EQ(rejection("").location(), std::optional<wm::JsonLocation>(empty));
}

TEST(JsonLocation, ThrownErrorsKeepIt) {
  try {
    (void)wm::Placement::parse("[1,\n  x]");
    FAIL() << "no error";
  } catch (const wm::Error& e) {
    ASSERT_TRUE(e.location().has_value());
    EXPECT_EQ(*e.location(), (wm::JsonLocation{2, 3, 6}));
  }
}

TEST(JsonLocation, OtherErrorsHaveNone) {
  const wm::Error error = rejection("[]");
  EXPECT_EQ(error.code_name(), "not_an_object");
  EXPECT_FALSE(error.location().has_value());
  EXPECT_EQ(std::string(error.what()), "error[not_an_object]: " + error.message() + " at /");
  const wm::Error built(WM_CODE_INVALID_JSON, "x is not valid JSON", std::nullopt,
                        wm::JsonLocation{1, 2, 1});
  EXPECT_STREQ(built.what(), "error[invalid_json]: x is not valid JSON at line 1 column 2 (byte 1)");
}
