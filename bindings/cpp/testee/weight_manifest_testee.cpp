// weight_manifest_testee: the C++ binding's conformance testee (tests/conformance/README.md).
//
// Reads one JSON request per line on standard input and writes one JSON response per line
// on standard output, in order, through the C++ wrapper (weight_manifest.hpp). It never
// exits on a bad request: that is answered as a rejection with the code "bad_request",
// which no fixture expects. An operation it does not know is answered {"skipped": true}.
// Exits 0 at end of input.

#include <iostream>
#include <string>

#include "respond.hpp"

int main() {
  std::ios::sync_with_stdio(false);
  std::string line;
  while (std::getline(std::cin, line)) {
    if (testee::blank(line)) {
      continue;
    }
    std::string response;
    try {
      response = testee::respond(line);
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
