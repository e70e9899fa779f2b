#pragma once
// The architecture form (docs/MODEL_FORMAT.md, "Architecture form"): an hf::Arch as JSON, written into the
// response (model.architecture) and read back as a model of its own ({"model": {"architecture": {...}}}), built
// by the same decoder builder the Hugging Face config reading uses.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/hf/arch.hpp"
#include "model/hf/builders.hpp"
#include "prenet/json_util.hpp"

namespace prenet::hf {

/// One field of the architecture form: its JSON key, what it holds and its default, as the docs list them.
struct ArchFieldDoc {
  std::string key;
  std::string type;      // "integer", "boolean", "number", "string", "array"
  std::string unit;      // "features", "tokens", "layers", ... ("" for switches and names)
  std::string fallback;  // the default when the key is absent, in words ("required" when none)
  std::string doc;       // one sentence
};

/// The families of the architecture form ("family"), the default ("decoder") first.
std::vector<std::string> arch_families();
/// Every field of `family`'s form, in the order they are read (the docs' table, from the same rows).
std::vector<ArchFieldDoc> arch_field_docs(const std::string& family = "decoder");
/// Every key of one entry of `family`'s per-layer list ("layers": [...]), likewise (empty: it has none).
std::vector<ArchFieldDoc> arch_layer_field_docs(const std::string& family = "decoder");
/// The family whose model-type rows are built by `config_builder` (hf::Family::build), nullopt when no
/// family of the form echoes them.
std::optional<std::string> arch_family_of_builder(Builder config_builder);
/// Completes `a`, read from config `c` by its model-type row's steps, with what `family`'s config builder reads
/// itself (the decoder's task head), so that the form builds the same model.
void arch_complete_from_config(const std::string& family, const Cfg& c, Arch& a, std::vector<std::string>& warnings);

/// `a` as `family`'s architecture form: every field (compact: one key per field; the decoder's per-layer plan
/// only when layers differ, and in each plan entry only what differs from a full-attention rotary dense layer of
/// intermediate_size). `family` empty: the family `a` was read as (Arch::family), else the decoder.
Json arch_to_json(const Arch& a, const std::string& family = "");

/// The Arch `j` describes; every error names the field under `path` ("model.architecture.layers[3].window") and
/// what was expected: unknown keys, wrong types, sizes out of range, heads not dividing hidden_size without
/// head_dim, KV heads not dividing heads, top-k above the experts, a plan of the wrong length, an unknown family.
Arch arch_from_json(const Json& j, const std::string& path);

/// The layer-list model of architecture `j` (as hf_config_to_layers returns one): its family's builder with
/// `seq_len` tokens (0: the architecture's default), or for an image family (ViT) images of `image_size`
/// pixels a side (0: the architecture's image_size). Notes for the user go to `warnings`.
Json architecture_to_layers(const Json& j, const std::string& path, std::int64_t seq_len,
                            std::vector<std::string>& warnings, std::int64_t image_size = 0);
/// Whether architecture `j`'s family reads an image (ViT), not tokens.
bool architecture_is_image(const Json& j, const std::string& path);

/// The architecture form of Hugging Face config `config`, read as hf_config_to_layers reads it (task head
/// included), when a family of the form builds its model type; nullopt for the other families or a config
/// that does not read. hf_config.cpp.
std::optional<Json> hf_config_architecture(const Json& config);

/// The sequence length a token model of `a` defaults to before the family's own cap (hf_config.cpp): 4096 for a
/// rotary decoder trained on at least 4096 positions, else 0 (the positions capped at 1024).
std::int64_t rotary_default_seq(const Arch& a, bool image_input);

/// Where a token model's sequence length of `seq_len` came from when the request set none: the trained
/// positions `max_positions` read from `field` (a full path; empty or 0 positions: none in the `source`, "config"
/// or "architecture"), capped or not; hf_config.cpp.
std::string trained_positions_source(const std::string& source, const std::string& field, std::int64_t max_positions,
                                     std::int64_t seq_len);

/// The same for architecture `j` (its max_position_embeddings), as training.seq_len_from says it.
std::string architecture_seq_source(const Json& j, std::int64_t seq_len);

}  // namespace prenet::hf
