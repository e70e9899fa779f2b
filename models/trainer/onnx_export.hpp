#pragma once
// Building ONNX graphs (libonnx's protobuf classes) for the trained models.
#include <string>

#include <Eigen/Core>

namespace onnx {
class GraphProto;
}

namespace trainer {

class Model;

/// Appends `output = input · weightsᵀ + bias` (weights [out, in]) as a Gemm with float initializers.
void add_gemm(onnx::GraphProto& graph, const std::string& input, const std::string& output,
              const Eigen::MatrixXd& weights, const Eigen::VectorXd& bias, const std::string& prefix);

/// Serialises a model with one float input "features" [N, n_features] and one output "y" [N, 1].
/// `doc` becomes the model's doc_string. Returns the bytes written.
std::size_t export_onnx(const Model& model, int n_features, const std::string& path, const std::string& doc);

}  // namespace trainer
