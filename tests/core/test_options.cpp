// The training options table (core/src/request/options.cpp): parsing, the echo and the catalogue come
// from it, and training.memory_format adds cuDNN's layout transposes for NCHW under 16-bit training only.
#include <catch2/catch.hpp>
#include <string>

#include "prenet/api.hpp"
#include "prenet/catalog.hpp"
#include "prenet/parallel.hpp"
#include "prenet/request.hpp"
#include "request/options.hpp"

using prenet::Json;

namespace {

Json predict(const Json& request) { return Json::parse(prenet::predict_json(request.dump())); }

/// ResNet-50 on an A100 at `precision`, with `memory_format` when not empty.
Json resnet50(const std::string& precision, const std::string& memory_format) {
  Json training = {{"batch_size", 128}, {"precision", precision}};
  if (!memory_format.empty()) training["memory_format"] = memory_format;
  return predict({{"model", {{"preset", "resnet50"}}}, {"training", training}, {"hardware", {"a100-sxm4-80gb"}}});
}

double step_ms(const Json& response) { return response.at("results").at(0).at("step_ms").get<double>(); }

}  // namespace

TEST_CASE("every option's default is what an empty training object parses to", "[options]") {
  const prenet::TrainingConfig parsed = prenet::parse_training_options(Json::object(), "training");
  // A section's rows ("finetune.rank") take their defaults once the section is there, empty.
  const prenet::TrainingConfig sections =
      prenet::parse_training_options(Json::parse(R"({"finetune": {}})"), "training");
  for (const auto& o : prenet::training_options()) {
    INFO(o.key);
    const bool in_section = std::string(o.key).find('.') != std::string::npos;
    std::optional<prenet::OptionValue> v = o.read(in_section ? sections : parsed);
    REQUIRE(v.has_value() == !o.fallback.is_null());
    if (!v) continue;
    switch (o.kind) {
      case prenet::OptionKind::Integer: CHECK(Json(v->integer) == o.fallback); break;
      case prenet::OptionKind::Number: CHECK(Json(v->number) == o.fallback); break;
      case prenet::OptionKind::Choice: CHECK(Json(o.values.at(v->choice)) == o.fallback); break;
      case prenet::OptionKind::Boolean: CHECK(Json(v->boolean) == o.fallback); break;
      case prenet::OptionKind::Names: CHECK(Json(v->names) == o.fallback); break;
      case prenet::OptionKind::Text: CHECK(Json(v->text) == o.fallback); break;
    }
  }
}

TEST_CASE("the parallel table's defaults are what an empty parallel section parses to", "[options][parallel]") {
  const prenet::ParallelConfig c = prenet::parse_parallel(Json::object(), 32);
  CHECK(Json(c.tensor) == prenet::parallel_option("tensor").fallback);
  CHECK(Json(c.pipeline) == prenet::parallel_option("pipeline").fallback);
  CHECK(Json(c.zero_stage) == prenet::parallel_option("zero_stage").fallback);
  CHECK(Json(c.sequence_parallel) == prenet::parallel_option("sequence_parallel").fallback);
  CHECK(Json(prenet::to_string(c.recompute)) == prenet::parallel_option("recompute").fallback);
  // The row lists the recomputation modes in the enum's order.
  const auto& modes = prenet::parallel_option("recompute").values;
  for (std::size_t i = 0; i < modes.size(); ++i) {
    const prenet::ParallelConfig r = prenet::parse_parallel({{"recompute", modes[i]}}, 32);
    CHECK(std::string(prenet::to_string(r.recompute)) == modes[i]);
  }
  const prenet::ParallelConfig links =
      prenet::parse_parallel({{"intra_node", {{"bandwidth_gbs", 100}}}, {"inter_node", {{"latency_us", 7}}}}, 32);
  CHECK(links.intra_node.bandwidth_gbs == 100.0);
  CHECK(links.inter_node.latency_us == 7.0);
  CHECK_THROWS_WITH(prenet::parse_parallel({{"intra_node", {{"bandwidth_gbs", 0}}}}, 32),
                    Catch::Contains("parallel.intra_node.bandwidth_gbs"));
}

TEST_CASE("the catalogue publishes the parallel table", "[options][parallel]") {
  Json catalog = prenet::catalog_document();
  const Json& rows = catalog.at("parallel_options");
  REQUIRE(rows.size() == prenet::parallel_options().size());
  CHECK(rows.at(2).at("field") == "parallel.tensor");
  CHECK(rows.at(2).at("link") == Json({"tensor", "tp"}));
  CHECK(rows.at(2).at("flag") == "--tensor");
  const Json& sp = rows.at(9);
  CHECK(sp.at("key") == "sequence_parallel");
  CHECK(sp.at("kind") == "boolean");
  CHECK(sp.at("flag_value").is_null());
  CHECK(rows.at(7).at("flag").is_null());  // fsdp: no flag
  CHECK(rows.at(14).at("field") == "parallel.inter_node.latency_us");  // issue 18's rows follow it
  // Rows of issue 18's fields follow the links' rows.
  auto index_of = [&rows](const char* field) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (rows.at(i).at("field") == field) return i;
    }
    return rows.size();
  };
  CHECK(index_of("parallel.inter_node.latency_us") < index_of("parallel.context"));
  CHECK(index_of("parallel.context") < rows.size());
  CHECK(rows.at(index_of("parallel.context")).at("link") == Json({"context", "cp"}));
}

TEST_CASE("choice options map names to the enums both ways", "[options]") {
  Json training = {{"precision", "bf16"},  {"optimizer", "rmsprop"}, {"optimizer_impl", "foreach"},
                   {"attention", "flash"}, {"kernels", "megatron"},  {"memory_format", "nchw"}};
  const prenet::TrainingConfig t = prenet::parse_training_options(training, "training");
  CHECK(t.precision == prenet::Precision::BF16);
  CHECK(t.optimizer == prenet::Optimizer::RMSProp);
  CHECK(t.optimizer_impl == prenet::OptimizerImpl::Foreach);
  CHECK(t.attention == prenet::AttentionKernel::Flash);
  CHECK(t.kernels == prenet::KernelSet::Megatron);
  CHECK(t.memory_format == prenet::MemoryFormat::NCHW);
  Json echo = prenet::options_echo(t);
  for (const auto& [key, value] : training.items()) CHECK(echo.at(key) == value);
  CHECK(!prenet::options_echo(prenet::TrainingConfig{}).contains("memory_format"));
}

TEST_CASE("the catalogue publishes the options, model forms and limits", "[options]") {
  Json catalog = prenet::catalog_document();
  REQUIRE(catalog.at("options").size() == prenet::training_options().size());
  const Json& format = catalog.at("options").at(8);
  CHECK(format.at("field") == "training.memory_format");
  CHECK(format.at("values") == Json({"channels_last", "nchw"}));
  CHECK(format.at("flag") == "--memory-format");
  CHECK(format.at("link") == Json({"memory_format"}));
  CHECK(format.at("default").is_null());
  CHECK(catalog.at("limits").at("request_bytes") == 16 * 1024 * 1024);
  CHECK(catalog.at("model_forms").size() == 6);
  CHECK(std::string(prenet::model_form_of({{"architecture", Json::object()}})) == "architecture");
  CHECK(std::string(prenet::model_form_of({{"keras", Json::object()}})) == "keras");
  CHECK(std::string(prenet::model_form_of({{"layers", Json::array()}})) == "layers");
}

TEST_CASE("memory_format: NCHW under bf16 is slower, FP32 and absent unchanged", "[options][memory_format]") {
  const Json absent = resnet50("bf16", "");
  const Json channels_last = resnet50("bf16", "channels_last");
  const Json nchw = resnet50("bf16", "nchw");
  CHECK(step_ms(channels_last) == step_ms(absent));
  CHECK(step_ms(nchw) > step_ms(channels_last) * 1.15);  // public runs: about 1.3x
  CHECK(step_ms(nchw) < step_ms(channels_last) * 1.5);
  CHECK(step_ms(resnet50("fp32", "nchw")) == step_ms(resnet50("fp32", "")));
  CHECK(step_ms(resnet50("tf32", "nchw")) == step_ms(resnet50("tf32", "channels_last")));
  // The echo carries the format only when the request gives it.
  CHECK(nchw.at("training").at("memory_format") == "nchw");
  CHECK(channels_last.at("training").at("memory_format") == "channels_last");
  CHECK(!absent.at("training").contains("memory_format"));
}

TEST_CASE("memory_format: a bad value names the field; a network without convolutions warns", "[options]") {
  Json bad = predict({{"model", {{"preset", "resnet50"}}}, {"training", {{"memory_format", "nhwc"}}}});
  CHECK(bad.at("error").at("field") == "training.memory_format");
  CHECK(bad.at("error").at("message") == "training.memory_format: expected one of channels_last, nchw, got \"nhwc\"");
  Json bert = predict({{"model", {{"preset", "bert-base"}}}, {"training", {{"memory_format", "nchw"}}}});
  REQUIRE(bert.contains("warnings"));
  CHECK(bert.at("warnings").dump().find("training.memory_format ignored") != std::string::npos);
}

TEST_CASE("options_echo is the response's training echo less its derived fields", "[options]") {
  // What api.cpp and plan.cpp echo today, for the lead to replace with options_echo at the merge.
  for (const Json& training : {Json::object(), Json{{"batch_size", 8}, {"precision", "fp16"}, {"optimizer", "sgd"}},
                               Json{{"attention", "flash"}, {"kernels", "megatron"}, {"optimizer_impl", "foreach"}}}) {
    Json request = {{"model", {{"preset", "gpt2"}}}, {"training", training}, {"hardware", {"h100-sxm"}}};
    Json echo = predict(request).at("training");
    for (const char* derived : {"dataset_size", "epochs", "steps_per_epoch", "seq_len", "image_size"})
      echo.erase(derived);
    CHECK(echo == prenet::options_echo(prenet::parse_request(request).training));
  }
}
