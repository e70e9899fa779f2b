#pragma once
// A prediction response as text (docs/API.md): the document, each accelerator's result and, with
// per-layer results on, the layer columns and table spliced in.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "prenet/roofline.hpp"
#include "response/prepared.hpp"

namespace prenet {

/// The response for `p` timed by `main`, accelerator h by `predictors[h]` ("roofline" or "learned"), with
/// the 80% band of those that have one. The response's own `predictor` is "learned" if any result is.
std::string assemble(const Prepared& p, const std::vector<Timing>& main, const std::vector<const char*>& predictors,
                     const std::vector<std::optional<std::array<double, 2>>>& intervals);

}  // namespace prenet
