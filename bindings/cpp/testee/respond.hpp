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
#include <vector>

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
  // The content operations' geometry (absent lists are empty) and inputs.
  std::optional<std::string> tensor_id;
  std::vector<std::uint64_t> global_shape;
  std::vector<std::uint64_t> global_offset;
  std::vector<std::uint64_t> local_shape;
  std::optional<std::uint64_t> itemsize;
  std::optional<std::uint64_t> block_elements;
  std::optional<std::string> bytes;
  std::optional<std::string> fragments;
  std::optional<std::string> mooncake;
  std::optional<std::string> overrides;
  std::optional<std::string> quantization;

  template <class T>
  const T& need(const std::optional<T>& member, const char* name) const {
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
inline std::uint64_t read_u64(const json::Value& value, const std::string& key);

/// A JSON array of such integers.
inline std::vector<std::uint64_t> read_u64s(const json::Value& value, const std::string& key) {
  if (value.kind != json::Value::Kind::Array) {
    throw BadRequest{"request input member `" + key + "` is not an array"};
  }
  std::vector<std::uint64_t> out;
  out.reserve(value.items.size());
  for (const json::Value& item : value.items) {
    out.push_back(read_u64(item, key));
  }
  return out;
}

/// Lowercase hex to bytes.
inline std::vector<std::uint8_t> read_hex(const std::string& text) {
  const auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') {
      return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
      return c - 'a' + 10;
    }
    throw BadRequest{"request input member `bytes` is not lowercase hex"};
  };
  if (text.size() % 2 != 0) {
    throw BadRequest{"request input member `bytes` has an odd number of hex digits"};
  }
  std::vector<std::uint8_t> out(text.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<std::uint8_t>(digit(text[2 * i]) * 16 + digit(text[2 * i + 1]));
  }
  return out;
}

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
    if (key == "itemsize" || key == "block_elements") {
      (key == "itemsize" ? input.itemsize : input.block_elements) = read_u64(member, key);
      continue;
    }
    if (key == "global_shape" || key == "global_offset" || key == "local_shape") {
      (key == "global_shape" ? input.global_shape
                             : key == "global_offset" ? input.global_offset : input.local_shape) =
          read_u64s(member, key);
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
    } else if (key == "tensor_id") {
      slot = &input.tensor_id;
    } else if (key == "bytes") {
      slot = &input.bytes;
    } else if (key == "fragments") {
      slot = &input.fragments;
    } else if (key == "mooncake") {
      slot = &input.mooncake;
    } else if (key == "overrides") {
      slot = &input.overrides;
    } else if (key == "quantization") {
      slot = &input.quantization;
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
                           "plan", "plan.bind", "content.partial", "content.block_values",
                           "content.combine", "content.manifest", "mooncake.validate",
                           "mooncake.storage", "mooncake.export", "mooncake.import",
                           "mooncake.plan", "mooncake.binding"}) {
    if (op == name) {
      return true;
    }
  }
  return false;
}

/// The content operations (contract §19) over the C++ wrapper's content classes.
inline std::optional<Outcome> run_content(std::string_view op, const Input& in) {
  if (op == "content.manifest") {
    auto manifest = wm::ContentManifest::try_parse(in.need(in.document, "document"));
    if (!manifest) {
      return Outcome(manifest.error());
    }
    if (auto error = manifest->verify()) {
      return Outcome(std::move(*error));
    }
    return Outcome(json::ObjectWriter().string("content_manifest", manifest->json()).finish());
  }
  auto tensor = wm::ContentTensor::try_make(in.need(in.tensor_id, "tensor_id"), in.global_shape,
                                            in.need(in.itemsize, "itemsize"),
                                            in.need(in.block_elements, "block_elements"));
  if (op == "content.combine") {
    const json::Value given = json::parse(in.need(in.fragments, "fragments"));
    if (given.kind != json::Value::Kind::Array) {
      throw BadRequest{"request input member `fragments` is not an array"};
    }
    if (!tensor) {
      return Outcome(tensor.error());
    }
    std::vector<wm::ContentPartial> partials;
    std::vector<wm::ContentFragment> fragments;
    partials.reserve(given.items.size());
    for (const json::Value& item : given.items) {
      const json::Value* offset = item.find("global_offset");
      const json::Value* shape = item.find("local_shape");
      const json::Value* partial = item.find("partial");
      if (offset == nullptr || shape == nullptr || partial == nullptr) {
        throw BadRequest{"a fragment lacks global_offset, local_shape or partial"};
      }
      std::string text;
      json::write(text, *partial);
      auto parsed = wm::ContentPartial::try_parse(text);
      if (!parsed) {
        return Outcome(parsed.error());
      }
      partials.push_back(std::move(*parsed));
      fragments.push_back(wm::ContentFragment{
          wm::ContentBox{read_u64s(*offset, "global_offset"), read_u64s(*shape, "local_shape")},
          nullptr});
    }
    for (std::size_t i = 0; i < fragments.size(); ++i) {
      fragments[i].partial = &partials[i];
    }
    auto digest = wm::try_combine(*tensor, fragments);
    if (!digest) {
      return Outcome(digest.error());
    }
    return Outcome(json::ObjectWriter().string("digest", *digest).finish());
  }
  const std::vector<std::uint8_t> data = read_hex(in.need(in.bytes, "bytes"));
  if (!tensor) {
    return Outcome(tensor.error());
  }
  const wm::ContentBox box{in.global_offset, in.local_shape};
  const wm::ContentBytes bytes{data.data(), data.size(), {}};
  if (op == "content.partial") {
    auto partial = wm::ContentPartial::try_compute(*tensor, box, bytes);
    if (!partial) {
      return Outcome(partial.error());
    }
    return Outcome(json::ObjectWriter().string("partial", partial->json()).finish());
  }
  auto values = wm::ContentValues::try_compute(*tensor, box, bytes);
  if (!values) {
    return Outcome(values.error());
  }
  return Outcome(json::ObjectWriter().string("values", values->json()).finish());
}

/// Runs `op`; std::nullopt for an operation this testee does not know.
inline std::optional<Outcome> run(std::string_view op, const Input& in) {
  if (op.substr(0, 8) == "content.") {
    return run_content(op, in);
  }
  if (op == "mooncake.validate" || op == "mooncake.export") {
    auto placement =
        op == "mooncake.validate"
            ? wm::MooncakePlacement::try_parse(in.need(in.mooncake, "mooncake"))
            : wm::MooncakePlacement::try_from_placement(
                  in.need(in.document, "document"),
                  in.overrides ? std::optional<std::string_view>(*in.overrides) : std::nullopt);
    if (!placement) {
      return Outcome(placement.error());
    }
    return Outcome(json::ObjectWriter()
                       .string("canonical", placement->json())
                       .string("digest", placement->digest())
                       .string("placement_id", placement->placement_id())
                       .string("topology_id", placement->topology_id())
                       .finish());
  }
  if (op == "mooncake.import") {
    return render(wm::try_import_mooncake(in.need(in.mooncake, "mooncake")), placement_result);
  }
  if (op == "mooncake.plan") {
    auto plan = wm::MooncakePlan::try_plan(in.need(in.source, "source"), in.need(in.target, "target"));
    if (!plan) {
      return Outcome(plan.error());
    }
    return Outcome(json::ObjectWriter().string("mooncake_plan", plan->json()).finish());
  }
  if (op == "mooncake.binding") {
    if (auto error = wm::try_validate_mooncake_bindings(in.need(in.mooncake, "mooncake"),
                                                        in.need(in.placement, "placement"))) {
      return Outcome(std::move(*error));
    }
    return Outcome(json::ObjectWriter().finish());
  }
  if (op == "mooncake.storage") {
    auto storage = wm::MooncakeStorage::try_parse(in.need(in.mooncake, "mooncake"));
    if (!storage) {
      return Outcome(storage.error());
    }
    return Outcome(json::ObjectWriter()
                       .string("digest", storage->digest())
                       .string("mooncake_text", storage->json())
                       .finish());
  }
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
    if (in.quantization) {
      return render(wm::try_plan_quantized(*source, *target, *in.quantization, in.limits()), plan_result);
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
