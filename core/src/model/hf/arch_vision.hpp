#pragma once
// The part of hf::Arch (arch.hpp) that only the vision families read: the CLIP and SigLIP vision towers
// (vision_towers.cpp) and the two-tower contrastive models built of one (two_towers.cpp). The tower's sizes are the
// shared fields (hidden, layers, heads, inner, patch, channels, act, attn_dropout) and EncoderArch::image_size
// (the same quantity as ViT's: the side of the images the position table was trained for).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace prenet::hf {

struct Arch;

/// A base of Arch, so that the steps (steps.hpp) and the form's fields (arch_form.hpp) reach these members as
/// `&Arch::member`, as they reach the shared ones.
struct VisionArch {
  // What differs between CLIP's tower (CLIPVisionTransformer) and SigLIP's (SiglipVisionTransformer): a class
  // token beside the patches (and its position row), a bias in the patch convolution, a LayerNorm before the
  // encoder (CLIP's pre_layrnorm), and how the tower pools: "class_token" (post_layernorm on the class token),
  // "attention_head" (post_layernorm on every token, then SigLIP's attention-pooling head) or "none"
  // (post_layernorm on every token; SigLIP with vision_use_head false).
  bool class_embedding = false;
  bool patch_bias = true;
  bool pre_layernorm = false;
  std::string pooling = "attention_head";
  // CLIPVisionModelWithProjection's visual_projection (no bias) on the pooled vector, and CLIPModel's projection of
  // both towers; 0: none.
  std::int64_t projection_dim = 0;

  // The two-tower models (two_towers.cpp): the towers, each an Arch of its own (vision: the vision tower's
  // fields; text: the text tower's), at kVisionPart and kTextPart; empty for a tower alone. A vector rather than
  // two members because Arch is not complete here; the loss is contrastive_loss's function (softmax: CLIP,
  // sigmoid: SigLIP) and text_causal CLIP's causal mask in the text tower.
  // The multimodal wrappers (wrappers.cpp, Gemma 3) hold the vision tower at kVisionPart and the text decoder
  // at kTextPart, and the projector's image tokens per image.
  std::vector<Arch> parts;
  std::int64_t mm_tokens_per_image = 256;
  // Llama 4's vision model (Llama4VisionConfig, wrappers.cpp): its pixel-shuffle adapter's fc1 width and fc2
  // square, and the width the projector maps to the text model's.
  std::int64_t projector_input_dim = 0, projector_output_dim = 0, vision_output_dim = 0;
  std::string contrastive_loss = "softmax";
  bool text_causal = true;
};

/// The index of each tower in VisionArch::parts.
constexpr std::size_t kVisionPart = 0, kTextPart = 1;

}  // namespace prenet::hf
