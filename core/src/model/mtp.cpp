// training.mtp_layers: multi-token prediction (DeepSeek-V3 technical report, Sec. 2.2) as Megatron-Core runs it
// (megatron/core/transformer/multi_token_prediction.py, MultiTokenPredictionBlock and MultiTokenPredictionLayer;
// megatron/core/models/gpt/gpt_model.py), built from layers of the existing kinds so that memory, timing, the
// parallel layouts and recomputation all see it.
#include "model/mtp.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "layers/layer_kind.hpp"
#include "prenet/error.hpp"
#include "prenet/json_util.hpp"

namespace prenet {
namespace {

const char* const kField = "training.mtp_layers";

bool is_norm(const Layer& layer) { return layer.type == LayerType::RmsNorm || layer.type == LayerType::LayerNorm; }

/// The layers of the main network a depth is built from.
struct Anchors {
  std::size_t embedding = 0;                   // the token embedding (reads the token ids)
  std::size_t block_first = 0, block_end = 0;  // the last decoder block
  std::size_t norm = 0, head = 0, loss = 0;    // the final norm, the language-model head, its loss
};

/// Finds the anchors of a language model: one cross-entropy loss over a dense head over a norm that reads the last
/// decoder block, and a token embedding as wide as the blocks; throws naming training.mtp_layers otherwise.
Anchors anchors_of(const Network& net) {
  Anchors a;
  if (net.input.kind != InputKind::Tokens) throw InputError(kField, "multi-token prediction needs a model of tokens");
  std::size_t losses = 0;
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    if (net.layers[l].type == LayerType::CrossEntropy) a.loss = l, ++losses;
  }
  if (losses != 1) {
    throw InputError(kField, "multi-token prediction needs one language-model loss; the network has " +
                                 std::to_string(losses) + " cross-entropy losses");
  }
  const Layer& loss = net.layers[a.loss];
  const int head = loss.inputs.empty() ? kNetworkInput : loss.inputs.front();
  if (head < 0 || net.layers[static_cast<std::size_t>(head)].type != LayerType::Dense) {
    throw InputError(kField, "multi-token prediction shares the model's head: the loss must read a dense head");
  }
  a.head = static_cast<std::size_t>(head);
  const Layer& head_layer = net.layers[a.head];
  const int norm = head_layer.inputs.empty() ? kNetworkInput : head_layer.inputs.front();
  if (norm < 0 || !is_norm(net.layers[static_cast<std::size_t>(norm)])) {
    throw InputError(kField, "multi-token prediction copies the final norm: the head \"" + printable(head_layer.name) +
                                 "\" must read a layernorm or rmsnorm");
  }
  a.norm = static_cast<std::size_t>(norm);
  // The last decoder block: the block the final norm reads.
  const std::vector<int> blocks = block_of_layers(net);
  const Layer& norm_layer = net.layers[a.norm];
  const int last = norm_layer.inputs.size() == 1 ? norm_layer.inputs.front() : kNetworkInput;
  if (last < 0 || blocks[static_cast<std::size_t>(last)] < 0) {
    throw InputError(kField,
                     "the network has no decoder block before its final norm for multi-token prediction "
                     "to copy");
  }
  const int block = blocks[static_cast<std::size_t>(last)];
  a.block_end = static_cast<std::size_t>(last) + 1;
  if (a.block_end < net.layers.size() && blocks[a.block_end] == block) {
    throw InputError(kField, "the final norm reads the middle of a block, not the output of the last one");
  }
  a.block_first = static_cast<std::size_t>(last);
  while (a.block_first > 0 && blocks[a.block_first - 1] == block) --a.block_first;
  // The token embedding: the first table indexed by the token ids.
  a.embedding = net.layers.size();
  for (std::size_t l = 0; l < net.layers.size() && a.embedding == net.layers.size(); ++l) {
    const Layer& layer = net.layers[l];
    if (layer.type == LayerType::Embedding && !layer.attrs.positional &&
        layer.inputs == std::vector<int>{kNetworkInput})
      a.embedding = l;
  }
  if (a.embedding == net.layers.size()) throw InputError(kField, "the network has no token embedding to share");
  const Shape& hidden = net.layers[static_cast<std::size_t>(last)].output_shape;
  if (hidden.size() != 2 || net.layers[a.embedding].output_shape != hidden) {
    throw InputError(kField, "the token embedding (" + to_string(net.layers[a.embedding].output_shape) +
                                 ") and the blocks' output (" + to_string(hidden) + ") differ in shape");
  }
  return a;
}

/// Checks that block [first, end) reads one tensor from outside it (the residual stream, which the copy reads from
/// eh_proj); throws when it reads none, the token ids, or more than one.
void check_block_input(const Network& net, std::size_t first, std::size_t end) {
  int outside = kNetworkInput;
  bool found = false;
  for (std::size_t l = first; l < end; ++l) {
    for (int in : net.layers[l].inputs) {
      if (in >= 0 && static_cast<std::size_t>(in) >= first) continue;
      if (in < 0 || (found && in != outside)) {
        throw InputError(kField,
                         "the last block reads more than its input stream from outside it; multi-token "
                         "prediction copies a block fed by one stream");
      }
      outside = in, found = true;
    }
  }
  if (!found) throw InputError(kField, "the last block reads nothing from outside it");
}

/// The block each depth runs, its inputs within itself and kNetworkInput for the depth's input stream: the model's
/// own (Network::mtp_block), else the last decoder block rebased; throws naming training.mtp_layers where the model
/// says it has none, or where its block does not keep the stream's `hidden` shape.
std::vector<Layer> depth_block(const Network& net, const Anchors& a, const Shape& hidden) {
  if (!net.mtp_unavailable.empty()) throw InputError(kField, net.mtp_unavailable);
  if (!net.mtp_block.empty()) {
    if (net.mtp_block.back().output_shape != hidden) {
      throw InputError(kField, "the model's multi-token-prediction block writes " +
                                   to_string(net.mtp_block.back().output_shape) + ", not the blocks' " +
                                   to_string(hidden));
    }
    for (const Layer& layer : net.mtp_block) {
      for (std::size_t i = 0; i < layer.inputs.size(); ++i) {
        if (layer.inputs[i] == kNetworkInput && layer.input_shapes[i] != hidden) {
          throw InputError(kField, "the model's multi-token-prediction block reads " +
                                       to_string(layer.input_shapes[i]) + ", not the blocks' " + to_string(hidden));
        }
      }
    }
    return net.mtp_block;
  }
  check_block_input(net, a.block_first, a.block_end);
  std::vector<Layer> block(net.layers.begin() + static_cast<std::ptrdiff_t>(a.block_first),
                           net.layers.begin() + static_cast<std::ptrdiff_t>(a.block_end));
  for (Layer& layer : block) {
    for (int& in : layer.inputs) {
      const bool inside = in >= 0 && static_cast<std::size_t>(in) >= a.block_first;
      in = inside ? in - static_cast<int>(a.block_first) : kNetworkInput;
    }
  }
  return block;
}

/// `layer` as a layer of depth `depth`'s module named `name`, reading `inputs` (index in the new list).
Layer module_layer(Layer layer, const std::string& name, std::vector<int> inputs, int depth) {
  layer.name = name;
  layer.inputs = std::move(inputs);
  layer.mtp_depth = depth;
  layer.needs_input_grad = true;  // everything upstream of a module trains (fine-tuning is refused beside it)
  return layer;
}

/// A new layer of kind `type` reading `inputs` of `shapes`, with its shape and parameters inferred by its kind.
Layer new_layer(LayerType type, const LayerAttrs& attrs, const std::string& name, std::vector<int> inputs,
                std::vector<Shape> shapes, int depth) {
  Layer layer;
  layer.type = type;
  layer.attrs = attrs;
  layer.input_shapes = std::move(shapes);
  kind_of(type).infer(layer, false, kField);
  return module_layer(std::move(layer), name, std::move(inputs), depth);
}

/// training.mtp_repeated_layer: the modules of depths 2 on run depth 1's weights, so their layers hold none (no
/// weights, gradients or optimizer states of their own) while their weight-gradient GEMMs still run (accumulating into
/// the shared weights), as the frozen-gradient path times them.
void share_repeated_modules(Network& net) {
  for (Layer& layer : net.layers) {
    if (layer.mtp_depth < 2 || layer.parameters == 0) continue;
    layer.parameters = 0;
    layer.trainable = false;
    layer.frozen_gradient = true;
  }
}

}  // namespace

void apply_mtp(Network& net, const TrainingConfig& training) {
  const std::int64_t depths = training.mtp_layers;
  if (training.mtp_repeated_layer && depths <= 0) {
    throw InputError("training.mtp_repeated_layer",
                     "shares the multi-token-prediction module: it needs training.mtp_layers");
  }
  if (depths <= 0) return;
  if (training.finetune.method != FinetuneMethod::Full) {
    throw InputError(kField,
                     "multi-token prediction beside a fine-tuning method that freezes weights is not "
                     "modelled; use training.finetune method full");
  }
  const Anchors a = anchors_of(net);
  const Shape hidden = net.layers[a.block_end - 1].output_shape;
  const std::vector<Layer> block = depth_block(net, a, hidden);
  const std::size_t per_depth = block.size() + 6;  // embedding, enorm, hnorm, concat, eh_proj, the block, final norm
  const std::size_t added = static_cast<std::size_t>(depths) * (per_depth + 2);
  if (net.layers.size() + added > static_cast<std::size_t>(Limits::kMaxLayers)) {
    throw InputError(kField, std::to_string(depths) + " depths take the network past " +
                                 std::to_string(Limits::kMaxLayers) + " layers");
  }
  const std::size_t moved = static_cast<std::size_t>(depths) * per_depth;  // the tail moves behind the modules
  auto placed = [&](int old) {
    return old >= 0 && static_cast<std::size_t>(old) >= a.block_end ? old + static_cast<int>(moved) : old;
  };
  const std::int64_t width = hidden.back();
  std::vector<Layer> out(net.layers.begin(), net.layers.begin() + static_cast<std::ptrdiff_t>(a.block_end));
  auto index = [&out] { return static_cast<int>(out.size()); };
  std::vector<int> outputs;                   // each depth's final norm
  int h = static_cast<int>(a.block_end) - 1;  // the hidden state the next depth reads (the main model's first)
  for (std::int64_t k = 0; k < depths; ++k) {
    const int depth = static_cast<int>(k) + 1;
    const std::string prefix = "mtp." + std::to_string(k) + ".";
    // The shared embedding's lookup of the tokens k + 1 ahead, outside the module's checkpoint (_get_embeddings).
    Layer embed = module_layer(net.layers[a.embedding], "mtp" + std::to_string(k) + "_embed", {kNetworkInput}, depth);
    embed.attrs.tied_to = net.layers[a.embedding].name;
    embed.parameters = 0;
    embed.needs_input_grad = false;
    const int e = index();
    out.push_back(embed);
    const int enorm = index();
    out.push_back(module_layer(net.layers[a.norm], prefix + "enorm", {e}, depth));
    out.back().input_shapes = {hidden};
    const int hnorm = index();
    out.push_back(module_layer(net.layers[a.norm], prefix + "hnorm", {h}, depth));
    out.back().input_shapes = {hidden};
    // torch.cat((enorm(embedding), hnorm(hidden)), -1), then eh_proj: 2h -> h without bias.
    LayerAttrs cat;
    cat.axis = -1;
    const int concat = index();
    out.push_back(new_layer(LayerType::Concat, cat, prefix + "concat", {enorm, hnorm}, {hidden, hidden}, depth));
    LayerAttrs proj;
    proj.units = width;
    proj.bias = false;
    proj.activation = "none";
    const int eh = index();
    out.push_back(new_layer(LayerType::Dense, proj, prefix + "eh_proj", {concat}, {out.back().output_shape}, depth));
    // The transformer layer (the model's MTP block, else a copy of the last decoder block) fed by eh_proj.
    const int first = index();
    for (const Layer& src : block) {
      std::vector<int> inputs;
      for (int in : src.inputs) inputs.push_back(in == kNetworkInput ? eh : first + in);
      const std::size_t dot = src.name.rfind('.');
      out.push_back(module_layer(src, prefix + src.name.substr(dot == std::string::npos ? 0 : dot + 1), inputs, depth));
    }
    h = index();
    out.push_back(module_layer(net.layers[a.norm], prefix + "final_layernorm", {h - 1}, depth));
    out.back().input_shapes = {hidden};
    outputs.push_back(h);
  }
  // The main network's tail (final norm, head, loss), behind the modules.
  for (std::size_t l = a.block_end; l < net.layers.size(); ++l) {
    Layer layer = net.layers[l];
    for (int& in : layer.inputs) in = placed(in);
    out.push_back(std::move(layer));
  }
  // Each depth's logits through the shared head (tied: no parameters of its own; Megatron's output layer has no
  // bias) and its cross-entropy; the loss's scaling (mtp_loss_scaling_factor / depths) changes no work.
  const Layer& head = net.layers[a.head];
  for (std::int64_t k = 0; k < depths; ++k) {
    Layer logits = module_layer(head, "mtp" + std::to_string(k) + "_head", {outputs[static_cast<std::size_t>(k)]}, 0);
    logits.attrs.tied_to = head.attrs.tied_to.empty() ? head.name : head.attrs.tied_to;
    logits.attrs.bias = false;
    logits.parameters = 0;
    logits.input_shapes = {hidden};
    const int at = index();
    out.push_back(logits);
    out.push_back(module_layer(net.layers[a.loss], "mtp" + std::to_string(k) + "_loss", {at}, 0));
    out.back().input_shapes = {logits.output_shape};
  }
  net.layers = std::move(out);
  if (training.mtp_repeated_layer) share_repeated_modules(net);
  // The Hugging Face reader notes that transformers builds no num_nextn_predict_layers (model/hf/decoder_hooks.cpp);
  // here they are built.
  std::vector<std::string>& notes = net.warnings;
  notes.erase(std::remove_if(notes.begin(), notes.end(),
                             [](const std::string& w) { return w.rfind("num_nextn_predict_layers ", 0) == 0; }),
              notes.end());
}

}  // namespace prenet
