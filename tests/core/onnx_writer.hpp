#pragma once
// A tiny ONNX (protobuf wire format) writer for tests and fuzz seeds: enough of ModelProto to build small
// graphs by hand, with weights given as dims only (raw_data of zeros, or none). No protobuf library.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace onnxw {

/// One protobuf message under construction.
struct Msg {
  std::string bytes;

  static void varint(std::string& out, std::uint64_t v) {
    while (v >= 0x80) {
      out.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out.push_back(static_cast<char>(v));
  }
  Msg& tag(int number, int wire) {
    varint(bytes, static_cast<std::uint64_t>(number) << 3 | static_cast<std::uint64_t>(wire));
    return *this;
  }
  Msg& i(int number, std::int64_t v) {
    tag(number, 0);
    varint(bytes, static_cast<std::uint64_t>(v));
    return *this;
  }
  Msg& s(int number, const std::string& v) {
    tag(number, 2);
    varint(bytes, v.size());
    bytes += v;
    return *this;
  }
  Msg& m(int number, const Msg& v) { return s(number, v.bytes); }
  Msg& f(int number, float v) {
    tag(number, 5);
    std::uint32_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    for (int k = 0; k < 4; ++k) bytes.push_back(static_cast<char>((bits >> (8 * k)) & 0xff));
    return *this;
  }
  Msg& packed(int number, const std::vector<std::int64_t>& values) {
    std::string body;
    for (auto v : values) varint(body, static_cast<std::uint64_t>(v));
    return s(number, body);
  }
};

enum DataType { kFloat = 1, kInt32 = 6, kInt64 = 7 };

/// An initializer with the given dims; `with_bytes` writes zero-filled raw_data of the right size (float32).
inline Msg tensor(const std::string& name, const std::vector<std::int64_t>& dims, int type = kFloat,
                  bool with_bytes = true) {
  Msg t;
  t.packed(1, dims).i(2, type).s(8, name);
  if (with_bytes) {
    std::int64_t n = 1;
    for (auto d : dims) n *= d;
    t.s(9, std::string(static_cast<std::size_t>(n) * (type == kInt64 ? 8 : 4), '\0'));
  }
  return t;
}

/// An INT64 initializer holding `values` (shapes, axes).
inline Msg int64s(const std::string& name, const std::vector<std::int64_t>& values) {
  Msg t;
  t.packed(1, {static_cast<std::int64_t>(values.size())}).i(2, kInt64).s(8, name);
  std::string raw;
  for (auto v : values) {
    for (int k = 0; k < 8; ++k) raw.push_back(static_cast<char>((static_cast<std::uint64_t>(v) >> (8 * k)) & 0xff));
  }
  t.s(9, raw);
  return t;
}

/// A graph input or output: dims < 0 are symbolic ("N").
inline Msg value_info(const std::string& name, const std::vector<std::int64_t>& dims, int elem_type = kFloat) {
  Msg shape;
  for (auto d : dims) {
    Msg dim;
    if (d < 0) {
      dim.s(2, "N");
    } else {
      dim.i(1, d);
    }
    shape.m(1, dim);
  }
  Msg tensor_type;
  tensor_type.i(1, elem_type).m(2, shape);
  Msg type;
  type.m(1, tensor_type);
  Msg v;
  v.s(1, name).m(2, type);
  return v;
}

inline Msg attr_i(const std::string& name, std::int64_t v) {
  Msg a;
  a.s(1, name).i(3, v).i(20, 2);
  return a;
}
inline Msg attr_f(const std::string& name, float v) {
  Msg a;
  a.s(1, name).f(2, v).i(20, 1);
  return a;
}
inline Msg attr_ints(const std::string& name, const std::vector<std::int64_t>& v) {
  Msg a;
  a.s(1, name).packed(8, v).i(20, 7);
  return a;
}
inline Msg attr_s(const std::string& name, const std::string& v) {
  Msg a;
  a.s(1, name).s(4, v).i(20, 3);
  return a;
}

inline Msg node(const std::string& op, const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
                const std::string& name = "", const std::vector<Msg>& attrs = {}) {
  Msg n;
  for (const auto& in : inputs) n.s(1, in);
  for (const auto& out : outputs) n.s(2, out);
  if (!name.empty()) n.s(3, name);
  n.s(4, op);
  for (const auto& a : attrs) n.m(5, a);
  return n;
}

/// A ModelProto (IR 8, opset 17) around one graph.
struct Graph {
  std::vector<Msg> nodes, initializers, inputs, outputs;

  std::string model() const {
    Msg g;
    for (const auto& n : nodes) g.m(1, n);
    g.s(2, "test-graph");
    for (const auto& t : initializers) g.m(5, t);
    for (const auto& v : inputs) g.m(11, v);
    for (const auto& v : outputs) g.m(12, v);
    Msg opset;
    opset.s(1, "").i(2, 17);
    Msg m;
    m.i(1, 8).s(2, "prenet-tests").m(7, g).m(8, opset);
    return m.bytes;
  }
};

inline std::string base64(const std::string& bytes) {
  static const char* chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    auto a = static_cast<std::uint8_t>(bytes[i]), b = static_cast<std::uint8_t>(bytes[i + 1]),
         c = static_cast<std::uint8_t>(bytes[i + 2]);
    out += chars[a >> 2];
    out += chars[((a & 3) << 4) | (b >> 4)];
    out += chars[((b & 15) << 2) | (c >> 6)];
    out += chars[c & 63];
  }
  if (i < bytes.size()) {
    auto a = static_cast<std::uint8_t>(bytes[i]);
    auto b = i + 1 < bytes.size() ? static_cast<std::uint8_t>(bytes[i + 1]) : std::uint8_t{0};
    out += chars[a >> 2];
    out += chars[((a & 3) << 4) | (b >> 4)];
    out += i + 1 < bytes.size() ? chars[(b & 15) << 2] : '=';
    out += '=';
  }
  return out;
}

/// LeNet-5 as PyTorch exports it: Conv, Tanh, AveragePool, Flatten, Gemm (the preset `lenet5`).
inline std::string lenet5(bool with_weights = true) {
  Graph g;
  g.inputs.push_back(value_info("image", {-1, 1, 32, 32}));
  g.outputs.push_back(value_info("logits", {-1, 10}));
  g.initializers = {
      tensor("c1.weight", {6, 1, 5, 5}, kFloat, with_weights),  tensor("c1.bias", {6}, kFloat, with_weights),
      tensor("c3.weight", {16, 6, 5, 5}, kFloat, with_weights), tensor("c3.bias", {16}, kFloat, with_weights),
      tensor("c5.weight", {120, 400}, kFloat, with_weights),    tensor("c5.bias", {120}, kFloat, with_weights),
      tensor("f6.weight", {84, 120}, kFloat, with_weights),     tensor("f6.bias", {84}, kFloat, with_weights),
      tensor("output.weight", {10, 84}, kFloat, with_weights),  tensor("output.bias", {10}, kFloat, with_weights)};
  std::vector<Msg> pool = {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})};
  g.nodes = {
      node("Conv", {"image", "c1.weight", "c1.bias"}, {"c1.out"}, "c1",
           {attr_ints("kernel_shape", {5, 5}), attr_ints("pads", {0, 0, 0, 0}), attr_ints("strides", {1, 1})}),
      node("Tanh", {"c1.out"}, {"c1.act"}, "c1_tanh"),
      node("AveragePool", {"c1.act"}, {"s2.out"}, "s2", pool),
      node("Conv", {"s2.out", "c3.weight", "c3.bias"}, {"c3.out"}, "c3", {attr_ints("kernel_shape", {5, 5})}),
      node("Tanh", {"c3.out"}, {"c3.act"}, "c3_tanh"),
      node("AveragePool", {"c3.act"}, {"s4.out"}, "s4", pool),
      node("Flatten", {"s4.out"}, {"flat"}, "flatten", {attr_i("axis", 1)}),
      node("Gemm", {"flat", "c5.weight", "c5.bias"}, {"c5.out"}, "c5", {attr_i("transB", 1)}),
      node("Tanh", {"c5.out"}, {"c5.act"}, "c5_tanh"),
      node("Gemm", {"c5.act", "f6.weight", "f6.bias"}, {"f6.out"}, "f6", {attr_i("transB", 1)}),
      node("Tanh", {"f6.out"}, {"f6.act"}, "f6_tanh"),
      node("Gemm", {"f6.act", "output.weight", "output.bias"}, {"logits"}, "output", {attr_i("transB", 1)}),
  };
  return g.model();
}

/// A small CNN exercising conv (strided, padded, depthwise with SAME_UPPER), batch norm, pooling,
/// concat and global pooling; no weight bytes. Shared by the format tests and the fuzz seed corpus.
inline std::string small_cnn_model() {
  Graph c;
  c.inputs.push_back(value_info("img", {1, 3, 16, 16}));
  c.initializers = {tensor("w", {8, 3, 3, 3}), tensor("dw", {8, 1, 3, 3}), tensor("g", {8}),
                    tensor("b", {8}),          tensor("m", {8}),           tensor("v", {8})};
  c.nodes = {node("Conv", {"img", "w"}, {"c"}, "conv",
                  {attr_ints("kernel_shape", {3, 3}), attr_ints("pads", {1, 1, 1, 1}), attr_ints("strides", {2, 2})}),
             node("BatchNormalization", {"c", "g", "b", "m", "v"}, {"bn"}, "bn"),
             node("Relu", {"bn"}, {"r"}, "relu"),
             node("Conv", {"r", "dw"}, {"d"}, "depthwise", {attr_i("group", 8), attr_s("auto_pad", "SAME_UPPER")}),
             node("MaxPool", {"d"}, {"p"}, "pool", {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})}),
             node("Concat", {"p", "p"}, {"cat"}, "cat", {attr_i("axis", 1)}),
             node("GlobalAveragePool", {"cat"}, {"gap"}, "gap"),
             node("Flatten", {"gap"}, {"f"}, "flatten")};
  return c.model();
}

/// Sizes of the tiny GPT-2-style decoder below.
struct TinyGpt {
  std::int64_t vocab = 96, positions = 32, seq = 16, width = 32, heads = 4, layers = 2;
  bool fused_qkv = true;     // one c_attn MatMul and a Split (GPT-2's export) or three projections
  bool key_bias = true;      // false: K without a bias (Whisper), which the attention layer cannot express
  bool rotary_like = false;  // an extra elementwise op on q between projection and scores
};

/// A pre-LayerNorm GPT-2-style decoder as torch.onnx.export writes one: token and position Gathers,
/// LayerNormalization, attention as projections, Reshape/Transpose to heads, MatMul, Div by sqrt(d), an
/// additive causal mask, Softmax, MatMul, Transpose/Reshape back, output projection; GELU MLP; untied head.
/// Node names follow the Hugging Face translation's layer names. No weight bytes (dims only).
inline std::string tiny_gpt(const TinyGpt& c = {}) {
  const std::int64_t D = c.width, H = c.heads, hd = c.width / c.heads, S = c.seq;
  Graph g;
  g.inputs.push_back(value_info("input_ids", {-1, S}, kInt64));
  g.outputs.push_back(value_info("logits", {-1, S, c.vocab}));
  std::vector<std::int64_t> positions;
  for (std::int64_t i = 0; i < S; ++i) positions.push_back(i);
  g.initializers = {tensor("wte.weight", {c.vocab, D}, kFloat, false),
                    tensor("wpe.weight", {c.positions, D}, kFloat, false),
                    int64s("position_ids", positions),
                    int64s("heads_shape", {0, 0, H, hd}),
                    int64s("merge_shape", {0, 0, D}),
                    int64s("qkv_split", {D, D, D}),
                    tensor("scale", {}, kFloat),
                    tensor("causal_mask", {1, 1, S, S}, kFloat, false),
                    tensor("lm_head.weight", {D, c.vocab}, kFloat, false),
                    tensor("ln_f.weight", {D}, kFloat, false),
                    tensor("ln_f.bias", {D}, kFloat, false)};
  g.nodes = {node("Gather", {"wte.weight", "input_ids"}, {"tok"}, "wte"),
             node("Gather", {"wpe.weight", "position_ids"}, {"pos"}, "wpe"),
             node("Add", {"tok", "pos"}, {"x0"}, "embed")};
  std::string x = "x0";
  auto w = [&](const std::string& name, std::vector<std::int64_t> dims) {
    g.initializers.push_back(tensor(name, dims, kFloat, false));
    return name;
  };
  for (std::int64_t l = 0; l < c.layers; ++l) {
    const std::string p = "h." + std::to_string(l) + ".";
    auto t = [&](const std::string& s) { return p + s; };
    g.nodes.push_back(node("LayerNormalization", {x, w(t("ln_1.weight"), {D}), w(t("ln_1.bias"), {D})}, {t("a")},
                           t("ln_1"), {attr_i("axis", -1)}));
    std::string q = t("q"), k = t("k"), v = t("v");
    if (c.fused_qkv) {
      g.nodes.push_back(node("MatMul", {t("a"), w(t("c_attn.weight"), {D, 3 * D})}, {t("qkv0")}, t("c_attn")));
      g.nodes.push_back(node("Add", {t("qkv0"), w(t("c_attn.bias"), {3 * D})}, {t("qkv")}, t("c_attn_bias")));
      g.nodes.push_back(node("Split", {t("qkv"), "qkv_split"}, {q, k, v}, t("split"), {attr_i("axis", 2)}));
    } else {
      for (const char* n : {"q", "k", "v"}) {
        std::string proj = t(std::string(n) + "_proj");
        g.nodes.push_back(node("MatMul", {t("a"), w(proj + ".weight", {D, D})}, {proj + ".out"}, proj));
        if (std::string(n) == "k" && !c.key_bias) {
          g.nodes.push_back(node("Identity", {proj + ".out"}, {t(n)}, proj + "_id"));
          continue;
        }
        g.nodes.push_back(node("Add", {proj + ".out", w(proj + ".bias", {D})}, {t(n)}, proj + "_bias"));
      }
    }
    if (c.rotary_like) {
      g.nodes.push_back(node("Sin", {q}, {t("q_rot")}, t("rotary")));
      q = t("q_rot");
    }
    g.nodes.push_back(node("Reshape", {q, "heads_shape"}, {t("q4")}, t("q_heads")));
    g.nodes.push_back(node("Transpose", {t("q4")}, {t("qh")}, t("q_t"), {attr_ints("perm", {0, 2, 1, 3})}));
    g.nodes.push_back(node("Reshape", {k, "heads_shape"}, {t("k4")}, t("k_heads")));
    g.nodes.push_back(node("Transpose", {t("k4")}, {t("kt")}, t("k_t"), {attr_ints("perm", {0, 2, 3, 1})}));
    g.nodes.push_back(node("Reshape", {v, "heads_shape"}, {t("v4")}, t("v_heads")));
    g.nodes.push_back(node("Transpose", {t("v4")}, {t("vh")}, t("v_t"), {attr_ints("perm", {0, 2, 1, 3})}));
    g.nodes.push_back(node("MatMul", {t("qh"), t("kt")}, {t("scores")}, t("qk")));
    g.nodes.push_back(node("Div", {t("scores"), "scale"}, {t("scaled")}, t("scale")));
    g.nodes.push_back(node("Add", {t("scaled"), "causal_mask"}, {t("masked")}, t("mask")));
    g.nodes.push_back(node("Softmax", {t("masked")}, {t("probs")}, t("softmax"), {attr_i("axis", -1)}));
    g.nodes.push_back(node("MatMul", {t("probs"), t("vh")}, {t("ctx")}, t("pv")));
    g.nodes.push_back(node("Transpose", {t("ctx")}, {t("ctx_t")}, t("ctx_t"), {attr_ints("perm", {0, 2, 1, 3})}));
    g.nodes.push_back(node("Reshape", {t("ctx_t"), "merge_shape"}, {t("merged")}, t("merge")));
    g.nodes.push_back(node("MatMul", {t("merged"), w(t("c_proj.weight"), {D, D})}, {t("o")}, t("c_proj")));
    g.nodes.push_back(node("Add", {t("o"), w(t("c_proj.bias"), {D})}, {t("attn_out")}, t("attn")));
    g.nodes.push_back(node("Add", {x, t("attn_out")}, {t("r")}, t("attn_residual")));
    g.nodes.push_back(node("LayerNormalization", {t("r"), w(t("ln_2.weight"), {D}), w(t("ln_2.bias"), {D})}, {t("b")},
                           t("ln_2"), {attr_i("axis", -1)}));
    g.nodes.push_back(node("MatMul", {t("b"), w(t("mlp_up.weight"), {D, 4 * D})}, {t("u0")}, t("mlp_up")));
    g.nodes.push_back(node("Add", {t("u0"), w(t("mlp_up.bias"), {4 * D})}, {t("u1")}, t("mlp_up_bias")));
    g.nodes.push_back(node("Gelu", {t("u1")}, {t("u")}, t("gelu")));
    g.nodes.push_back(node("MatMul", {t("u"), w(t("mlp_down.weight"), {4 * D, D})}, {t("m0")}, t("mlp_down")));
    g.nodes.push_back(node("Add", {t("m0"), w(t("mlp_down.bias"), {D})}, {t("m")}, t("mlp_down_bias")));
    g.nodes.push_back(node("Add", {t("r"), t("m")}, {t("out")}, t("stream")));
    x = t("out");
  }
  g.nodes.push_back(node("LayerNormalization", {x, "ln_f.weight", "ln_f.bias"}, {"xf"}, "ln_f", {attr_i("axis", -1)}));
  g.nodes.push_back(node("MatMul", {"xf", "lm_head.weight"}, {"logits"}, "lm_head"));
  return g.model();
}

}  // namespace onnxw
