#include "response/training_echo.hpp"

#include "request/options.hpp"

namespace prenet {

Json training_echo(const TrainingConfig& tr, const InputSpec& input, EchoFor response) {
  Json echo = options_echo(tr);
  if (response == EchoFor::Prediction) {
    echo["dataset_size"] = tr.dataset_size > 0 ? tr.dataset_size : tr.batch_size * 100;
    echo["epochs"] = tr.epochs;
    echo["steps_per_epoch"] = tr.steps_per_epoch();
  }
  if (!tr.precision_from.empty()) echo["precision_from"] = tr.precision_from;
  if (input.kind == InputKind::Tokens || input.kind == InputKind::Sequence) echo["seq_len"] = input.seq_len;
  if (!tr.seq_len_from.empty()) echo["seq_len_from"] = tr.seq_len_from;
  if (response == EchoFor::Prediction && input.kind == InputKind::Image) echo["image_size"] = input.image_size;
  return echo;
}

}  // namespace prenet
