// The network input: the graph's first input that is not an initializer; further inputs are constants.
#include "model/onnx/translator.hpp"

namespace prenet::onnx {

/// The first real graph input (its index in `input_index`); the others become constants of known shape.
const ValueInfo* Translator::first_input(std::size_t* input_index) {
  const ValueInfo* input = nullptr;
  for (std::size_t i = 0; i < g_.inputs.size(); ++i) {
    const ValueInfo& v = g_.inputs[i];
    if (values_.count(v.name)) continue;  // an initializer listed as an input (IR < 4)
    if (!input) {
      input = &v;
      *input_index = i;
      continue;
    }
    Value side;  // further inputs (attention masks, ...) are constants of known shape
    side.kind = Value::Constant;
    side.shape = v.dims;
    values_[v.name] = side;
    notes_.push_back("graph input \"" + printable(v.name) +
                     "\" is treated as a constant; only the first input is modelled");
  }
  if (!input) throw InputError(join(path_, "graph.input"), "the graph has no input");
  return input;
}

/// The layer list's input for the ONNX input [batch, ...]: tokens, vector, sequence or square image; symbolic
/// dimensions are filled from the overrides. Errors name `field`.
InputSpec Translator::input_spec(const ValueInfo& input, const std::string& field) const {
  if (!input.has_shape || input.dims.size() < 2) {
    throw InputError(field, "the input \"" + printable(input.name) + "\" needs a shape [batch, ...] of rank 2 to 4");
  }
  std::vector<std::int64_t> d(input.dims.begin() + 1, input.dims.end());
  auto fill = [&](std::int64_t v, const std::optional<std::int64_t>& over, const char* what) {
    if (over) return *over;
    if (v < 0) throw InputError(field, std::string("has a symbolic dimension; give training.") + what);
    return v;
  };
  InputSpec spec;
  bool integer = input.elem_type == 6 || input.elem_type == 7;
  if (d.size() == 1 && integer) {
    spec.kind = InputKind::Tokens;
    spec.seq_len = fill(d[0], overrides_.seq_len, "seq_len");
  } else if (d.size() == 1) {
    spec.kind = InputKind::Vector;
    spec.features = fill(d[0], std::nullopt, "features");
  } else if (d.size() == 2) {
    spec.kind = InputKind::Sequence;
    spec.seq_len = fill(d[0], overrides_.seq_len, "seq_len");
    spec.features = fill(d[1], std::nullopt, "features");
  } else if (d.size() == 3) {
    spec.kind = InputKind::Image;
    spec.channels = fill(d[0], std::nullopt, "channels");
    std::int64_t h = fill(d[1], overrides_.image_size, "image_size");
    std::int64_t w = fill(d[2], overrides_.image_size, "image_size");
    if (h != w) {
      throw InputError(field, "non-square images (" + std::to_string(h) + " x " + std::to_string(w) +
                                  ") are not supported; the layer list takes a square image_size");
    }
    spec.image_size = h;
  } else {
    throw InputError(field, "inputs of rank " + std::to_string(input.dims.size()) + " are not supported");
  }
  if (spec.seq_len > (1 << 20) || spec.image_size > 16384 || spec.channels > (1 << 20)) {
    throw InputError(field, "input dimensions beyond the limits (sequence 2^20, image side 16384)");
  }
  return spec;
}

/// Starts the builder with the network input and binds the input tensor to it.
void Translator::setup_input() {
  std::size_t input_index = 0;
  const ValueInfo* input = first_input(&input_index);
  Network net;
  net.name = "onnx-model";
  net.input = input_spec(*input, index(join(path_, "graph.input"), input_index));
  builder_.emplace(std::move(net));
  Value v;
  v.kind = Value::Activation;
  v.layer = "input";
  v.shape = builder_->shape(kNetworkInput);
  values_[input->name] = v;
  input_name_ = input->name;
}

}  // namespace prenet::onnx
