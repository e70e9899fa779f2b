#pragma once
// models/REPORT.md: PreNeT-style ablation tables, leave-one-GPU-out results, chosen models, discussion.
#include <string>
#include <vector>

#include "trainer/evaluation.hpp"

namespace trainer {

struct ExportedModel {
  std::string dataset;
  std::string file;
  std::string kind;
  std::size_t bytes = 0;
};

/// Renders the report (deterministic: no dates or timings, so reruns compare equal).
std::string render_report(const std::vector<Experiment>& experiments, const std::vector<ExportedModel>& exported,
                          const std::string& command, const std::string& data_hash, bool quick);

/// Whether a dataset meets issue 3's bar on every held-out GPU: chosen model MdAPE <= 15% and its RMSE
/// below the same model with baseline features. `why` explains a failure.
bool meets_transfer_bar(const Experiment& e, std::string& why);

}  // namespace trainer
