// Native driver for the core: reads a request (file argument or stdin) and prints the response JSON.
// Used for debugging, benchmarks against the wasm build, and the trainer's feature extraction.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "prenet/api.hpp"

namespace {

const char* const kUsage =
    "usage: prenet_native [--repeat N] [--plan] [FILE|-]\n"
    "       prenet_native --catalog | --help\n"
    "Reads a request (FILE, or stdin for - or no argument) and prints the core's response JSON.\n"
    "  --plan       plan mode (plan_json) instead of predict_json\n"
    "  --repeat N   run the request N times in this process (1..1000000) and print the last response;\n"
    "               for profiling the core without process start-up (e.g. perf record -g)\n"
    "  --catalog    print the hardware catalogue, presets and version\n";

}  // namespace

int main(int argc, char** argv) {
  bool plan = false;
  long repeat = 1;
  std::string arg = "-";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    }
    if (a == "--catalog") {
      std::cout << prenet::catalog_json() << "\n";
      return 0;
    }
    if (a == "--plan") {
      plan = true;
    } else if (a == "--repeat") {
      char* end = nullptr;
      repeat = i + 1 < argc ? std::strtol(argv[++i], &end, 10) : 0;
      if (!end || *end != '\0' || repeat < 1 || repeat > 1000000) {
        std::cerr << "prenet-native: --repeat expects an integer in [1, 1000000]\n" << kUsage;
        return 2;
      }
    } else {
      arg = a;
    }
  }
  std::string text;
  if (arg == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream in(arg, std::ios::binary);
    if (!in) {
      std::cerr << "prenet-native: cannot read " << arg << "\n";
      return 2;
    }
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::string response;
  for (long r = 0; r < repeat; ++r) response = plan ? prenet::plan_json(text) : prenet::predict_json(text);
  std::cout << response << "\n";
  return response.rfind("{\"error\"", 0) == 0 ? 1 : 0;
}
