#pragma once
// The part of hf::Arch (arch.hpp) that only the ssm families read: state-space mixers (Mamba, Mamba-2) and hybrids
// (Jamba): the mixer's sizes and the layer pattern, read by types_ssm.cpp's steps (or the architecture form,
// arch_form_ssm.cpp) and built by ssm.cpp.
#include <cstdint>
#include <string>
#include <vector>

namespace prenet::hf {

/// What sits after a layer's mixer: nothing (a Mamba block), a dense gated MLP, or routed experts.
enum class SsmMlp { None, Dense, Moe };

/// One layer of a state-space model or hybrid (SsmArch::ssm_plan).
struct SsmLayer {
  bool attention = false;  // self-attention instead of the state-space mixer
  SsmMlp mlp = SsmMlp::None;
  bool operator==(const SsmLayer& o) const { return attention == o.attention && mlp == o.mlp; }
  bool operator!=(const SsmLayer& o) const { return !(*this == o); }
};

/// A base of Arch, so that the steps (steps.hpp) and the form's fields (arch_form.hpp) reach these members as
/// `&Arch::member`, as they reach the shared ones. The hybrid's attention (heads, kv_heads, attn_dropout) and MLP
/// (inner: 0 for none, experts, top_k, act) are the shared fields.
struct SsmArch {
  // The mixer: 1 MambaMixer (selective scan with a time-step rank), 2 Mamba2Mixer (heads, groups, gated norm).
  std::int64_t ssm_version = 1;
  std::int64_t ssm_inner = 0;      // the mixer's width (expand × hidden, or MambaConfig's intermediate_size)
  std::int64_t ssm_state = 16;     // the state size N
  std::int64_t ssm_conv = 4;       // the depthwise causal convolution's kernel
  std::int64_t ssm_dt_rank = 0;    // version 1: the time-step projection's rank (0: ceil(hidden / 16))
  std::int64_t ssm_heads = 0;      // version 2: the heads (0: ssm_inner / ssm_head_dim)
  std::int64_t ssm_head_dim = 64;  // version 2: each head's width
  std::int64_t ssm_groups = 1;     // version 2: the groups sharing B and C (divide the heads)
  bool ssm_bias = false;           // biases in in_proj and out_proj
  bool ssm_conv_bias = true;       // a bias in the convolution
  std::int64_t ssm_out_bias = -1;  // out_proj's bias apart (Falcon-H1's projectors_bias): 1 or 0; -1: as ssm_bias
  bool ssm_gated_norm = true;      // version 2: the gated RMSNorm before out_proj (Falcon-H1's mamba_rms_norm)
  std::int64_t ssm_chunk = 256;    // version 2: positions per chunk of the SSD scan (chunk_size)
  // The mixer's RMSNorms over dt, B and C: "none", "weighted" (Jamba: dt_rank + 2·state parameters) or
  // "weightless" (FalconMamba: buffers only, not costed).
  std::string ssm_inner_norms = "none";

  // The hybrid's layer pattern (JambaConfig): layer i attends when attn_period > 0 and i % attn_period ==
  // attn_offset, and routes its MLP through the experts when experts > 1, expert_period > 0 and
  // i % expert_period == expert_offset. `ssm_plan`, when not empty, says each layer instead.
  std::int64_t attn_period = 0, attn_offset = 0, expert_period = 0, expert_offset = 0;
  std::vector<SsmLayer> ssm_plan;

  // Nemotron-H (build_nemotron_h): one character per layer, each layer a single mixer after its RMSNorm: 'M' a
  // Mamba-2 mixer, '*' attention, '-' a non-gated MLP, 'E' routed experts beside a shared MLP. Empty: not Nemotron-H.
  // Read from hybrid_override_pattern (or layers_block_type); the architecture form does not echo it.
  std::string block_pattern;
  // The layers of its multi-token-prediction block (mtp_hybrid_override_pattern, the same characters) and why there
  // is none when `mtp_pattern` is empty.
  std::string mtp_pattern, mtp_unavailable;
};

struct Arch;
/// Each layer of `a`: its ssm_plan, or the pattern's (attention and experts by period and offset; an MLP when
/// inner > 0). ssm.cpp.
std::vector<SsmLayer> ssm_layer_kinds(const Arch& a);

}  // namespace prenet::hf
