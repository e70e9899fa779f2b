#include "model/hf/steps.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "model/hf/heads.hpp"

namespace prenet::hf {
namespace {

/// A step of `op` reading `keys`, its other members unset.
Step make(Op op, Keys keys = {}) {
  Step s;
  s.op = op;
  s.keys.assign(keys.begin(), keys.end());
  return s;
}

/// Whether `a` and `b` fill the same quantity the same way (so one may replace the other).
bool same_slot(const Step& a, const Step& b) {
  Flag fa = a.flags.empty() ? nullptr : a.flags.front();
  Flag fb = b.flags.empty() ? nullptr : b.flags.front();
  bool same_note = a.op != Op::Warn || a.keys == b.keys;
  return a.op == b.op && a.size == b.size && a.rate == b.rate && fa == fb && a.text == b.text && same_note;
}

/// Applies one step.
void read_step(const Cfg& c, const Step& s, Arch& a, std::vector<std::string>& warnings) {
  switch (s.op) {
    case Op::Need:
      a.*s.size = c.req(s.keys, s.min.in(a), s.max.in(a));
      if (s.text) a.*s.text = c.present(s.keys);
      break;
    case Op::Optional: a.*s.size = c.opt(s.keys, s.fallback.in(a), s.min.in(a), s.max.in(a)); break;
    case Op::Dropout: a.*s.rate = c.rate(s.keys, s.rate_from ? a.*s.rate_from : s.rate_default); break;
    case Op::Switch: {
      bool on = c.flag(s.keys.front(), s.flag_from ? a.*s.flag_from : s.flag_default);
      for (Flag f : s.flags) a.*f = on;
      break;
    }
    case Op::NotSwitch: a.*s.flags.front() = !c.flag(s.keys.front(), !(a.*s.flags.front())); break;
    case Op::Activation: a.act = c.act(s.keys, s.text_default); break;
    case Op::Set:
      if (s.size) a.*s.size = s.fallback.in(a);
      if (!s.flags.empty()) a.*s.flags.front() = s.flag_default;
      if (s.rate) a.*s.rate = a.*s.rate_from;
      if (s.text) a.*s.text = s.text_default;
      break;
    case Op::Warn:
      if (c.flag(s.keys.front(), false)) warnings.push_back(s.text_default);
      break;
    case Op::TaskHead: a.head = read_head(c, warnings); break;
    case Op::Custom: s.hook(c, a, warnings); break;
  }
}

}  // namespace

std::int64_t Amount::in(const Arch& a) const {
  if (!base) return constant;
  std::int64_t v = times * (a.*base);
  if (over) v = v / (a.*over);
  return cap > 0 ? std::min<std::int64_t>(cap, v) : v;
}

Amount of(Size m, std::int64_t times) {
  Amount x;
  x.base = m;
  x.times = times;
  return x;
}

Amount per(Size m, Size d) {
  Amount x = of(m);
  x.over = d;
  return x;
}

Amount capped(std::int64_t cap, Size m) {
  Amount x = of(m);
  x.cap = cap;
  return x;
}

Step need(Size m, Keys keys, Amount min, Amount max) {
  Step s = make(Op::Need, keys);
  s.size = m;
  s.min = min;
  s.max = max;
  return s;
}

Step head_count(Keys keys) {
  Step s = need(&Arch::heads, keys, 1, kMaxWidth);
  s.text = &Arch::heads_field;
  return s;
}

Step opt(Size m, Keys keys, Amount fallback, Amount min, Amount max) {
  Step s = need(m, keys, min, max);
  s.op = Op::Optional;
  s.fallback = fallback;
  return s;
}

Step rate(Rate m, Keys keys, double fallback) {
  Step s = make(Op::Dropout, keys);
  s.rate = m;
  s.rate_default = fallback;
  return s;
}

Step rate(Rate m, Keys keys, Rate same_as) {
  Step s = rate(m, keys, 0.0);
  s.rate_from = same_as;
  return s;
}

Step flag(std::initializer_list<Flag> m, const char* key, bool fallback) {
  Step s = make(Op::Switch, {key});
  s.flags.assign(m.begin(), m.end());
  s.flag_default = fallback;
  return s;
}

Step flag(Flag m, const char* key, bool fallback) {
  Step s = make(Op::Switch, {key});
  s.flags = {m};
  s.flag_default = fallback;
  return s;
}

Step flag(Flag m, const char* key, Flag same_as) {
  Step s = flag(m, key, false);
  s.flag_from = same_as;
  return s;
}

Step not_flag(Flag m, const char* key) {
  Step s = flag(m, key, false);
  s.op = Op::NotSwitch;
  return s;
}

Step act(Keys keys, const char* fallback) {
  Step s = make(Op::Activation, keys);
  s.text_default = fallback;
  return s;
}

Step fix(Size m, Amount value) {
  Step s = make(Op::Set);
  s.size = m;
  s.fallback = value;
  return s;
}

Step fix(Flag m, bool value) {
  Step s = make(Op::Set);
  s.flags = {m};
  s.flag_default = value;
  return s;
}

Step fix(Rate m, Rate same_as) {
  Step s = make(Op::Set);
  s.rate = m;
  s.rate_from = same_as;
  return s;
}

Step fix(Text m, const char* value) {
  Step s = make(Op::Set);
  s.text = m;
  s.text_default = value;
  return s;
}

Step warn_if(const char* key, const char* note) {
  Step s = make(Op::Warn, {key});
  s.text_default = note;
  return s;
}

Step task_head() { return make(Op::TaskHead); }

Step hook(Hook fn) {
  Step s = make(Op::Custom);
  s.hook = fn;
  return s;
}

Step hook(Size fills, Hook fn) {
  Step s = hook(fn);
  s.size = fills;
  return s;
}

Step hook(Flag fills, Hook fn) {
  Step s = hook(fn);
  s.flags = {fills};
  return s;
}

Step hook(Text fills, Hook fn) {
  Step s = hook(fn);
  s.text = fills;
  return s;
}

Steps compose(const std::vector<Steps>& parts, const Steps& overrides) {
  Steps out;
  for (const auto& part : parts) out.insert(out.end(), part.begin(), part.end());
  for (const auto& o : overrides) {
    auto it = std::find_if(out.begin(), out.end(), [&](const Step& s) { return same_slot(s, o); });
    if (it == out.end()) throw std::logic_error("hf model types: an override matches no step");
    *it = o;
  }
  return out;
}

void read_steps(const Cfg& c, const Steps& steps, Arch& a, std::vector<std::string>& warnings) {
  for (const auto& s : steps) read_step(c, s, a, warnings);
}

}  // namespace prenet::hf
