#pragma once
// The CLIP and SigLIP vision towers (vision_towers.cpp), for their own rows and for the multimodal wrappers
// that hold one under vision_config.
#include <cstdint>
#include <string>

#include "model/hf/builders.hpp"

namespace prenet::hf {

/// architectures[0], "" when the config names none; an error naming the field when it is not a list of names.
std::string first_architecture(const Cfg& c);

/// The image side to build for: the request's (`wanted` > 0) or the config's image_size; errors name
/// patch_size when it exceeds image_size, and training.image_size when the request's side is smaller than a
/// patch or larger than the position table's images.
std::int64_t tower_image_size(const Cfg& c, const Arch& v, std::int64_t wanted);

/// The tower's layers over an image input (`clip`: CLIP's class token, pre-LayerNorm and pooled class token;
/// otherwise SigLIP's, with the attention-pooling head unless vision_use_head is false).
Json vision_tower_layers(const Cfg& c, const Arch& v, bool clip);

}  // namespace prenet::hf
