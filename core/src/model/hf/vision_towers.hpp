#pragma once
// The CLIP and SigLIP vision towers (vision_towers.cpp), for their own rows, for the multimodal wrappers that hold
// one under vision_config and for the two-tower models (two_towers.cpp), whose text towers reuse the encoder layer.
#include <cstdint>
#include <string>

#include "model/hf/builders.hpp"

namespace prenet::hf {

struct ModelType;

/// The nested config `key` of `c` (text_config, vision_config) as its own reader; an error names the field when
/// it is absent or not an object.
Cfg nested(const Cfg& c, const std::string& key);

/// The row reading nested config `n`: its own model_type, else `fallback`; an error names the field when the
/// table has none.
const ModelType& nested_row(const Cfg& n, const std::string& fallback);

/// architectures[0], "" when the config names none; an error naming the field when it is not a list of names.
std::string first_architecture(const Cfg& c);

/// One pre-LayerNorm encoder layer of CLIP and SigLIP (layer_norm1, self_attn with biased Q, K, V and output,
/// layer_norm2, fc1 and fc2) reading and writing `stream`; `causal`: CLIP's text tower's mask.
Json encoder_block(const Arch& v, const std::string& stream, bool causal);

/// The image side to build for: the request's (`wanted` > 0) or the tower's image_size; errors name patch_size
/// when it exceeds image_size, and training.image_size when the request's side is smaller than a patch or larger
/// than the position table's images.
std::int64_t tower_image_size(const Cfg& c, const Arch& v, std::int64_t wanted);

/// The checks between the tower's fields (heads dividing the width, a class token to pool, a pooled vector to
/// project), each naming the field of `c` at fault.
void check_vision_tower(const Cfg& c, const Arch& v);

/// The tower's layers over an image input, from `v` alone (VisionArch: the class token, the patch bias,
/// pre_layrnorm, the pooling and the projection); `c` only names fields in errors.
Json vision_tower_layers(const Cfg& c, const Arch& v);

}  // namespace prenet::hf
