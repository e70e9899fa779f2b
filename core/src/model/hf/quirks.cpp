#include "model/hf/quirks.hpp"

namespace prenet::hf {

void falcon_kv_heads(const Cfg& c, Arch& a, std::vector<std::string>&) {
  bool new_arch = c.flag("new_decoder_architecture", false);
  a.kv_field = c.has("num_kv_heads") ? "num_kv_heads" : c.has("n_head_kv") ? "n_head_kv" : "multi_query";
  if (new_arch) {
    a.kv_heads = c.opt({"num_kv_heads", "n_head_kv"}, a.heads, 1, a.heads);
  } else {
    a.kv_heads = c.flag("multi_query", true) ? 1 : a.heads;
  }
  // FalconDecoderLayer: two LayerNorms (ln_attn, ln_mlp) when num_ln_in_parallel_attn is 2, its default in the
  // new architecture (40B, 180B); Falcon2-11B sets 1: one LayerNorm feeds both.
  a.parallel_norms = c.opt({"num_ln_in_parallel_attn"}, new_arch ? 2 : 1, 1, 2);
  if (!new_arch && a.parallel_norms == 2) {
    throw InputError(c.field("num_ln_in_parallel_attn"),
                     "2 needs new_decoder_architecture (otherwise Hugging Face feeds the MLP from the attention's "
                     "LayerNorm and leaves ln_mlp unused)");
  }
}

void falcon_parallel(const Cfg& c, Arch& a, std::vector<std::string>&) {
  a.parallel = c.flag("parallel_attn", true);
  if (!a.parallel && c.flag("new_decoder_architecture", false)) {
    throw InputError(c.field("parallel_attn"),
                     "must be true with new_decoder_architecture (Hugging Face's FalconDecoderLayer has no "
                     "sequential form of it)");
  }
  if (c.flag("apply_residual_connection_post_layernorm", false)) {
    throw InputError(c.field("apply_residual_connection_post_layernorm"),
                     "true is not supported (the residual taken after the LayerNorm is not modelled)");
  }
}

void falcon_rotary(const Cfg& c, Arch& a, std::vector<std::string>&) { a.rotary = c.flag("alibi", false) ? 0.0 : 1.0; }

void rotary_share(const Cfg& c, Arch& a, const char* key, double fallback) {
  a.rotary = c.number(key, fallback, 0.0, 1.0);
  if (!(a.rotary > 0)) throw InputError(c.field(key), "must be in (0, 1] (the share of each head RoPE rotates)");
}

void gptj_rotary(const Cfg& c, Arch& a, std::vector<std::string>&) {
  const std::int64_t head = a.hidden / a.heads;
  a.rotary =
      c.has("rotary_dim") ? static_cast<double>(c.opt({"rotary_dim"}, head, 1, head)) / static_cast<double>(head) : 1.0;
}

void opt_final_norm(const Cfg& c, Arch& a, std::vector<std::string>&) {
  a.final_norm = !a.post_norm && !c.flag("_remove_final_layer_norm", false);
}

void t5_head_dim_given(const Cfg& c, Arch& a, std::vector<std::string>&) {
  if (a.head_dim == 0) throw InputError(c.field("d_kv"), "required when num_heads exceeds d_model");
}

void t5_feed_forward(const Cfg& c, Arch& a, std::vector<std::string>&) {
  std::string proj = c.str("feed_forward_proj", "relu");
  std::string fn = proj;
  if (proj.rfind("gated-", 0) == 0) {
    a.gated = true;
    fn = proj.substr(6);
  }
  a.act = activation(fn == "gelu" ? "gelu_new" : fn, c.field("feed_forward_proj"));
}

void switch_sparse_steps(const Cfg& c, Arch& a, std::vector<std::string>&) {
  // Hugging Face derives the steps from the sparse layer counts (defaults 3 of 12); a stored step wins, as
  // from_pretrained sets the config's own keys last.
  auto step = [&](const char* step_key, const char* count_key, std::int64_t layers) {
    if (c.has(step_key)) return c.opt({step_key}, 0, 0, kMaxDepth);
    std::int64_t sparse = c.opt({count_key}, 3, 0, kMaxDepth);
    return sparse > 0 ? layers / sparse : std::int64_t{0};
  };
  a.encoder_sparse_step = step("encoder_sparse_step", "num_sparse_encoder_layers", a.layers);
  a.decoder_sparse_step = step("decoder_sparse_step", "num_sparse_decoder_layers", a.decoder_layers);
}

void shared_vocab_table(const Cfg& c, Arch& a, std::vector<std::string>&) {
  a.vocab = c.req({"vocab_size"}, 1, kMaxVocab);
  if (!c.flag("share_encoder_decoder_embeddings", true)) {
    throw InputError(c.field("share_encoder_decoder_embeddings"), "separate Marian tables are not supported");
  }
}

void separate_vocab_tables(const Cfg& c, Arch& a, std::vector<std::string>&) {
  a.vocab = c.req({"src_vocab_size"}, 1, kMaxVocab);
  a.tgt_vocab = c.req({"tgt_vocab_size"}, 1, kMaxVocab);
}

void seq2seq_heads_divide(const Cfg& c, Arch& a, std::vector<std::string>&) {
  for (const auto& [key, heads] : {std::make_pair("encoder_attention_heads", a.heads),
                                   std::make_pair("decoder_attention_heads", a.decoder_heads)}) {
    if (a.hidden % heads != 0) {
      throw InputError(c.field(c.has(key) ? key : "num_attention_heads"),
                       "must divide d_model " + std::to_string(a.hidden));
    }
  }
}

void distil_classifier_dropout(const Cfg& c, Arch& a, std::vector<std::string>&) {
  if (a.head.dropout < 0 && a.head.head == Head::SequenceClassification) {
    a.head.dropout = c.rate({"seq_classif_dropout"}, 0.2);
  }
}

}  // namespace prenet::hf
