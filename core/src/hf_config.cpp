#include "prenet/hf_config.hpp"

#include <algorithm>

namespace prenet {
namespace {

constexpr std::int64_t kMaxWidth = std::int64_t{1} << 20;
constexpr std::int64_t kMaxDepth = 10000;

/// The first present key among `keys` as an integer in [min, max]; `fallback` (or an error if < 0) otherwise.
std::int64_t first_int(const Json& cfg, const std::vector<std::string>& keys, const std::string& path,
                       std::int64_t fallback, std::int64_t min, std::int64_t max) {
  for (const auto& key : keys) {
    if (cfg.contains(key) && !cfg[key].is_null()) return get_int(cfg, key, path, fallback, min, max);
  }
  if (fallback < 0) {
    std::string names;
    for (const auto& key : keys) names += (names.empty() ? "" : " or ") + key;
    throw InputError(join(path, keys.front()), "required field is missing (" + names + ")");
  }
  return fallback;
}

double first_rate(const Json& cfg, const std::vector<std::string>& keys, const std::string& path, double fallback) {
  for (const auto& key : keys) {
    if (cfg.contains(key) && !cfg[key].is_null()) return get_number(cfg, key, path, fallback, 0.0, 0.999999);
  }
  return fallback;
}

std::string activation_of(const Json& cfg, const std::vector<std::string>& keys, const std::string& path,
                          const std::string& fallback) {
  for (const auto& key : keys) {
    if (cfg.contains(key) && cfg[key].is_string()) {
      std::string fn = cfg[key].get<std::string>();
      static const std::vector<std::string> known = {"gelu", "gelu_new", "gelu_fast", "gelu_pytorch_tanh",
                                                     "quick_gelu", "relu", "silu", "swish", "tanh", "sigmoid"};
      if (std::find(known.begin(), known.end(), fn) == known.end()) {
        throw InputError(join(path, key), "unsupported activation \"" + fn + "\"");
      }
      return fn;
    }
  }
  return fallback;
}

Json dropout(const std::string& name, double rate) { return {{"type", "dropout"}, {"name", name}, {"rate", rate}}; }

struct Dims {
  std::int64_t hidden, layers, heads, kv_heads, inner, vocab, positions, seq;
  std::string act;
  double dropout;
  double attention_dropout;
};

/// Pre-LayerNorm decoder block with learned positions and a tied LM head (GPT-2 and friends).
Json decoder(const Dims& dm, bool tied) {
  Json block = Json::array({
      {{"type", "layernorm"}, {"name", "ln_1"}},
      {{"type", "attention"}, {"name", "attn"}, {"num_heads", dm.heads}, {"num_kv_heads", dm.kv_heads}, {"causal", true},
       {"dropout", dm.attention_dropout}},
      dropout("attn_dropout", dm.dropout),
      {{"type", "add"}, {"name", "attn_residual"}, {"inputs", {"stream", "attn_dropout"}}},
      {{"type", "layernorm"}, {"name", "ln_2"}},
      {{"type", "dense"}, {"name", "mlp_up"}, {"units", dm.inner}, {"activation", dm.act}},
      {{"type", "dense"}, {"name", "mlp_down"}, {"units", dm.hidden}},
      dropout("mlp_dropout", dm.dropout),
      {{"type", "add"}, {"name", "stream"}, {"inputs", {"attn_residual", "mlp_dropout"}}},
  });
  Json layers = Json::array({
      {{"type", "embedding"}, {"name", "wte"}, {"vocab_size", dm.vocab}, {"dim", dm.hidden}},
      {{"type", "embedding"}, {"name", "wpe"}, {"vocab_size", dm.positions}, {"dim", dm.hidden}, {"positional", true},
       {"inputs", {"input"}}},
      {{"type", "add"}, {"name", "embed"}, {"inputs", {"wte", "wpe"}}},
      dropout("stream", dm.dropout),
      {{"type", "repeat"}, {"name", "h"}, {"count", dm.layers}, {"layers", block}},
      {{"type", "layernorm"}, {"name", "ln_f"}},
  });
  Json head = {{"type", "dense"}, {"name", "lm_head"}, {"units", dm.vocab}, {"bias", false}};
  if (tied) head["tied_to"] = "wte";
  layers.push_back(head);
  layers.push_back({{"type", "cross_entropy"}, {"name", "loss"}});
  return layers;
}

/// Post-LayerNorm encoder with word, position and token-type embeddings and the masked-LM head (BERT, RoBERTa).
Json encoder(const Dims& dm, std::int64_t type_vocab) {
  Json block = Json::array({
      {{"type", "attention"}, {"name", "attention"}, {"num_heads", dm.heads}, {"dropout", dm.attention_dropout},
       {"inputs", {"stream"}}},
      dropout("attention_dropout", dm.dropout),
      {{"type", "add"}, {"name", "attention_residual"}, {"inputs", {"stream", "attention_dropout"}}},
      {{"type", "layernorm"}, {"name", "attention_norm"}},
      {{"type", "dense"}, {"name", "intermediate"}, {"units", dm.inner}, {"activation", dm.act}},
      {{"type", "dense"}, {"name", "output"}, {"units", dm.hidden}},
      dropout("output_dropout", dm.dropout),
      {{"type", "add"}, {"name", "output_residual"}, {"inputs", {"attention_norm", "output_dropout"}}},
      {{"type", "layernorm"}, {"name", "stream"}},
  });
  Json embeddings = Json::array({
      {{"type", "embedding"}, {"name", "word_embeddings"}, {"vocab_size", dm.vocab}, {"dim", dm.hidden}},
      {{"type", "embedding"}, {"name", "position_embeddings"}, {"vocab_size", dm.positions}, {"dim", dm.hidden},
       {"positional", true}, {"inputs", {"input"}}},
  });
  Json sum_inputs = {"word_embeddings", "position_embeddings"};
  if (type_vocab > 0) {
    embeddings.push_back({{"type", "embedding"}, {"name", "token_type_embeddings"}, {"vocab_size", type_vocab},
                          {"dim", dm.hidden}, {"inputs", {"input"}}});
    sum_inputs.push_back("token_type_embeddings");
  }
  Json layers = embeddings;
  layers.push_back({{"type", "add"}, {"name", "embeddings"}, {"inputs", sum_inputs}});
  layers.push_back({{"type", "layernorm"}, {"name", "embeddings_norm"}});
  layers.push_back(dropout("stream", dm.dropout));
  layers.push_back({{"type", "repeat"}, {"name", "layer"}, {"count", dm.layers}, {"layers", block}});
  layers.push_back({{"type", "dense"}, {"name", "mlm_transform"}, {"units", dm.hidden}, {"activation", dm.act}});
  layers.push_back({{"type", "layernorm"}, {"name", "mlm_norm"}});
  layers.push_back({{"type", "dense"}, {"name", "mlm_decoder"}, {"units", dm.vocab}, {"tied_to", "word_embeddings"}});
  layers.push_back({{"type", "cross_entropy"}, {"name", "loss"}});
  return layers;
}

}  // namespace

Json hf_config_to_layers(const Json& config, const std::string& path, std::int64_t seq_len,
                         std::vector<std::string>& warnings) {
  require_object(config, path);
  std::string type = get_string(config, "model_type", path, "");
  bool is_encoder = type == "bert" || type == "roberta";
  bool is_gpt2 = type == "gpt2" || (type.empty() && config.contains("n_embd"));

  Dims dm{};
  dm.hidden = first_int(config, {"hidden_size", "n_embd", "d_model"}, path, -1, 1, kMaxWidth);
  dm.layers = first_int(config, {"num_hidden_layers", "n_layer", "num_layers"}, path, -1, 1, kMaxDepth);
  dm.heads = first_int(config, {"num_attention_heads", "n_head"}, path, -1, 1, kMaxWidth);
  dm.kv_heads = first_int(config, {"num_key_value_heads"}, path, dm.heads, 1, dm.heads);
  if (dm.heads % dm.kv_heads != 0) {
    throw InputError(join(path, "num_key_value_heads"),
                     "must divide num_attention_heads (" + std::to_string(dm.heads) + "), got " +
                         std::to_string(dm.kv_heads));
  }
  dm.inner = first_int(config, {"intermediate_size", "n_inner"}, path, 4 * dm.hidden, 1, kMaxWidth * 16);
  dm.vocab = first_int(config, {"vocab_size"}, path, -1, 1, kMaxWidth * 16);
  dm.positions = first_int(config, {"max_position_embeddings", "n_positions", "n_ctx"}, path, 0, 1, 1 << 24);
  dm.dropout = first_rate(config, {"hidden_dropout_prob", "resid_pdrop", "dropout"}, path, 0.1);
  dm.attention_dropout =
      first_rate(config, {"attention_probs_dropout_prob", "attn_pdrop", "attention_dropout"}, path, dm.dropout);
  if (dm.hidden % dm.heads != 0) {
    throw InputError(join(path, config.contains("n_head") ? "n_head" : "num_attention_heads"),
                     "must divide the hidden size " + std::to_string(dm.hidden));
  }

  if (seq_len <= 0) seq_len = dm.positions > 0 ? std::min<std::int64_t>(dm.positions, 1024) : 1024;
  if (dm.positions > 0 && seq_len > dm.positions) {
    throw InputError("training.seq_len", "is " + std::to_string(seq_len) + " but the model has only " +
                                             std::to_string(dm.positions) + " learned positions");
  }
  if (dm.positions == 0) dm.positions = seq_len;

  Json layers;
  std::string name = type.empty() ? "hf-model" : type;
  if (is_encoder) {
    dm.act = activation_of(config, {"hidden_act"}, path, "gelu");
    layers = encoder(dm, first_int(config, {"type_vocab_size"}, path, type == "roberta" ? 1 : 2, 0, 1 << 20));
  } else {
    dm.act = activation_of(config, {"activation_function", "hidden_act"}, path, "gelu_new");
    if (!is_gpt2) {
      warnings.push_back("model_type \"" + type + "\" is not recognised; treated as a GPT-2-style decoder " +
                         "(pre-LayerNorm, learned positions, tied embeddings)");
    }
    layers = decoder(dm, get_bool(config, "tie_word_embeddings", path, true));
  }
  return {{"name", name}, {"input", {{"kind", "tokens"}, {"seq_len", seq_len}}}, {"layers", layers}};
}

}  // namespace prenet
