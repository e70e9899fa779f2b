#pragma once
// The part of hf::Arch (arch.hpp) that only the ssm families read: state-space mixers (Mamba, Mamba-2) and hybrids
// (Jamba): the mixer's sizes, read by types_ssm.cpp's steps and built by ssm.cpp.
#include <cstdint>
#include <string>

namespace prenet::hf {

/// A base of Arch, so that the steps (steps.hpp) and the form's fields (arch_form.hpp) reach these members as
/// `&Arch::member`, as they reach the shared ones.
struct SsmArch {};

}  // namespace prenet::hf
