// Keras layer classes → layer-list layers: the class table, and the converters of every class but the
// convolution and pooling ones (layers_spatial.cpp).
#include "model/keras/config.hpp"
#include "model/keras/converter.hpp"

namespace prenet::keras {

const char* supported_classes() {
  return "InputLayer, Dense, Conv1D, Conv2D, DepthwiseConv2D, SeparableConv2D, MaxPooling1D/2D, AveragePooling1D/2D, "
         "GlobalAveragePooling1D/2D, GlobalMaxPooling1D/2D, BatchNormalization, LayerNormalization, Embedding, "
         "PositionEmbedding, "
         "SimpleRNN, LSTM, GRU, Bidirectional, MultiHeadAttention, Dropout, SpatialDropout1D/2D, Flatten, Reshape, "
         "Activation, ReLU, LeakyReLU, ELU, Softmax, Add, Subtract, Average, Maximum, Minimum, Multiply, Concatenate";
}

const std::map<std::string, Converter::ClassRow>& Converter::class_table() {
  static const std::map<std::string, ClassRow> table = {
      {"Dense", {&Converter::dense, true}},
      {"Conv2D", {&Converter::conv2d, true}},
      {"DepthwiseConv2D", {&Converter::conv2d, true}},
      {"SeparableConv2D", {&Converter::conv2d, true}},
      {"Conv1D", {&Converter::conv1d, true}},
      {"MaxPooling2D", {&Converter::pool2d, true}},
      {"AveragePooling2D", {&Converter::pool2d, true}},
      {"MaxPooling1D", {&Converter::pool1d, true}},
      {"AveragePooling1D", {&Converter::pool1d, true}},
      {"GlobalAveragePooling2D", {&Converter::global_pool2d, true}},
      {"GlobalMaxPooling2D", {&Converter::global_pool2d, true}},
      {"GlobalAveragePooling1D", {&Converter::global_pool1d, true}},
      {"GlobalMaxPooling1D", {&Converter::global_pool1d, true}},
      {"BatchNormalization", {&Converter::batchnorm, true}},
      {"LayerNormalization", {&Converter::layernorm, true}},
      {"RMSNormalization", {&Converter::rmsnorm, true}},
      {"Embedding", {&Converter::embedding, true}},
      {"PositionEmbedding", {&Converter::position_embedding, true}},
      {"SimpleRNN", {&Converter::rnn, true}},
      {"LSTM", {&Converter::rnn, true}},
      {"GRU", {&Converter::rnn, true}},
      {"Bidirectional", {&Converter::bidirectional, true}},
      {"MultiHeadAttention", {&Converter::multi_head_attention, false}},
      {"GroupQueryAttention", {&Converter::group_query_attention, false}},
      {"Dropout", {&Converter::dropout, true}},
      {"SpatialDropout1D", {&Converter::dropout, true}},
      {"SpatialDropout2D", {&Converter::dropout, true}},
      {"GaussianDropout", {&Converter::dropout, true}},
      {"AlphaDropout", {&Converter::dropout, true}},
      {"Flatten", {&Converter::flatten, true}},
      {"Reshape", {&Converter::reshape, true}},
      {"Activation", {&Converter::activation, true}},
      {"ReLU", {&Converter::activation, true}},
      {"LeakyReLU", {&Converter::activation, true}},
      {"ELU", {&Converter::activation, true}},
      {"Softmax", {&Converter::activation, true}},
      {"Add", {&Converter::merge, false}},
      {"Subtract", {&Converter::merge, false}},
      {"Average", {&Converter::merge, false}},
      {"Maximum", {&Converter::merge, false}},
      {"Minimum", {&Converter::merge, false}},
      {"Multiply", {&Converter::merge, false}},
      {"Concatenate", {&Converter::concatenate, false}},
  };
  return table;
}

/// Dense: a dense layer; on an image it acts on channels, a 1x1 convolution in [C, H, W].
Tensor Converter::dense(const Call& c) {
  std::int64_t units = required_kint(c.cfg, "units", c.cpath);
  bool softmax = false;
  std::string act = activation_of(c.cfg, c.cpath, &softmax);
  bool bias = get_bool(c.cfg, "use_bias", c.cpath, true);
  Tensor out;
  if (c.in().image) {
    out = one({{"type", "conv2d"}, {"filters", units}, {"kernel_size", 1}, {"bias", bias}, {"activation", act}}, c.name,
              c.lpath, c.in(), true);
  } else {
    out =
        one({{"type", "dense"}, {"units", units}, {"bias", bias}, {"activation", act}}, c.name, c.lpath, c.in(), false);
  }
  return maybe_softmax(out, softmax, c.name, c.lpath);
}

/// BatchNormalization over the channels of an image or vector, or over the features of a sequence.
Tensor Converter::batchnorm(const Call& c) {
  const Tensor& in = c.in();
  const Shape& s = shape_of(in);
  if (in.image || s.size() == 1) return one({{"type", "batchnorm"}}, c.name, c.lpath, in, in.image);
  if (s.size() == 2) {  // normalises the last (feature) axis: costed on [F, S]
    Tensor t = one({{"type", "reshape"}, {"shape", {s[1], s[0]}}}, c.name + ".by_feature", c.lpath, in, false);
    Tensor n = one({{"type", "batchnorm"}}, c.name + ".norm", c.lpath, t, false);
    return one({{"type", "reshape"}, {"shape", {s[0], s[1]}}}, c.name, c.lpath, n, false);
  }
  throw InputError(c.lpath, "BatchNormalization on a tensor of shape " + to_string(s) + " is not supported");
}

/// LayerNormalization of a vector or sequence (center: its bias).
Tensor Converter::layernorm(const Call& c) {
  if (c.in().image) throw InputError(c.lpath, "LayerNormalization of an image tensor is not supported");
  return one({{"type", "layernorm"},
              {"bias", get_bool(c.cfg, "center", c.cpath, true)},
              {"scale", get_bool(c.cfg, "scale", c.cpath, true)}},
             c.name, c.lpath, c.in(), false);
}

/// RMSNormalization (Keras 3.9): an rmsnorm, its learned scale over the last axis.
Tensor Converter::rmsnorm(const Call& c) {
  if (c.in().image) throw InputError(c.lpath, "RMSNormalization of an image tensor is not supported");
  if (get_int(c.cfg, "axis", c.cpath, -1, -8, 8) != -1) {
    throw InputError(join(c.cpath, "axis"), "only the last axis (-1) is supported");
  }
  return one({{"type", "rmsnorm"}}, c.name, c.lpath, c.in(), false);
}

/// Embedding: a token table of input_dim rows of output_dim.
Tensor Converter::embedding(const Call& c) {
  // Both sizes are read before either is required, so a bad output_dim is reported before a missing input_dim.
  std::int64_t vocab = kint(c.cfg, "input_dim", c.cpath, 0), dim = kint(c.cfg, "output_dim", c.cpath, 0);
  if (vocab == 0) throw InputError(join(c.cpath, "input_dim"), "required integer is missing");
  if (dim == 0) throw InputError(join(c.cpath, "output_dim"), "required integer is missing");
  return one({{"type", "embedding"}, {"vocab_size", vocab}, {"dim", dim}}, c.name, c.lpath, c.in(), false);
}

/// KerasHub's (keras_nlp's) learned position table: sequence_length rows of the input's width, added by the
/// model to its input. It reads only the input's length, so it reads the network input when that has the
/// same positions (as the Hugging Face translation writes position tables), else the tensor it is given.
Tensor Converter::position_embedding(const Call& c) {
  require_sequence(c.in(), c.lpath, c.cls);
  std::int64_t rows = required_kint(c.cfg, "sequence_length", c.cpath);
  const Shape& s = shape_of(c.in());
  Tensor source = c.in();
  const Shape& net_in = shape_of(Tensor{"input", false});
  if (!net_in.empty() && net_in.size() <= 2 && net_in[0] == s[0]) source = Tensor{"input", false};
  return one({{"type", "embedding"}, {"vocab_size", rows}, {"dim", s[1]}, {"positional", true}}, c.name, c.lpath,
             source, false);
}

/// SimpleRNN, LSTM, GRU.
Tensor Converter::rnn(const Call& c) { return recurrent(c.cls, c.cfg, c.cpath, c, false); }

/// Bidirectional(SimpleRNN | LSTM | GRU) with merge_mode concat.
Tensor Converter::bidirectional(const Call& c) {
  std::string merge_mode = get_string(c.cfg, "merge_mode", c.cpath, "concat");
  if (merge_mode != "concat") throw InputError(join(c.cpath, "merge_mode"), "only \"concat\" is supported");
  std::string inner_path = join(c.cpath, "layer");
  if (!c.cfg.contains("layer")) throw InputError(inner_path, "required object is missing");
  const Json& inner = require_object(c.cfg["layer"], inner_path);
  std::string inner_cls = require_string(inner, "class_name", inner_path);
  if (inner_cls != "SimpleRNN" && inner_cls != "LSTM" && inner_cls != "GRU") {
    throw InputError(join(inner_path, "class_name"),
                     "Bidirectional wraps SimpleRNN, LSTM or GRU, got \"" + printable(inner_cls) + "\"");
  }
  if (!inner.contains("config")) throw InputError(join(inner_path, "config"), "required object is missing");
  const Json& inner_cfg = require_object(inner["config"], join(inner_path, "config"));
  return recurrent(inner_cls, inner_cfg, join(inner_path, "config"), c, true);
}

/// A recurrent layer of class `cls` configured by `cfg` (at `cpath`); activations other than tanh are
/// costed as tanh, with a warning.
Tensor Converter::recurrent(const std::string& cls, const Json& cfg, const std::string& cpath, const Call& c,
                            bool is_bidirectional) {
  require_sequence(c.in(), c.lpath, cls);
  std::int64_t units = required_kint(cfg, "units", cpath);
  if (units > (1 << 20)) throw InputError(join(cpath, "units"), "expected at most 2^20 units");
  if (cls != "SimpleRNN") {
    bool softmax = false;
    std::string act = activation_of(cfg, cpath, &softmax);
    if (act != "tanh" && !(cfg.contains("activation") && cfg["activation"].is_null())) {
      warnings_.push_back("layer \"" + printable(c.name) + "\": activation \"" + act + "\" costed as tanh");
    }
  }
  const char* type = cls == "LSTM" ? "lstm" : cls == "GRU" ? "gru" : "rnn";
  return one({{"type", type},
              {"hidden_size", units},
              {"bidirectional", is_bidirectional},
              {"return_sequences", get_bool(cfg, "return_sequences", cpath, false)},
              {"bias", get_bool(cfg, "use_bias", cpath, true)}},
             c.name, c.lpath, c.in(), false);
}

/// MultiHeadAttention(query, value[, key = value]) with value_dim = key_dim and the default axes.
Tensor Converter::multi_head_attention(const Call& c) {
  const Json& cfg = c.cfg;
  const std::string& cpath = c.cpath;
  if (c.inputs.size() > 3)
    throw InputError(join(c.lpath, "inbound_nodes"), "MultiHeadAttention takes query, value, key");
  std::int64_t heads = required_kint(cfg, "num_heads", cpath);
  std::int64_t key_dim = required_kint(cfg, "key_dim", cpath);
  if (cfg.contains("value_dim") && !cfg["value_dim"].is_null() && kint(cfg, "value_dim", cpath, key_dim) != key_dim) {
    throw InputError(join(cpath, "value_dim"), "must equal key_dim");
  }
  if (cfg.contains("output_shape") && !cfg["output_shape"].is_null()) {
    throw InputError(join(cpath, "output_shape"), "a custom output_shape is not supported");
  }
  if (cfg.contains("attention_axes") && !cfg["attention_axes"].is_null()) {
    throw InputError(join(cpath, "attention_axes"), "only the default attention axes are supported");
  }
  require_sequence(c.in(), c.lpath, c.cls);
  Json spec = {{"type", "attention"},
               {"num_heads", heads},
               {"head_dim", key_dim},
               {"bias", get_bool(cfg, "use_bias", cpath, true)}};
  return attention_of(spec, c);
}

/// GroupQueryAttention (Keras 3): an attention layer of num_query_heads over num_key_value_heads, head_dim wide;
/// its use_bias biases q, k, v and the output projection as MultiHeadAttention's does.
Tensor Converter::group_query_attention(const Call& c) {
  const Json& cfg = c.cfg;
  if (c.inputs.size() > 3)
    throw InputError(join(c.lpath, "inbound_nodes"), "GroupQueryAttention takes query, value, key");
  std::int64_t heads = required_kint(cfg, "num_query_heads", c.cpath);
  std::int64_t kv_heads = required_kint(cfg, "num_key_value_heads", c.cpath);
  if (heads % kv_heads != 0) throw InputError(join(c.cpath, "num_key_value_heads"), "must divide num_query_heads");
  if (get_bool(cfg, "use_gate", c.cpath, false)) {
    throw InputError(join(c.cpath, "use_gate"), "the gated output is not supported");
  }
  if (cfg.contains("sliding_window") && !cfg["sliding_window"].is_null()) {
    throw InputError(join(c.cpath, "sliding_window"), "sliding-window attention is not supported");
  }
  require_sequence(c.in(), c.lpath, c.cls);
  return attention_of({{"type", "attention"},
                       {"num_heads", heads},
                       {"num_kv_heads", kv_heads},
                       {"head_dim", required_kint(cfg, "head_dim", c.cpath)},
                       {"bias", get_bool(cfg, "use_bias", c.cpath, true)}},
                      c);
}

/// The attention layer `spec` of a Keras attention call: its dropout, and a value tensor other than the query
/// making it cross-attention (a key other than the value is refused).
Tensor Converter::attention_of(Json spec, const Call& c) {
  double rate = get_number(c.cfg, "dropout", c.cpath, 0.0, 0.0, 0.999999);
  if (rate > 0) spec["dropout"] = rate;
  const std::vector<Tensor>& inputs = c.inputs;
  std::vector<Tensor> used = {c.in()};
  if (inputs.size() > 1 && inputs[1].name != c.in().name) used.push_back(inputs[1]);
  if (inputs.size() > 2 && inputs[2].name != inputs[1].name) {
    throw InputError(join(c.lpath, "inbound_nodes"), "a key different from the value is not supported");
  }
  return emit(spec, c.name, c.lpath, used, false);
}

/// Dropout and its variants: a dropout layer of the rate.
Tensor Converter::dropout(const Call& c) {
  return one({{"type", "dropout"}, {"rate", get_number(c.cfg, "rate", c.cpath, 0.5, 0.0, 0.999999)}}, c.name, c.lpath,
             c.in(), c.in().image);
}

/// Flatten: a flatten layer.
Tensor Converter::flatten(const Call& c) { return one({{"type", "flatten"}}, c.name, c.lpath, c.in(), false); }

/// Reshape to target_shape (a rank-3 target is an image, [H, W, C] read as [C, H, W]).
Tensor Converter::reshape(const Call& c) {
  if (!c.cfg.contains("target_shape")) throw InputError(join(c.cpath, "target_shape"), "required array is missing");
  const Json& target = require_array(c.cfg["target_shape"], join(c.cpath, "target_shape"));
  Json shape = target;
  bool image = target.size() == 3;
  if (image) shape = Json::array({target[2], target[0], target[1]});  // [H, W, C] → [C, H, W]
  return one({{"type", "reshape"}, {"shape", shape}}, c.name, join(c.cpath, "target_shape"), c.in(), image);
}

/// Activation, ReLU (relu6 when max_value is 6), LeakyReLU, ELU and Softmax layers.
Tensor Converter::activation(const Call& c) {
  const Json& cfg = c.cfg;
  bool softmax = false;
  std::string fn;
  if (c.cls == "Activation") {
    fn = activation_of(cfg, c.cpath, &softmax);
  } else if (c.cls == "Softmax") {
    softmax = true;
  } else if (c.cls == "ReLU") {
    bool six = cfg.contains("max_value") && !cfg["max_value"].is_null() && cfg["max_value"].is_number() &&
               cfg["max_value"].get<double>() == 6.0;
    fn = six ? "relu6" : "relu";
  } else {
    fn = c.cls == "ELU" ? "elu" : "leaky_relu";
  }
  if (softmax) return one({{"type", "softmax"}}, c.name, c.lpath, c.in(), c.in().image);
  return one({{"type", "activation"}, {"function", fn == "none" ? "linear" : fn}}, c.name, c.lpath, c.in(),
             c.in().image);
}

/// Add, Subtract, Average, Maximum, Minimum (costed as add) and Multiply of two or more tensors.
Tensor Converter::merge(const Call& c) {
  if (c.inputs.size() < 2) throw InputError(join(c.lpath, "inbound_nodes"), c.cls + " needs at least two inputs");
  return emit({{"type", c.cls == "Multiply" ? "multiply" : "add"}}, c.name, c.lpath, c.inputs, c.in().image);
}

/// Concatenate along a per-sample Keras axis (an image's channels-last axis mapped to [C, H, W]).
Tensor Converter::concatenate(const Call& c) {
  if (c.inputs.size() < 2) throw InputError(join(c.lpath, "inbound_nodes"), "Concatenate needs at least two inputs");
  std::int64_t axis = get_int(c.cfg, "axis", c.cpath, -1, -8, 8);
  auto rank = static_cast<std::int64_t>(shape_of(c.in()).size());
  if (axis == 0) throw InputError(join(c.cpath, "axis"), "cannot concatenate along the batch axis");
  std::int64_t keras_axis = axis < 0 ? axis + rank : axis - 1;  // per-sample Keras axis
  if (keras_axis < 0 || keras_axis >= rank) throw InputError(join(c.cpath, "axis"), "out of range");
  std::int64_t ours = keras_axis;
  if (c.in().image && rank == 3) ours = keras_axis == 2 ? 0 : keras_axis + 1;  // [H, W, C] → [C, H, W]
  return emit({{"type", "concat"}, {"axis", ours}}, c.name, c.lpath, c.inputs, c.in().image);
}

}  // namespace prenet::keras
