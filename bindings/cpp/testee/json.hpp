// A minimal JSON reader and writer for the testee's protocol envelope (one request or
// response object per line). It reads any JSON value into a small tree (numbers are kept
// as their text) and writes strings, integers, booleans, null and objects. It is not a
// general-purpose library: documents themselves travel as strings and are parsed by the
// core, never by this code.

#ifndef WEIGHT_MANIFEST_TESTEE_JSON_HPP
#define WEIGHT_MANIFEST_TESTEE_JSON_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace testee::json {

/// A parse failure; what() says what and where.
class ParseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One JSON value. Objects keep their members in order (duplicates included).
struct Value {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  std::string text;  // a string's value, or a number's spelling
  std::vector<Value> items;
  std::vector<std::pair<std::string, Value>> members;

  /// The first member named `key`, or nullptr (also when this is no object).
  const Value* find(std::string_view key) const {
    if (kind != Kind::Object) {
      return nullptr;
    }
    for (const auto& member : members) {
      if (member.first == key) {
        return &member.second;
      }
    }
    return nullptr;
  }
};

namespace detail {

constexpr int kMaxDepth = 128;

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Value document() {
    Value value = parse_value(0);
    skip_space();
    if (pos_ != text_.size()) {
      fail("trailing characters");
    }
    return value;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw ParseError(what + " at byte " + std::to_string(pos_));
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  void expect(char c) {
    if (pos_ >= text_.size() || text_[pos_] != c) {
      fail(std::string("expected '") + c + "'");
    }
    ++pos_;
  }

  void literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) {
      fail("invalid literal");
    }
    pos_ += word.size();
  }

  Value parse_value(int depth) {
    if (depth > kMaxDepth) {
      fail("nesting too deep");
    }
    skip_space();
    Value value;
    switch (peek()) {
      case '{':
        value.kind = Value::Kind::Object;
        parse_object(value, depth);
        break;
      case '[':
        value.kind = Value::Kind::Array;
        parse_array(value, depth);
        break;
      case '"':
        value.kind = Value::Kind::String;
        value.text = parse_string();
        break;
      case 't':
        literal("true");
        value.kind = Value::Kind::Bool;
        value.boolean = true;
        break;
      case 'f':
        literal("false");
        value.kind = Value::Kind::Bool;
        break;
      case 'n':
        literal("null");
        break;
      default:
        value.kind = Value::Kind::Number;
        value.text = parse_number();
        break;
    }
    return value;
  }

  void parse_object(Value& value, int depth) {
    expect('{');
    skip_space();
    if (peek() == '}') {
      ++pos_;
      return;
    }
    for (;;) {
      skip_space();
      if (peek() != '"') {
        fail("expected a member name");
      }
      std::string key = parse_string();
      skip_space();
      expect(':');
      value.members.emplace_back(std::move(key), parse_value(depth + 1));
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect('}');
      return;
    }
  }

  void parse_array(Value& value, int depth) {
    expect('[');
    skip_space();
    if (peek() == ']') {
      ++pos_;
      return;
    }
    for (;;) {
      value.items.push_back(parse_value(depth + 1));
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect(']');
      return;
    }
  }

  std::string parse_number() {
    const std::size_t start = pos_;
    auto digits = [&] {
      const std::size_t first = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
        ++pos_;
      }
      if (pos_ == first) {
        fail("expected a digit");
      }
    };
    if (peek() == '-') {
      ++pos_;
    }
    digits();
    if (peek() == '.') {
      ++pos_;
      digits();
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '+' || peek() == '-') {
        ++pos_;
      }
      digits();
    }
    return std::string(text_.substr(start, pos_ - start));
  }

  unsigned hex4() {
    if (text_.size() - pos_ < 4) {
      fail("truncated \\u escape");
    }
    unsigned value = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[pos_++];
      value <<= 4U;
      if (c >= '0' && c <= '9') {
        value |= static_cast<unsigned>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        value |= static_cast<unsigned>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        value |= static_cast<unsigned>(c - 'A' + 10);
      } else {
        fail("invalid \\u escape");
      }
    }
    return value;
  }

  static void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  std::string parse_string() {
    expect('"');
    std::string out;
    for (;;) {
      if (pos_ >= text_.size()) {
        fail("unterminated string");
      }
      const char c = text_[pos_++];
      if (c == '"') {
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20) {
        fail("control character in string");
      }
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) {
        fail("unterminated escape");
      }
      switch (text_[pos_++]) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case '/': out.push_back('/'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': {
          std::uint32_t cp = hex4();
          if (cp >= 0xDC00 && cp <= 0xDFFF) {
            fail("lone low surrogate");
          }
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (text_.substr(pos_, 2) != "\\u") {
              fail("lone high surrogate");
            }
            pos_ += 2;
            const std::uint32_t low = hex4();
            if (low < 0xDC00 || low > 0xDFFF) {
              fail("invalid surrogate pair");
            }
            cp = 0x10000 + ((cp - 0xD800) << 10U) + (low - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default:
          fail("invalid escape");
      }
    }
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace detail

/// Parses one JSON text; throws ParseError.
inline Value parse(std::string_view text) { return detail::Parser(text).document(); }

/// Appends `text` as a JSON string (bytes >= 0x20 other than '"' and '\\' are copied).
inline void write_string(std::string& out, std::string_view text) {
  static const char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (byte < 0x20) {
          out += "\\u00";
          out.push_back(kHex[byte >> 4U]);
          out.push_back(kHex[byte & 0xFU]);
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

/// Appends any value.
inline void write(std::string& out, const Value& value) {
  switch (value.kind) {
    case Value::Kind::Null: out += "null"; break;
    case Value::Kind::Bool: out += value.boolean ? "true" : "false"; break;
    case Value::Kind::Number: out += value.text; break;
    case Value::Kind::String: write_string(out, value.text); break;
    case Value::Kind::Array: {
      out.push_back('[');
      for (std::size_t i = 0; i < value.items.size(); ++i) {
        if (i > 0) {
          out.push_back(',');
        }
        write(out, value.items[i]);
      }
      out.push_back(']');
      break;
    }
    case Value::Kind::Object: {
      out.push_back('{');
      for (std::size_t i = 0; i < value.members.size(); ++i) {
        if (i > 0) {
          out.push_back(',');
        }
        write_string(out, value.members[i].first);
        out.push_back(':');
        write(out, value.members[i].second);
      }
      out.push_back('}');
      break;
    }
  }
}

/// Builds an object member by member.
class ObjectWriter {
 public:
  ObjectWriter& raw(std::string_view key, std::string_view json) {
    separator(key);
    out_ += json;
    return *this;
  }
  ObjectWriter& string(std::string_view key, std::string_view value) {
    separator(key);
    write_string(out_, value);
    return *this;
  }
  ObjectWriter& value(std::string_view key, const Value& value) {
    separator(key);
    write(out_, value);
    return *this;
  }
  ObjectWriter& boolean(std::string_view key, bool value) {
    return raw(key, value ? "true" : "false");
  }
  /// The finished object text.
  std::string finish() const { return out_ + "}"; }

 private:
  void separator(std::string_view key) {
    if (!first_) {
      out_.push_back(',');
    }
    first_ = false;
    write_string(out_, key);
    out_.push_back(':');
  }

  std::string out_ = "{";
  bool first_ = true;
};

}  // namespace testee::json

#endif  // WEIGHT_MANIFEST_TESTEE_JSON_HPP
