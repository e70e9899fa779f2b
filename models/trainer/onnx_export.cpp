#include "trainer/onnx_export.hpp"

#include <fstream>

#include <onnx/onnx_pb.h>

#include "trainer/model.hpp"
#include "trainer/table.hpp"

namespace trainer {

void add_gemm(onnx::GraphProto& graph, const std::string& input, const std::string& output,
              const Eigen::MatrixXd& weights, const Eigen::VectorXd& bias, const std::string& prefix) {
  onnx::TensorProto* w = graph.add_initializer();
  w->set_name(prefix + "_weight");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(weights.rows());
  w->add_dims(weights.cols());
  for (Eigen::Index r = 0; r < weights.rows(); ++r) {
    for (Eigen::Index c = 0; c < weights.cols(); ++c) w->add_float_data(static_cast<float>(weights(r, c)));
  }
  onnx::TensorProto* b = graph.add_initializer();
  b->set_name(prefix + "_bias");
  b->set_data_type(onnx::TensorProto::FLOAT);
  b->add_dims(bias.size());
  for (Eigen::Index i = 0; i < bias.size(); ++i) b->add_float_data(static_cast<float>(bias(i)));

  onnx::NodeProto* node = graph.add_node();
  node->set_op_type("Gemm");
  node->set_name(prefix + "_gemm");
  node->add_input(input);
  node->add_input(prefix + "_weight");
  node->add_input(prefix + "_bias");
  node->add_output(output);
  onnx::AttributeProto* trans_b = node->add_attribute();
  trans_b->set_name("transB");
  trans_b->set_type(onnx::AttributeProto::INT);
  trans_b->set_i(1);
}

namespace {

void set_float_matrix_type(onnx::ValueInfoProto* value, const std::string& name, std::int64_t cols) {
  value->set_name(name);
  auto* tensor = value->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  auto* shape = tensor->mutable_shape();
  shape->add_dim()->set_dim_param("N");
  shape->add_dim()->set_dim_value(cols);
}

}  // namespace

std::size_t export_onnx(const Model& model, int n_features, const std::string& path, const std::string& doc) {
  onnx::ModelProto proto;
  proto.set_ir_version(8);
  proto.set_producer_name("prenet-trainer");
  proto.set_producer_version("1");
  proto.set_doc_string(doc);
  auto* opset = proto.add_opset_import();
  opset->set_domain("");
  opset->set_version(13);
  if (model.needs_ml_domain()) {
    auto* ml = proto.add_opset_import();
    ml->set_domain("ai.onnx.ml");
    ml->set_version(3);
  }
  onnx::GraphProto* graph = proto.mutable_graph();
  graph->set_name(model.kind());
  set_float_matrix_type(graph->add_input(), "features", n_features);
  set_float_matrix_type(graph->add_output(), "y", 1);
  model.to_onnx(*graph, "features", "y");

  std::string bytes;
  if (!proto.SerializeToString(&bytes)) throw DataError(path + ": cannot serialise the ONNX model");
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw DataError(path + ": cannot write");
  return bytes.size();
}

}  // namespace trainer
