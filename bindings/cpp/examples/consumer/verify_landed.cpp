// verify_landed: the receiving side of a weight update checks the bytes that landed in its
// own memory against the content manifest the sender wrote (contract §19), without Python.
//
//   verify_landed MANIFEST LANDING LANDED_BYTES
//
// MANIFEST is a content manifest with fragments; LANDING lists, one per line, a
// placement_fragment_id and the byte offset where that fragment's row-major bytes start in
// LANDED_BYTES, a file that stands in for the receive buffer a transfer engine wrote into.
// The program reads the file into its own buffer, computes each fragment's partial over
// that memory (its tensor and box are the manifest's) and compares it with the recorded
// one. Exit 0 when every fragment agrees, 1 when one does not (naming it), 2 on bad input.
// examples/content-landing holds a TP2 layer's manifest and what rank 1 received, once
// intact and once with one bit flipped (`make test` runs both).

#include <cstdint>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

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
  if (argc != 4) {
    std::cerr << "usage: " << argv[0] << " MANIFEST LANDING LANDED_BYTES\n";
    return 2;
  }
  try {
    const wm::ContentManifest manifest = wm::ContentManifest::parse(read_file(argv[1]));
    if (auto inconsistent = manifest.verify()) {
      std::cerr << "the manifest itself is inconsistent: " << inconsistent->what() << "\n";
      return 2;
    }
    // The receive buffer: this program's own memory, as a transfer engine would fill it.
    const std::string file = read_file(argv[3]);
    const std::vector<std::uint8_t> buffer(file.begin(), file.end());

    std::istringstream landing(read_file(argv[2]));
    std::vector<std::pair<std::string, std::size_t>> landed;
    std::string id;
    std::size_t offset = 0;
    while (landing >> id >> offset) {
      if (offset > buffer.size()) {
        std::cerr << id << ": offset " << offset << " is past the " << buffer.size()
                  << " bytes received\n";
        return 2;
      }
      landed.emplace_back(id, offset);
    }
    int failures = 0;
    for (std::size_t i = 0; i < landed.size(); ++i) {
      // A fragment's bytes run to the next fragment's offset (or the end of the buffer).
      const std::size_t start = landed[i].second;
      const std::size_t end = i + 1 < landed.size() ? landed[i + 1].second : buffer.size();
      if (end < start) {
        std::cerr << landed[i].first << ": the landing offsets are not ascending\n";
        return 2;
      }
      const wm::ContentBytes bytes{buffer.data() + start, end - start, {}};
      if (auto error = manifest.check_bytes(landed[i].first, bytes)) {
        std::cout << "MISMATCH " << landed[i].first << ": " << error->what() << "\n";
        ++failures;
      } else {
        std::cout << "ok " << landed[i].first << " (" << end - start << " bytes)\n";
      }
    }
    std::cout << landed.size() - static_cast<std::size_t>(failures) << " of " << landed.size()
              << " fragments agree with the manifest\n";
    return failures == 0 ? 0 : 1;
  } catch (const wm::Error& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}
