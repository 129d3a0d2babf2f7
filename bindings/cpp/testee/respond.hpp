// The testee's request handling: one request line in, one response line out
// (tests/conformance/README.md), through the C++ wrapper. Separate from main() so the
// tests can drive it line by line.

#ifndef WEIGHT_MANIFEST_TESTEE_RESPOND_HPP
#define WEIGHT_MANIFEST_TESTEE_RESPOND_HPP

#include <cstdint>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "json.hpp"
#include "weight_manifest.hpp"

namespace testee {

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
  std::optional<std::string> source;
  std::optional<std::string> target;
  std::optional<bool> require_complete;
  std::optional<std::uint64_t> max_regions;
  std::optional<std::uint64_t> max_segments;
  std::optional<std::string> plan;
  std::optional<std::string> source_binding;
  std::optional<std::string> target_binding;
  std::optional<std::uint64_t> source_generation;
  std::optional<std::uint64_t> target_generation;

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

  wm::PlanLimits limits() const {
    wm::PlanLimits limits = wm::default_plan_limits();
    limits.max_regions = max_regions.value_or(limits.max_regions);
    limits.max_segments = max_segments.value_or(limits.max_segments);
    return limits;
  }
};

/// A JSON integer in 0..2^64-1, spelled with digits only.
inline std::uint64_t read_u64(const json::Value& value, const std::string& key) {
  const BadRequest bad{"request input member `" + key + "` is not a u64 integer"};
  if (value.kind != json::Value::Kind::Number || value.text.empty()) {
    throw bad;
  }
  std::uint64_t result = 0;
  for (const char c : value.text) {
    if (c < '0' || c > '9') {
      throw bad;
    }
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (result > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
      throw bad;
    }
    result = result * 10 + digit;
  }
  return result;
}

inline Input read_input(const json::Value* value) {
  Input input;
  if (value == nullptr || value->kind == json::Value::Kind::Null) {
    return input;
  }
  if (value->kind != json::Value::Kind::Object) {
    throw BadRequest{"request input is not an object"};
  }
  for (const auto& [key, member] : value->members) {
    if (member.kind == json::Value::Kind::Null) {
      continue;  // null is absent
    }
    if (key == "require_complete") {
      if (member.kind != json::Value::Kind::Bool) {
        throw BadRequest{"request input member `require_complete` is not a boolean"};
      }
      input.require_complete = member.boolean;
      continue;
    }
    if (key == "max_regions" || key == "max_segments") {
      (key == "max_regions" ? input.max_regions : input.max_segments) = read_u64(member, key);
      continue;
    }
    if (key == "source_generation" || key == "target_generation") {
      (key == "source_generation" ? input.source_generation : input.target_generation) =
          read_u64(member, key);
      continue;
    }
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
    } else if (key == "source") {
      slot = &input.source;
    } else if (key == "target") {
      slot = &input.target;
    } else if (key == "plan") {
      slot = &input.plan;
    } else if (key == "source_binding") {
      slot = &input.source_binding;
    } else if (key == "target_binding") {
      slot = &input.target_binding;
    } else {
      throw BadRequest{"request input has an unknown member `" + key + "`"};
    }
    if (member.kind != json::Value::Kind::String) {
      throw BadRequest{"request input member `" + key + "` is not a string"};
    }
    *slot = member.text;
  }
  return input;
}

/// The "result" object of a success.
inline std::string placement_result(const wm::Placement& placement) {
  return json::ObjectWriter()
      .string("canonical", placement.canonical())
      .string("digest", placement.digest())
      .string("placement_id", placement.placement_id())
      .finish();
}

inline std::string runtime_result(const wm::Runtime& runtime) {
  const std::optional<std::uint64_t> generation = runtime.generation();
  return json::ObjectWriter()
      .raw("generation", generation ? std::to_string(*generation) : std::string("null"))
      .string("runtime", runtime.json())
      .finish();
}

inline std::string binding_result(const wm::Binding& binding) {
  return json::ObjectWriter().string("binding", binding.json()).finish();
}

inline std::string coverage_result(const wm::Coverage& coverage) {
  return json::ObjectWriter().string("report", coverage.json()).finish();
}

inline std::string plan_result(const wm::Plan& plan) {
  return json::ObjectWriter().string("plan", plan.json()).string("plan_id", plan.plan_id()).finish();
}

inline std::string bound_plan_result(const wm::BoundPlan& bound) {
  return json::ObjectWriter()
      .string("bound_plan", bound.json())
      .string("bound_plan_id", bound.bound_plan_id())
      .finish();
}

/// The outcome of an operation: the result object's text, or the rejection.
using Outcome = wm::Result<std::string>;

template <class T>
inline Outcome render(wm::Result<T>&& result, std::string (*to_json)(const T&)) {
  if (!result) {
    return result.error();
  }
  return to_json(*result);
}

/// The operations this testee implements (conformance.md, "Operations").
inline bool known(std::string_view op) {
  for (const char* name : {"placement.parse", "placement.from_inventory", "runtime.parse",
                           "binding.parse", "runtime.from_inventory", "binding.from_inventory",
                           "project.placement", "project.binding", "bind", "coverage",
                           "plan", "plan.bind"}) {
    if (op == name) {
      return true;
    }
  }
  return false;
}

/// Runs `op`; std::nullopt for an operation this testee does not know.
inline std::optional<Outcome> run(std::string_view op, const Input& in) {
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
  if (op == "coverage") {
    auto placement = wm::Placement::try_parse(in.need(in.document, "document"));
    if (!placement) {
      return Outcome(placement.error());
    }
    return render(wm::try_coverage(*placement, in.require_complete.value_or(false)),
                  coverage_result);
  }
  if (op == "plan") {
    const std::string& source_text = in.need(in.source, "source");
    const std::string& target_text = in.need(in.target, "target");
    auto source = wm::Placement::try_parse(source_text);
    if (!source) {
      return Outcome(source.error());
    }
    auto target = wm::Placement::try_parse(target_text);
    if (!target) {
      return Outcome(target.error());
    }
    return render(wm::try_plan(*source, *target, in.limits()), plan_result);
  }
  if (op == "plan.bind") {
    const std::string& plan_text = in.need(in.plan, "plan");
    const std::string& source_text = in.need(in.source_binding, "source_binding");
    const std::string& target_text = in.need(in.target_binding, "target_binding");
    // Read in the order of contract §17.4: the plan, then each binding (§9.2).
    auto plan = wm::Plan::try_parse(plan_text);
    if (!plan) {
      return Outcome(plan.error());
    }
    auto source = wm::Binding::try_parse(source_text);
    if (!source) {
      return Outcome(source.error());
    }
    auto target = wm::Binding::try_parse(target_text);
    if (!target) {
      return Outcome(target.error());
    }
    return render(wm::try_bind_plan(*plan, *source, *target, in.source_generation,
                                    in.target_generation),
                  bound_plan_result);
  }
  return std::nullopt;
}

inline std::string bad_request(const json::Value& id, const std::string& message) {
  const std::string error =
      json::ObjectWriter().string("code", "bad_request").string("message", message).finish();
  return json::ObjectWriter().value("id", id).boolean("ok", false).raw("error", error).finish();
}

/// Answers one request line.
inline std::string respond(std::string_view line) {
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

inline bool blank(std::string_view line) {
  return line.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

}  // namespace testee

#endif  // WEIGHT_MANIFEST_TESTEE_RESPOND_HPP
