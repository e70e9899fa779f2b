#pragma once
// The family builders: each turns a normalised Arch into a layer-list model.
#include <cstdint>
#include <string>
#include <vector>

#include "model/hf/arch.hpp"
#include "model/hf/config_reader.hpp"

namespace prenet::hf {

/// The input size the request asks for (0: the config's).
struct Wanted {
  std::int64_t seq_len = 0;
  std::int64_t image_size = 0;
};

/// Builds the model of `a`, read from `c`; appends notes for the user to `warnings`.
using Builder = Json (*)(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);

/// Decoder-only transformers (GPT-2, GPT-NeoX, GPT-J, OPT, Llama and relatives): decoder.cpp.
Json build_decoder(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
/// The same decoder from `a` alone, its task head included (a.head): what build_decoder runs after reading the
/// head from the config's `architectures`, and what the architecture form runs (arch_json.cpp). `c` only names
/// fields in errors (the head counts, the depth).
Json build_decoder_arch(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
/// Post-LayerNorm encoders with a task head (BERT, RoBERTa, DistilBERT): encoder.cpp. Their rows' steps read
/// everything it builds from, task head included, so it is the architecture form's builder too.
Json build_encoder(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
/// T5 and Switch Transformers: t5.cpp.
Json build_t5(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
/// The same from `a` alone (the architecture form's `t5` family); `c` only names fields in errors.
Json build_t5_arch(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
/// The fairseq / BART encoder-decoders: seq2seq.cpp.
Json build_seq2seq(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
/// The same from `a` alone (the architecture form's `seq2seq` family); `c` only names fields in errors.
Json build_seq2seq_arch(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
/// ViT image classifiers: vit.cpp: the classifier's labels read from the config (read_vit_labels), then
/// build_vit_arch, which builds from `a` alone (a.image_size, a.patch, a.head.labels); `c` only names fields.
Json build_vit(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
Json build_vit_arch(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
/// ViT's classifier from config `c`: num_labels or id2label's size, else 1000 with a warning.
void read_vit_labels(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// DeBERTa-v2/v3 (disentangled relative attention): deberta.cpp: the fields its row's steps leave to it read from
/// the config (read_deberta_config), then build_deberta_arch, which builds from `a` alone; `c` only names fields.
Json build_deberta(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
Json build_deberta_arch(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
/// DeBERTa's own fields of config `c` into `a` (EncoderArch's DeBERTa part, the task head and its pooler),
/// refusing those that change the network and are not modelled.
void read_deberta_config(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// CLIP and SigLIP vision towers (clip_vision_model, siglip_vision_model): vision_towers.cpp. Their rows' steps
/// read everything (VisionArch and the shared sizes), so build_vision_tower runs build_vision_tower_arch, which
/// builds from `a` alone and is the architecture form's builder; `c` only names fields in errors.
Json build_vision_tower(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
Json build_vision_tower_arch(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
/// VisionArch::projection_dim of config `c`: projection_dim (default 512) when architectures[0] is
/// CLIPVisionModelWithProjection, else 0 (clip_vision_model's step).
void read_vision_projection(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// Gemma3ForConditionalGeneration: the text model costed, the vision tower and projector held: wrappers.cpp: the
/// nested configs read into the parts (read_gemma3_config: the text decoder with Gemma3TextConfig's defaults and
/// its head, the SigLIP tower, mm_tokens_per_image), then build_gemma3_arch, which builds from `a` alone; `c`
/// only names fields in errors.
Json build_gemma3(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
Json build_gemma3_arch(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
void read_gemma3_config(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// CLIPModel, SiglipModel: both towers and the contrastive loss over the micro-batch: two_towers.cpp: the nested
/// configs read into the towers (read_two_towers_config), then build_two_towers_arch, which builds from `a` alone
/// (VisionArch: its parts, projection_dim, contrastive_loss); `c` only names fields in errors.
Json build_two_towers(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
Json build_two_towers_arch(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
/// The towers of CLIPModel or SiglipModel config `c` (`a.name`: its model_type) into a.parts (vision_config with
/// its row's steps, text_config with the text class's defaults), projection_dim and the loss; errors name the
/// nested fields.
void read_two_towers_config(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// Whisper (convolution stem over log-mel frames, encoder, decoder with cross-attention): whisper.cpp.
Json build_whisper(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
/// Refuses a Whisper config whose `architectures` names a class other than WhisperForConditionalGeneration (the
/// one build_whisper builds), naming that field.
void check_whisper_class(const Cfg& c);
/// The same from `a` alone, its audio front-end included (mel_bins, source_positions, target_positions): what
/// build_whisper runs after refusing other `architectures`, and the architecture form's `whisper` family. `c`
/// only names fields in errors (the head counts).
Json build_whisper_arch(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
/// Llama4ForConditionalGeneration: the text model costed, the vision model and projector held: wrappers.cpp.
/// Llama4ForConditionalGeneration: the text model costed, the vision model and projector held: wrappers.cpp: the
/// nested configs read into the parts (read_llama4_config: the text decoder, Llama 4's vision sizes), then
/// build_llama4_arch, which builds from `a` alone; `c` only names fields in errors.
Json build_llama4(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
/// Qwen3.5's multimodal releases (model_type qwen3_5, qwen3_5_moe): the text_config's decoder (qwen3_5_text,
/// qwen3_5_moe_text) with Qwen3-VL's vision encoder and merger held as parameters. Not echoed as an architecture.
Json build_qwen3_5(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
Json build_qwen3_5_moe(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
/// Qwen3-VL's releases (qwen3_vl, qwen3_vl_moe): the text_config's decoder (qwen3_vl_text, qwen3_vl_moe_text) with
/// the same vision encoder (Qwen3VLVisionConfig's defaults: three deepstack mergers) held. Not echoed as an
/// architecture.
Json build_qwen3_vl(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
Json build_qwen3_vl_moe(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
Json build_llama4_arch(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
void read_llama4_config(const Cfg& c, Arch& a, std::vector<std::string>& warnings);
/// State-space language models (Mamba, FalconMamba, Mamba-2) and the Jamba hybrid: ssm.cpp.
Json build_ssm(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
/// The same from `a` alone, its head included (a.head: the language model's or none): what build_ssm runs after
/// reading the head from `architectures`, and what the architecture form runs. `c` only names fields in errors.
Json build_ssm_arch(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
/// Nemotron-H (NemotronHForCausalLM): the layers of a.block_pattern, each an RMSNorm, one mixer and a residual.
Json build_nemotron_h(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
/// Granite 4.0 (granitemoehybrid): Mamba-2 or attention per layer, routed experts beside a shared MLP (ssm.cpp).
Json build_granite_hybrid(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);
/// Falcon-H1 (falcon_h1): every layer a Mamba-2 mixer and attention side by side, summed, then a SwiGLU (ssm.cpp).
Json build_falcon_h1(const Cfg& c, const Arch& a, const Wanted& wanted, std::vector<std::string>& warnings);

}  // namespace prenet::hf
