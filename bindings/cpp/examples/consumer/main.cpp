// The example: validate a placement, project a runtime inventory to its placement and
// binding, bind the placement to a binding inventory, and check the round trip, the same
// job as `make example` with the CLI.
//
//   weight_manifest_example examples/moe-ep-pp
//
// Built in tree (bindings/cpp) and out of tree (this directory's CMakeLists.txt) against
// the installed package.

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <weight_manifest.hpp>

namespace wm = weight_manifest;

static std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error("cannot read " + path);
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " EXAMPLE_DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  try {
    const wm::Placement placement = wm::Placement::parse(read_file(dir + "/placement.json"));
    std::cout << "placement " << placement.placement_id() << " digest " << placement.digest()
              << "\n";

    const wm::Runtime runtime = wm::Runtime::from_inventory(read_file(dir + "/runtime-inventory.json"));
    const wm::Placement projected = wm::project_placement(runtime);
    const wm::Binding binding = wm::project_binding(runtime, projected.placement_id());
    std::cout << "projected placement " << projected.placement_id() << "\n";

    // The non-throwing form: a Result holds the value or the error.
    const auto inventory = wm::Binding::try_from_inventory(read_file(dir + "/binding-inventory.json"));
    if (!inventory) {
      std::cerr << inventory.error().what() << "\n";
      return 1;
    }
    const wm::Runtime bound = wm::bind(projected, *inventory);
    std::cout << "bound runtime: generation " << bound.generation().value_or(0) << ", "
              << bound.json().size() << " bytes\n";

    const wm::Runtime again = wm::bind(projected, binding);
    if (wm::project_placement(again).canonical() != projected.canonical()) {
      std::cerr << "round trip changed the placement\n";
      return 1;
    }
    std::cout << "round trip ok\n";

    // A rejection carries the contract's code, message and JSON pointer.
    try {
      wm::Placement::parse(R"({"fragments":[],"model_id":"","placement_id":null,"revision":"r","tensors":[]})");
    } catch (const wm::Error& e) {
      std::cout << "rejected as expected: " << e.what() << "\n";
    }
  } catch (const wm::Error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
