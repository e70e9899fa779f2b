#pragma once
// The steps that read a config into an Arch: each names the config fields (spellings in order of preference)
// that fill one quantity, with its default and bounds. A model type's row in model_types.cpp is a list of
// them, read in order (so that, of two bad fields, the same one is reported first).
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "model/hf/arch.hpp"
#include "model/hf/config_reader.hpp"

namespace prenet::hf {

using Size = std::int64_t Arch::*;
using Rate = double Arch::*;
using Flag = bool Arch::*;
using Text = std::string Arch::*;
/// Config field spellings, in order of preference.
using Keys = std::initializer_list<const char*>;
/// Code for what is not field renaming; reads `c` into `a`, may add notes to `warnings`.
using Hook = void (*)(const Cfg& c, Arch& a, std::vector<std::string>& warnings);

/// A size default or bound: a constant, or a quantity read before (times a factor, over a divisor, capped).
struct Amount {
  Amount(std::int64_t n = 0) : constant(n) {}  // NOLINT: a plain number is a constant amount
  std::int64_t constant = 0;
  Size base = nullptr;
  std::int64_t times = 1;
  Size over = nullptr;
  std::int64_t cap = 0;  // 0: none
  /// The amount for the quantities read so far.
  std::int64_t in(const Arch& a) const;
};
/// `times` x the quantity `m`.
Amount of(Size m, std::int64_t times = 1);
/// The quantity `m` over the quantity `d` (integer division).
Amount per(Size m, Size d);
/// The smaller of `cap` and the quantity `m`.
Amount capped(std::int64_t cap, Size m);

enum class Op { Need, Optional, Dropout, Switch, NotSwitch, Activation, Set, Warn, TaskHead, Custom };

/// One read. Which members are used depends on `op`; the target pointers also say which quantity the step
/// fills, so a row's override replaces the step of the same op that fills the same quantity.
struct Step {
  Op op = Op::Set;
  std::vector<std::string> keys;
  Size size = nullptr;
  Amount fallback, min, max;
  Rate rate = nullptr, rate_from = nullptr;
  double rate_default = 0;
  std::vector<Flag> flags;
  Flag flag_from = nullptr;
  bool flag_default = false;
  Text text = nullptr;  // Need: where the spelling read is kept; Set: the value's target
  std::string text_default;
  Hook hook = nullptr;
};
using Steps = std::vector<Step>;

/// A required size from the first present of `keys`.
Step need(Size m, Keys keys, Amount min, Amount max);
/// The head count from the first present of `keys`, remembering the spelling for errors.
Step head_count(Keys keys);
/// An optional size from the first present of `keys`, `fallback` when none is.
Step opt(Size m, Keys keys, Amount fallback, Amount min, Amount max);
/// A dropout rate, `fallback` (or the rate `same_as` read before) when absent.
Step rate(Rate m, Keys keys, double fallback);
Step rate(Rate m, Keys keys, Rate same_as);
/// A switch `key` setting every one of `m`, `fallback` (or the switch `same_as`) when absent.
Step flag(std::initializer_list<Flag> m, const char* key, bool fallback);
Step flag(Flag m, const char* key, bool fallback);
Step flag(Flag m, const char* key, Flag same_as);
/// `m` is the negation of switch `key`; absent, `m` keeps its value.
Step not_flag(Flag m, const char* key);
/// The activation from the first present of `keys`, `fallback` when none is.
Step act(Keys keys, const char* fallback);
/// Sets a quantity without reading the config.
Step fix(Size m, Amount value);
Step fix(Flag m, bool value);
Step fix(Rate m, Rate same_as);
Step fix(Text m, const char* value);
/// A note for the user when switch `key` is on.
Step warn_if(const char* key, const char* note);
/// The task head named by `architectures` (heads.cpp).
Step task_head();
/// Runs `fn`; `fills` names the quantity it sets, for overrides (nullptr: none can override it).
Step hook(Hook fn);
Step hook(Size fills, Hook fn);
Step hook(Flag fills, Hook fn);
Step hook(Text fills, Hook fn);

/// `parts` in order, each step of `overrides` replacing the step it matches (a programming error if none).
Steps compose(const std::vector<Steps>& parts, const Steps& overrides = {});

/// Reads `c` into `a` step by step.
void read_steps(const Cfg& c, const Steps& steps, Arch& a, std::vector<std::string>& warnings);

}  // namespace prenet::hf
