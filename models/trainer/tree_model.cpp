#include <stdexcept>

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>
#include <xgboost/c_api.h>

#include "trainer/model.hpp"
#include "trainer/table.hpp"

namespace trainer {
namespace {

void check(int status, const char* what) {
  if (status != 0) throw DataError(std::string("XGBoost ") + what + ": " + XGBGetLastError());
}

/// Owns an XGBoost DMatrix built from row-major features (as float32, like the exported model sees them).
class DMatrix {
 public:
  DMatrix(const Matrix& x, const Vector* y) {
    std::vector<float> data(static_cast<std::size_t>(x.size()));
    for (Eigen::Index i = 0; i < x.size(); ++i) data[static_cast<std::size_t>(i)] = static_cast<float>(x.data()[i]);
    check(XGDMatrixCreateFromMat(data.data(), static_cast<bst_ulong>(x.rows()), static_cast<bst_ulong>(x.cols()),
                                 std::numeric_limits<float>::quiet_NaN(), &handle_),
          "DMatrix");
    if (y) {
      std::vector<float> labels(static_cast<std::size_t>(y->size()));
      for (Eigen::Index i = 0; i < y->size(); ++i) labels[static_cast<std::size_t>(i)] = static_cast<float>((*y)(i));
      check(XGDMatrixSetFloatInfo(handle_, "label", labels.data(), static_cast<bst_ulong>(labels.size())), "labels");
    }
  }
  ~DMatrix() { XGDMatrixFree(handle_); }
  DMatrix(const DMatrix&) = delete;
  DMatrix& operator=(const DMatrix&) = delete;
  DMatrixHandle get() const { return handle_; }

 private:
  DMatrixHandle handle_ = nullptr;
};

/// Gradient-boosted trees or a random forest (XGBoost), exported as ai.onnx.ml TreeEnsembleRegressor.
class TreeModel : public Model {
 public:
  TreeModel(bool forest, const ModelOptions& o) : forest_(forest), options_(o) {}
  ~TreeModel() override {
    if (booster_) XGBoosterFree(booster_);
  }
  std::string kind() const override { return forest_ ? "random_forest" : "gbdt"; }
  bool needs_ml_domain() const override { return true; }

  void fit(const Matrix& x, const Vector& y, const Matrix&, const Vector&) override {
    DMatrix train(x, &y);
    DMatrixHandle handles[] = {train.get()};
    if (booster_) XGBoosterFree(booster_);
    check(XGBoosterCreate(handles, 1, &booster_), "create");
    auto set = [&](const char* k, const std::string& v) { check(XGBoosterSetParam(booster_, k, v.c_str()), k); };
    set("tree_method", "hist");
    set("nthread", std::to_string(options_.threads));
    set("seed", std::to_string(options_.seed));
    set("base_score", std::to_string(y.mean()));
    set("objective", "reg:squarederror");
    int rounds = 1;
    set("max_bin", options_.quick ? "32" : "128");
    // Sizes are bounded because the page downloads every model: at most ~24 x 2^9 or 100 x 2^6 leaves.
    set("min_child_weight", "4");
    if (forest_) {
      set("num_parallel_tree", options_.quick ? "10" : "24");
      set("eta", "1");
      set("subsample", "0.632");
      set("colsample_bynode", "0.6");
      set("max_depth", "9");
      set("lambda", "0");
    } else {
      rounds = options_.quick ? 30 : 100;
      set("eta", options_.quick ? "0.2" : "0.12");
      set("max_depth", "6");
      set("subsample", "0.8");
      set("colsample_bytree", "0.9");
    }
    for (int i = 0; i < rounds; ++i) check(XGBoosterUpdateOneIter(booster_, i, train.get()), "train");
  }

  Vector predict(const Matrix& x) const override {
    DMatrix data(x, nullptr);
    bst_ulong len = 0;
    const float* out = nullptr;
    check(XGBoosterPredict(booster_, data.get(), 0, 0, 0, &len, &out), "predict");
    Vector y(static_cast<Eigen::Index>(len));
    for (bst_ulong i = 0; i < len; ++i) y(static_cast<Eigen::Index>(i)) = out[i];
    return y;
  }

  void to_onnx(onnx::GraphProto& graph, const std::string& input, const std::string& output) const override {
    bst_ulong len = 0;
    const char* raw = nullptr;
    check(XGBoosterSaveModelToBuffer(booster_, R"({"format": "json"})", &len, &raw), "save");
    auto model = nlohmann::json::parse(std::string(raw, len));
    const auto& learner = model.at("learner");
    float base = std::stof(learner.at("learner_model_param").at("base_score").get<std::string>());
    const auto& trees = learner.at("gradient_booster").at("model").at("trees");

    onnx::NodeProto* node = graph.add_node();
    node->set_op_type("TreeEnsembleRegressor");
    node->set_domain("ai.onnx.ml");
    node->set_name(kind());
    node->add_input(input);
    node->add_output(output);
    auto ints = [&](const char* name) {
      auto* a = node->add_attribute();
      a->set_name(name);
      a->set_type(onnx::AttributeProto::INTS);
      return a;
    };
    auto floats = [&](const char* name) {
      auto* a = node->add_attribute();
      a->set_name(name);
      a->set_type(onnx::AttributeProto::FLOATS);
      return a;
    };
    auto* tree_ids = ints("nodes_treeids");
    auto* node_ids = ints("nodes_nodeids");
    auto* feature_ids = ints("nodes_featureids");
    auto* values = floats("nodes_values");
    auto* true_ids = ints("nodes_truenodeids");
    auto* false_ids = ints("nodes_falsenodeids");
    auto* missing = ints("nodes_missing_value_tracks_true");
    auto* modes = node->add_attribute();
    modes->set_name("nodes_modes");
    modes->set_type(onnx::AttributeProto::STRINGS);
    auto* target_tree = ints("target_treeids");
    auto* target_node = ints("target_nodeids");
    auto* target_ids = ints("target_ids");
    auto* target_weights = floats("target_weights");
    for (std::size_t t = 0; t < trees.size(); ++t) {
      const auto& tree = trees[t];
      const auto& left = tree.at("left_children");
      const auto& right = tree.at("right_children");
      const auto& split = tree.at("split_indices");
      const auto& cond = tree.at("split_conditions");
      const auto& default_left = tree.at("default_left");
      for (std::size_t n = 0; n < left.size(); ++n) {
        tree_ids->add_ints(static_cast<std::int64_t>(t));
        node_ids->add_ints(static_cast<std::int64_t>(n));
        bool leaf = left[n].get<int>() == -1;
        feature_ids->add_ints(leaf ? 0 : split[n].get<std::int64_t>());
        values->add_floats(leaf ? 0.0f : cond[n].get<float>());
        true_ids->add_ints(leaf ? 0 : left[n].get<std::int64_t>());
        false_ids->add_ints(leaf ? 0 : right[n].get<std::int64_t>());
        missing->add_ints(leaf ? 0 : default_left[n].get<int>());
        modes->add_strings(leaf ? "LEAF" : "BRANCH_LT");  // XGBoost goes left when x < threshold
        if (leaf) {
          target_tree->add_ints(static_cast<std::int64_t>(t));
          target_node->add_ints(static_cast<std::int64_t>(n));
          target_ids->add_ints(0);
          target_weights->add_floats(cond[n].get<float>());
        }
      }
    }
    auto* n_targets = node->add_attribute();
    n_targets->set_name("n_targets");
    n_targets->set_type(onnx::AttributeProto::INT);
    n_targets->set_i(1);
    floats("base_values")->add_floats(base);
    auto* aggregate = node->add_attribute();
    aggregate->set_name("aggregate_function");
    aggregate->set_type(onnx::AttributeProto::STRING);
    aggregate->set_s("SUM");
  }

 private:
  bool forest_;
  ModelOptions options_;
  BoosterHandle booster_ = nullptr;
};

}  // namespace

std::unique_ptr<Model> make_linear_model();
std::unique_ptr<Model> make_mlp_model(const ModelOptions& o);

const std::vector<std::string>& model_kinds() {
  static const std::vector<std::string> kinds = {"linear", "random_forest", "gbdt", "mlp", "mono_mlp"};
  return kinds;
}

std::unique_ptr<Model> make_model(const std::string& kind, const ModelOptions& options) {
  if (kind == "linear") return make_linear_model();
  if (kind == "mlp") {
    ModelOptions plain = options;
    plain.monotone.clear();
    return make_mlp_model(plain);
  }
  if (kind == "mono_mlp") {
    if (options.monotone.empty()) throw std::invalid_argument("mono_mlp needs the per-feature monotone flags");
    return make_mlp_model(options);
  }
  if (kind == "gbdt") return std::make_unique<TreeModel>(false, options);
  if (kind == "random_forest") return std::make_unique<TreeModel>(true, options);
  throw std::invalid_argument("unknown model kind \"" + kind + "\"");
}

}  // namespace trainer
