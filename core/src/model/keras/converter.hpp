#pragma once
// Keras model document → layer list: the converter walks the layers in order, keeps each layer's output
// tensor, and emits layer-list layers through a LayerListBuilder. layers*.cpp hold one converter per Keras
// layer class and the class-name table, so adding a class is one row and one function.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "prenet/json_util.hpp"
#include "prenet/layer_list.hpp"
#include "prenet/network.hpp"

namespace prenet::keras {

/// A Keras tensor as the layer list holds it: its producer and whether Keras sees it as [H, W, C]
/// while the layer list holds [C, H, W].
struct Tensor {
  std::string name;  // layer-list name of the producer ("input" for the network input)
  bool image = false;
};

/// One Keras layer being converted: its class, config, layer-list name, fields and input tensors.
struct Call {
  const std::string& cls;
  const Json& cfg;
  const std::string& name;
  const std::string& lpath;  // the layer's field ("model.keras.config.layers[3]")
  std::string cpath;         // its config's field
  const std::vector<Tensor>& inputs;

  /// The first (for most classes the only) input.
  const Tensor& in() const { return inputs.front(); }
};

/// Where the input shape was found: its per-sample dims, the field holding them and the first layer's class.
struct InputShape {
  std::vector<std::int64_t> dims;
  std::string field;
  std::string first_cls;
};

/// The classes named in the "unsupported class" error (layers.cpp, beside the table).
const char* supported_classes();

/// Converts one model document (see keras_to_network).
class Converter {
 public:
  Converter(const std::string& path, const InputOverrides& overrides) : path_(path), overrides_(overrides) {}

  /// The network of the Sequential or Functional model `doc`.
  Network run(const Json& doc);

 private:
  using LayerConverter = Tensor (Converter::*)(const Call&);
  /// How one Keras layer class is converted, and whether it takes exactly one input.
  struct ClassRow {
    LayerConverter convert;
    bool single_input;
  };
  /// Keras class name → its row (layers.cpp).
  static const std::map<std::string, ClassRow>& class_table();

  // ---- the document and its input (converter.cpp)
  const Json& model_config(const Json& doc, bool* sequential);
  void convert_layer(const Json& layer, std::size_t i, bool sequential, Tensor& previous);
  InputSpec find_input(const Json& layers, bool sequential);
  InputShape locate_input(const Json& layers, bool sequential) const;
  InputSpec input_spec(const InputShape& shape) const;
  void warn_ignored_overrides(const InputSpec& spec);
  std::vector<Tensor> inbound(const Json& layer, const std::string& lpath);

  // ---- emission (converter.cpp)
  const Shape& shape_of(const Tensor& t) const;
  Tensor emit(Json spec, const std::string& name, const std::string& lpath, const std::vector<Tensor>& inputs,
              bool image);
  Tensor one(const Json& spec, const std::string& name, const std::string& lpath, const Tensor& in, bool image);
  Tensor maybe_softmax(Tensor t, bool softmax, const std::string& name, const std::string& lpath);
  void require_image(const Tensor& t, const std::string& lpath, const std::string& cls);
  void require_sequence(const Tensor& t, const std::string& lpath, const std::string& cls);
  Tensor seq_to_image(const Tensor& t, const std::string& name, const std::string& lpath);
  Tensor image_to_seq(const Tensor& t, const std::string& name, const std::string& lpath);
  Tensor convert(const std::string& cls, const Json& cfg, const std::string& name, const std::string& lpath,
                 const std::vector<Tensor>& inputs);

  // ---- convolution and pooling (layers_spatial.cpp)
  Tensor conv2d(const Call& c);
  Tensor conv1d(const Call& c);
  Tensor pool2d(const Call& c);
  Tensor pool1d(const Call& c);
  Tensor global_pool2d(const Call& c);
  Tensor global_pool1d(const Call& c);

  // ---- every other class (layers.cpp)
  Tensor dense(const Call& c);
  Tensor batchnorm(const Call& c);
  Tensor layernorm(const Call& c);
  Tensor rmsnorm(const Call& c);
  Tensor embedding(const Call& c);
  Tensor position_embedding(const Call& c);
  Tensor rnn(const Call& c);
  Tensor bidirectional(const Call& c);
  Tensor recurrent(const std::string& cls, const Json& cfg, const std::string& cpath, const Call& c,
                   bool is_bidirectional);
  Tensor multi_head_attention(const Call& c);
  Tensor group_query_attention(const Call& c);
  Tensor attention_of(Json spec, const Call& c);
  Tensor dropout(const Call& c);
  Tensor flatten(const Call& c);
  Tensor reshape(const Call& c);
  Tensor activation(const Call& c);
  Tensor merge(const Call& c);
  Tensor concatenate(const Call& c);

  std::string path_, layers_path_;
  InputOverrides overrides_;
  std::optional<LayerListBuilder> builder_;
  std::map<std::string, Tensor> produced_;
  std::vector<std::string> warnings_;
  bool net_input_image_ = false;
};

}  // namespace prenet::keras
