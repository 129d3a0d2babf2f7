// weight_manifest_testee: the C++ binding's conformance testee (shared/spec/conformance.md).
//
// Reads one JSON request per line on standard input and writes one JSON response per line
// on standard output, in order, through the C++ wrapper (weight_manifest.hpp). It never
// exits on a bad request: that is answered as a rejection with the code "bad_request",
// which no fixture expects. An operation it does not know is answered {"skipped": true}.
// Exits 0 at end of input.

#include <cstdint>
#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>

#include "json.hpp"
#include "weight_manifest.hpp"

namespace {

namespace json = testee::json;
namespace wm = weight_manifest;

/// A request that cannot be run (malformed envelope or a missing input member).
struct BadRequest {
  std::string message;
};

/// The input members of a request (conformance.md, "Operations"); null means absent.
struct Input {
  std::optional<std::string> document;
  std::optional<std::string> placement;
  std::optional<std::string> binding;
  std::optional<std::string> address_semantics;
  std::optional<std::string> placement_id;

  const std::string& need(const std::optional<std::string>& member, const char* name) const {
    if (!member) {
      throw BadRequest{std::string("input member `") + name + "` is required"};
    }
    return *member;
  }

  wm::InventoryOptions options() const {
    wm::InventoryOptions options;
    if (address_semantics) {
      options.address_semantics = std::string_view(*address_semantics);
    }
    return options;
  }

  std::optional<std::string_view> expected_id() const {
    if (placement_id) {
      return std::string_view(*placement_id);
    }
    return std::nullopt;
  }
};

Input read_input(const json::Value* value) {
  Input input;
  if (value == nullptr || value->kind == json::Value::Kind::Null) {
    return input;
  }
  if (value->kind != json::Value::Kind::Object) {
    throw BadRequest{"request input is not an object"};
  }
  for (const auto& [key, member] : value->members) {
    std::optional<std::string>* slot = nullptr;
    if (key == "document") {
      slot = &input.document;
    } else if (key == "placement") {
      slot = &input.placement;
    } else if (key == "binding") {
      slot = &input.binding;
    } else if (key == "address_semantics") {
      slot = &input.address_semantics;
    } else if (key == "placement_id") {
      slot = &input.placement_id;
    } else {
      throw BadRequest{"request input has an unknown member `" + key + "`"};
    }
    if (member.kind == json::Value::Kind::String) {
      *slot = member.text;
    } else if (member.kind != json::Value::Kind::Null) {
      throw BadRequest{"request input member `" + key + "` is not a string"};
    }
  }
  return input;
}

/// The "result" object of a success.
std::string placement_result(const wm::Placement& placement) {
  return json::ObjectWriter()
      .string("canonical", placement.canonical())
      .string("digest", placement.digest())
      .string("placement_id", placement.placement_id())
      .finish();
}

std::string runtime_result(const wm::Runtime& runtime) {
  const std::optional<std::uint64_t> generation = runtime.generation();
  return json::ObjectWriter()
      .raw("generation", generation ? std::to_string(*generation) : std::string("null"))
      .string("runtime", runtime.json())
      .finish();
}

std::string binding_result(const wm::Binding& binding) {
  return json::ObjectWriter().string("binding", binding.json()).finish();
}

/// The outcome of an operation: the result object's text, or the rejection.
using Outcome = wm::Result<std::string>;

template <class T>
Outcome render(wm::Result<T>&& result, std::string (*to_json)(const T&)) {
  if (!result) {
    return result.error();
  }
  return to_json(*result);
}

/// The operations this testee implements (conformance.md, "Operations").
bool known(std::string_view op) {
  for (const char* name : {"placement.parse", "placement.from_inventory", "runtime.parse",
                           "binding.parse", "runtime.from_inventory", "binding.from_inventory",
                           "project.placement", "project.binding", "bind"}) {
    if (op == name) {
      return true;
    }
  }
  return false;
}

/// Runs `op`; std::nullopt for an operation this testee does not know.
std::optional<Outcome> run(std::string_view op, const Input& in) {
  if (op == "placement.parse") {
    return render(wm::Placement::try_parse(in.need(in.document, "document")), placement_result);
  }
  if (op == "placement.from_inventory") {
    return render(wm::Placement::try_from_inventory(in.need(in.document, "document")),
                  placement_result);
  }
  if (op == "runtime.parse") {
    return render(wm::Runtime::try_parse(in.need(in.document, "document")), runtime_result);
  }
  if (op == "binding.parse") {
    return render(wm::Binding::try_parse(in.need(in.document, "document")), binding_result);
  }
  if (op == "runtime.from_inventory") {
    return render(wm::Runtime::try_from_inventory(in.need(in.document, "document"), in.options()),
                  runtime_result);
  }
  if (op == "binding.from_inventory") {
    return render(wm::Binding::try_from_inventory(in.need(in.document, "document"), in.options()),
                  binding_result);
  }
  if (op == "project.placement" || op == "project.binding") {
    auto runtime = wm::Runtime::try_from_inventory(in.need(in.document, "document"), in.options());
    if (!runtime) {
      return Outcome(runtime.error());
    }
    if (op == "project.placement") {
      return render(wm::try_project_placement(*runtime, in.expected_id()), placement_result);
    }
    return render(wm::try_project_binding(*runtime, in.expected_id()), binding_result);
  }
  if (op == "bind") {
    const std::string& placement_text = in.need(in.placement, "placement");
    const std::string& binding_text = in.need(in.binding, "binding");
    auto placement = wm::Placement::try_parse(placement_text);
    if (!placement) {
      return Outcome(placement.error());
    }
    auto binding = wm::Binding::try_from_inventory(binding_text, in.options());
    if (!binding) {
      return Outcome(binding.error());
    }
    return render(wm::try_bind(*placement, *binding), runtime_result);
  }
  return std::nullopt;
}

std::string bad_request(const json::Value& id, const std::string& message) {
  const std::string error =
      json::ObjectWriter().string("code", "bad_request").string("message", message).finish();
  return json::ObjectWriter().value("id", id).boolean("ok", false).raw("error", error).finish();
}

/// Answers one request line.
std::string respond(std::string_view line) {
  json::Value id;  // null until the request says otherwise
  try {
    const json::Value request = json::parse(line);
    if (const json::Value* given = request.find("id")) {
      id = *given;
    }
    const json::Value* op = request.find("op");
    if (op == nullptr) {
      return bad_request(id, "request has no op");
    }
    // An operation this testee does not know is skipped whatever its input holds (a
    // newer operation may have input members this testee cannot read).
    if (op->kind != json::Value::Kind::String || !known(op->text)) {
      return json::ObjectWriter().value("id", id).boolean("skipped", true).finish();
    }
    const Input input = read_input(request.find("input"));
    const std::optional<Outcome> outcome = run(op->text, input);
    if (!outcome) {
      return bad_request(id, "operation without an implementation: " + op->text);
    }
    if (*outcome) {
      return json::ObjectWriter().value("id", id).boolean("ok", true).raw("result", **outcome).finish();
    }
    const wm::Error& error = outcome->error();
    json::ObjectWriter body;
    body.string("code", error.code_name()).string("message", error.message());
    if (error.path()) {
      body.string("path", *error.path());
    }
    return json::ObjectWriter()
        .value("id", id)
        .boolean("ok", false)
        .raw("error", body.finish())
        .finish();
  } catch (const json::ParseError& e) {
    return bad_request(id, std::string("request is not JSON: ") + e.what());
  } catch (const BadRequest& e) {
    return bad_request(id, e.message);
  } catch (const std::exception& e) {
    return bad_request(id, std::string("unexpected failure: ") + e.what());
  }
}

bool blank(std::string_view line) {
  return line.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

}  // namespace

int main() {
  std::ios::sync_with_stdio(false);
  std::string line;
  while (std::getline(std::cin, line)) {
    if (blank(line)) {
      continue;
    }
    std::string response;
    try {
      response = respond(line);
    } catch (...) {
      // Only an allocation failure while rendering can get here.
      response = R"({"id":null,"ok":false,"error":{"code":"bad_request","message":"out of memory"}})";
    }
    std::cout << response << '\n' << std::flush;
    if (!std::cout) {
      std::cerr << "weight_manifest_testee: cannot write to standard output\n";
      return 1;
    }
  }
  return 0;
}
