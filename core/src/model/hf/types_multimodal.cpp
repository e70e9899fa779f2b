// Audio and vision models and multimodal wrappers: Whisper, CLIP/SigLIP, Gemma 3 and Llama 4 wrappers, DeBERTa.
// One row per model_type; see model_types.cpp for how to add one.
#include "model/hf/parts.hpp"
#include "model/hf/quirks.hpp"

namespace prenet::hf {
namespace {

constexpr Family kDeberta{build_deberta, false};
constexpr Family kVisionTower{build_vision_tower, true};
constexpr Family kGemma3Wrapper{build_gemma3, false};
constexpr Family kQwen3VlWrapper{build_qwen3_vl, false};
constexpr Family kQwen3VlMoeWrapper{build_qwen3_vl_moe, false};
constexpr Family kWhisper{build_whisper, false};
constexpr Family kTwoTowers{build_two_towers, true};  // the image is the input, the text a second stream
constexpr Family kLlama4Wrapper{build_llama4, false};

/// CLIPVisionConfig / SiglipVisionConfig: every size has the class's default (Gemma 3's vision_config leaves
/// some out).
const Steps kTowerShape = {
    opt(&Arch::hidden, {"hidden_size"}, 768, 1, kMaxWidth),
    opt(&Arch::layers, {"num_hidden_layers"}, 12, 1, kMaxDepth),
    opt(&Arch::heads, {"num_attention_heads"}, 12, 1, kMaxWidth),
    opt(&Arch::inner, {"intermediate_size"}, 3072, 1, kMaxInner),
    opt(&Arch::channels, {"num_channels"}, 3, 1, 1 << 16),
    rate(&Arch::attn_dropout, {"attention_dropout"}, 0.0),
};
/// Read after the patch, as the builder read it before (of two bad fields, the same one is named).
const Step kTowerImage = opt(&Arch::image_size, {"image_size"}, 224, 1, 16384);
/// SigLIP pools with its attention head unless the config says vision_use_head false.
void read_siglip_pooling(const Cfg& c, Arch& a, std::vector<std::string>&) {
  a.pooling = c.flag("vision_use_head", true) ? "attention_head" : "none";
}

/// Each class's patch, activation and what its modules fix (VisionArch): CLIP's class token, its bias-free patch
/// convolution, pre_layrnorm and class-token pooling; SigLIP's biased patches and attention-pooling head.
const Steps kClipTower = {
    opt(&Arch::patch, {"patch_size"}, 32, 1, 4096),
    act({"hidden_act"}, "quick_gelu"),
    kTowerImage,
    fix(&Arch::class_embedding, true),
    fix(&Arch::patch_bias, false),
    fix(&Arch::pre_layernorm, true),
    fix(&Arch::pooling, "class_token"),
    hook(&Arch::projection_dim, read_vision_projection),
};
const Steps kSiglipTower = {
    opt(&Arch::patch, {"patch_size"}, 16, 1, 4096),
    act({"hidden_act"}, "gelu_pytorch_tanh"),
    kTowerImage,
    fix(&Arch::class_embedding, false),
    fix(&Arch::patch_bias, true),
    fix(&Arch::pre_layernorm, false),
    hook(&Arch::pooling, read_siglip_pooling),
};

/// DeBERTa-v2/v3: BERT's sizes with no token types by default (DebertaV2Config); the relative-attention
/// fields are read by the builder (deberta.cpp).
const Step kNoTokenTypes = opt(&Arch::type_vocab, {"type_vocab_size"}, 0, 0, 1 << 20);
const Steps kDebertaShape = {
    need(&Arch::vocab, {"vocab_size"}, 1, kMaxVocab),
    opt(&Arch::max_positions, {"max_position_embeddings"}, 512, 1, kMaxPositions),
};

/// WhisperConfig: d_model, the encoder's and decoder's depths, heads and MLP widths (the class's defaults).
const Steps kWhisperShape = {
    opt(&Arch::hidden, {"d_model"}, 384, 1, kMaxWidth),
    opt(&Arch::layers, {"encoder_layers"}, 4, 1, kMaxDepth),
    opt(&Arch::decoder_layers, {"decoder_layers"}, 4, 1, kMaxDepth),
    opt(&Arch::heads, {"encoder_attention_heads"}, 6, 1, kMaxWidth),
    opt(&Arch::decoder_heads, {"decoder_attention_heads"}, 6, 1, kMaxWidth),
    opt(&Arch::inner, {"encoder_ffn_dim"}, 1536, 1, kMaxInner),
    opt(&Arch::decoder_inner, {"decoder_ffn_dim"}, 1536, 1, kMaxInner),
    opt(&Arch::vocab, {"vocab_size"}, 51865, 1, kMaxVocab),
    act({"activation_function"}, "gelu"),
    rate(&Arch::dropout, {"dropout"}, 0.0),
    rate(&Arch::attn_dropout, {"attention_dropout"}, 0.0),
    rate(&Arch::act_dropout, {"activation_dropout"}, 0.0),
    flag(&Arch::tied, "tie_word_embeddings", true),
};

/// Whisper's audio front-end: the log-mel bins, the encoder's and the decoder's positions (WhisperConfig's
/// defaults), read last as the builder read them.
const Steps kWhisperAudio = {
    opt(&Arch::mel_bins, {"num_mel_bins"}, 80, 1, 1 << 16),
    opt(&Arch::source_positions, {"max_source_positions"}, 1500, 1, kMaxPositions),
    opt(&Arch::target_positions, {"max_target_positions"}, 448, 1, kMaxPositions),
};

}  // namespace

const std::vector<ModelType>& multimodal_model_types() {
  static const std::vector<ModelType> rows = {
      {"deberta-v2", kDeberta, compose({kBert, kDebertaShape}, {kNoTokenTypes})},
      {"clip_vision_model", kVisionTower, compose({kTowerShape, kClipTower})},
      {"siglip_vision_model", kVisionTower, compose({kTowerShape, kSiglipTower})},
      {"whisper", kWhisper, compose({kWhisperShape, kWhisperAudio})},
      {"gemma3", kGemma3Wrapper, {}},
      {"clip", kTwoTowers, {}},
      {"siglip", kTwoTowers, {}},
      {"llama4", kLlama4Wrapper, {}},
      {"qwen3_vl", kQwen3VlWrapper, {}},
      {"qwen3_vl_moe", kQwen3VlMoeWrapper, {}},
  };
  return rows;
}

}  // namespace prenet::hf
