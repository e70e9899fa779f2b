// Native driver for the core: reads a request (file argument or stdin) and prints the response JSON.
// Used for debugging, benchmarks against the wasm build, and the trainer's feature extraction.
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "prenet/api.hpp"

int main(int argc, char** argv) {
  std::string arg = argc > 1 ? argv[1] : "-";
  if (arg == "--catalog") {
    std::cout << prenet::catalog_json() << "\n";
    return 0;
  }
  const bool plan = arg == "--plan";
  if (plan) arg = argc > 2 ? argv[2] : "-";
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
  std::string response = plan ? prenet::plan_json(text) : prenet::predict_json(text);
  std::cout << response << "\n";
  return response.rfind("{\"error\"", 0) == 0 ? 1 : 0;
}
