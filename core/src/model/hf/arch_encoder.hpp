#pragma once
// The part of hf::Arch (arch.hpp) that only the encoder families read: encoder-only transformers (BERT, RoBERTa,
// DistilBERT, DeBERTa) and ViT: what their builders read beyond the shared fields.
#include <cstdint>
#include <string>

namespace prenet::hf {

/// A base of Arch, so that the steps (steps.hpp) and the form's fields (arch_form.hpp) reach these members as
/// `&Arch::member`, as they reach the shared ones.
struct EncoderArch {
  // ViT (vit.cpp): the side of the images the position table was trained for (ViTConfig's image_size).
  std::int64_t image_size = 224;

  // DeBERTa-v2/v3 (deberta.cpp; DebertaV2Config and the getattr defaults of its modules).
  std::int64_t embedding_size = 0;          // the word table's width (0: hidden), projected to hidden (embed_proj)
  bool relative_attention = false;          // disentangled relative-position scores
  std::int64_t position_buckets = 0;        // log buckets of relative distance (0: none, max_relative_positions)
  std::int64_t max_relative_positions = 0;  // the relative span without buckets (0: max_positions)
  std::string pos_att_type = "none";        // the position terms: none | c2p | p2c | c2p|p2c
  bool share_att_key = false;               // the position keys/queries reuse key_proj/query_proj
  std::string norm_rel_ebd = "none";        // layer_norm: a LayerNorm on the relative table (none: none)
  bool position_biased_input = true;        // a learned absolute position table added to the words
  double pooler_dropout = 0;                // the dropout before the ContextPooler's dense (its act: pooler_act)
};

}  // namespace prenet::hf
