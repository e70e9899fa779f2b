#!/usr/bin/env python3
"""Writes the preset zoo, core/data/presets/*.json, from the architectures as published.

Run from the repository root: `python3 core/tools/gen_presets.py`. Standard library only. The JSON files are
committed; this script is how they were written and the place to change them. Convolutional networks follow
torchvision's definitions (the counts quoted are torchvision's); transformers are Hugging Face config.json
files, which the core expands itself (core/src/model/hf/hf_config.cpp). tests/core/test_presets.cpp checks every
count against `published_parameters` and the work per token or image against the standard formulas.
"""
import json
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "presets")


def write(pid, name, family, source, published, inp, model):
    doc = {"id": pid, "name": name, "family": family, "source": source, "published_parameters": published,
           "input": inp, "model": model}
    with open(os.path.join(OUT, pid + ".json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def image(size=224):
    return {"kind": "image", "channels": 3, "image_size": size}


def tokens(seq):
    return {"kind": "tokens", "seq_len": seq}


# ---------------------------------------------------------------- convolutional networks

def conv(name, filters, k, stride=1, padding=0, bias=False, groups=1, inputs=None, activation=None):
    layer = {"type": "conv2d", "name": name, "filters": filters, "kernel_size": k}
    if stride != 1:
        layer["stride"] = stride
    if padding != 0:
        layer["padding"] = padding
    if groups != 1:
        layer["groups"] = groups
    if not bias:
        layer["bias"] = False
    if activation:
        layer["activation"] = activation
    if inputs:
        layer["inputs"] = inputs
    return layer


def bn(name, inputs=None):
    layer = {"type": "batchnorm", "name": name}
    if inputs:
        layer["inputs"] = inputs
    return layer


def act(name, fn="relu", inputs=None):
    layer = {"type": "activation", "name": name, "function": fn}
    if inputs:
        layer["inputs"] = inputs
    return layer


def classifier(features_name, units=1000, dropout=0.0, pool=True):
    layers = []
    if pool:
        layers.append({"type": "global_avg_pool", "name": "avgpool", "inputs": [features_name]})
    if dropout > 0:
        layers.append({"type": "dropout", "name": "dropout", "rate": dropout})
    layers.append({"type": "dense", "name": "fc", "units": units})
    layers.append({"type": "cross_entropy", "name": "loss"})
    return layers


VGG = {
    "vgg11": ([1, 1, 2, 2, 2], "A", 132863336, 7.61),
    "vgg13": ([2, 2, 2, 2, 2], "B", 133047848, 11.31),
    "vgg16": ([2, 2, 3, 3, 3], "D", 138357544, 15.47),
    "vgg19": ([2, 2, 4, 4, 4], "E", 143667240, 19.63),
}


def vgg(pid):
    counts, letter, published, gmacs = VGG[pid]
    layers = []
    for i, (count, filters) in enumerate(zip(counts, [64, 128, 256, 512, 512])):
        layers.append({"type": "repeat", "name": "block%d" % (i + 1), "count": count, "layers": [
            {"type": "conv2d", "filters": filters, "kernel_size": 3, "padding": "same", "activation": "relu",
             "name": "conv"}]})
        layers.append({"type": "max_pool2d", "name": "pool%d" % (i + 1), "pool_size": 2})
    layers += [
        {"type": "flatten", "name": "flatten"},
        {"type": "dense", "name": "fc1", "units": 4096, "activation": "relu"},
        {"type": "dropout", "name": "drop1", "rate": 0.5},
        {"type": "dense", "name": "fc2", "units": 4096, "activation": "relu"},
        {"type": "dropout", "name": "drop2", "rate": 0.5},
        {"type": "dense", "name": "fc3", "units": 1000},
        {"type": "cross_entropy", "name": "loss"},
    ]
    depth = pid[3:]
    write(pid, "VGG-%s" % depth, "cnn",
          "Simonyan & Zisserman 2015 (arXiv 1409.1556), configuration %s; torchvision %s: %s parameters, "
          "%.2f GMACs per 224x224 image" % (letter, pid, format(published, ","), gmacs),
          published, image(), {"layers": layers})


RESNET = {
    "resnet18": ("basic", [2, 2, 2, 2], 11689512, 1.81),
    "resnet34": ("basic", [3, 4, 6, 3], 21797672, 3.66),
    "resnet50": ("bottleneck", [3, 4, 6, 3], 25557032, 4.09),
    "resnet101": ("bottleneck", [3, 4, 23, 3], 44549160, 7.80),
    "resnet152": ("bottleneck", [3, 8, 36, 3], 60192808, 11.51),
}


def resnet_block(kind, width, stride, downsample):
    out = width * (4 if kind == "bottleneck" else 1)
    if kind == "bottleneck":
        body = [
            conv("conv1", width, 1, inputs=["stream"]), bn("bn1"), act("relu1"),
            conv("conv2", width, 3, stride=stride, padding=1), bn("bn2"), act("relu2"),
            conv("conv3", out, 1), bn("bn3"),
        ]
        last = "bn3"
    else:
        body = [
            conv("conv1", width, 3, stride=stride, padding=1, inputs=["stream"]), bn("bn1"), act("relu1"),
            conv("conv2", width, 3, padding=1), bn("bn2"),
        ]
        last = "bn2"
    if downsample:
        body += [conv("downsample", out, 1, stride=stride, inputs=["stream"]), bn("downsample_bn")]
        body.append({"type": "add", "name": "residual", "inputs": ["downsample_bn", last]})
    else:
        body.append({"type": "add", "name": "residual", "inputs": ["stream", last]})
    body.append(act("stream"))
    return body


def resnet(pid):
    kind, blocks, published, gmacs = RESNET[pid]
    layers = [conv("conv1", 64, 7, stride=2, padding=3), bn("bn1"), act("relu"),
              {"type": "max_pool2d", "name": "stream", "pool_size": 3, "stride": 2, "padding": 1}]
    in_channels = 64
    for stage, (count, width) in enumerate(zip(blocks, [64, 128, 256, 512])):
        stride = 1 if stage == 0 else 2
        out = width * (4 if kind == "bottleneck" else 1)
        downsample = stride != 1 or in_channels != out
        layers.append({"type": "repeat", "name": "layer%d_first" % (stage + 1), "count": 1,
                       "layers": resnet_block(kind, width, stride, downsample)})
        if count > 1:
            layers.append({"type": "repeat", "name": "layer%d" % (stage + 1), "count": count - 1,
                           "layers": resnet_block(kind, width, 1, False)})
        in_channels = out
    layers += [{"type": "global_avg_pool", "name": "avgpool"}, {"type": "dense", "name": "fc", "units": 1000},
               {"type": "cross_entropy", "name": "loss"}]
    depth = pid[6:]
    extra = " v1.5 (stride in the 3x3 conv)" if kind == "bottleneck" else ""
    write(pid, "ResNet-%s" % depth, "cnn",
          "He et al. 2016 (arXiv 1512.03385); torchvision %s%s: %s parameters, %.2f GMACs per 224x224 image"
          % (pid, extra, format(published, ","), gmacs), published, image(), {"layers": layers})


def mobilenet_v2():
    layers = [conv("conv_stem", 32, 3, stride=2, padding=1), bn("bn_stem"), act("stream", "relu6")]
    settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                (6, 320, 1, 1)]
    cin = 32
    for i, (t, c, n, s) in enumerate(settings):
        for j in range(n):
            stride = s if j == 0 else 1
            hidden = cin * t
            body = []
            src = "stream"
            if t != 1:
                body += [conv("expand", hidden, 1, inputs=["stream"]), bn("expand_bn"), act("expand_relu", "relu6")]
                src = "expand_relu"
            body += [conv("depthwise", hidden, 3, stride=stride, padding=1, groups=hidden, inputs=[src]),
                     bn("depthwise_bn"), act("depthwise_relu", "relu6"),
                     conv("project", c, 1), bn("project_bn")]
            if stride == 1 and cin == c:
                body.append({"type": "add", "name": "stream", "inputs": ["stream", "project_bn"]})
            else:
                body.append({"type": "identity", "name": "stream", "inputs": ["project_bn"]})
            layers.append({"type": "repeat", "name": "block%d_%d" % (i + 1, j), "count": 1, "layers": body})
            cin = c
    layers += [conv("conv_head", 1280, 1, inputs=["stream"]), bn("bn_head"), act("features", "relu6")]
    layers += classifier("features", dropout=0.2)
    write("mobilenet_v2", "MobileNetV2", "cnn",
          "Sandler et al. 2018 (arXiv 1801.04381); torchvision mobilenet_v2: 3,504,872 parameters, "
          "0.30 GMACs per 224x224 image", 3504872, image(), {"layers": layers})


def efficientnet_b0():
    layers = [conv("conv_stem", 32, 3, stride=2, padding=1), bn("bn_stem"), act("stream", "silu")]
    # expand ratio, kernel, stride, in, out, repeats (torchvision _efficientnet_conf, width/depth 1.0)
    settings = [(1, 3, 1, 32, 16, 1), (6, 3, 2, 16, 24, 2), (6, 5, 2, 24, 40, 2), (6, 3, 2, 40, 80, 3),
                (6, 5, 1, 80, 112, 3), (6, 5, 2, 112, 192, 4), (6, 3, 1, 192, 320, 1)]
    for i, (t, k, s, cin0, cout, n) in enumerate(settings):
        for j in range(n):
            cin = cin0 if j == 0 else cout
            stride = s if j == 0 else 1
            hidden = cin * t
            squeeze = max(1, cin // 4)
            body = []
            src = "stream"
            if t != 1:
                body += [conv("expand", hidden, 1, inputs=["stream"]), bn("expand_bn"), act("expand_act", "silu")]
                src = "expand_act"
            body += [conv("depthwise", hidden, k, stride=stride, padding=(k - 1) // 2, groups=hidden, inputs=[src]),
                     bn("depthwise_bn"), act("depthwise_act", "silu"),
                     # squeeze-and-excitation: 1x1 convolutions on the pooled vector are dense layers
                     {"type": "global_avg_pool", "name": "se_pool"},
                     {"type": "dense", "name": "se_reduce", "units": squeeze, "activation": "silu"},
                     {"type": "dense", "name": "se_expand", "units": hidden, "activation": "sigmoid"},
                     {"type": "reshape", "name": "se_scale", "shape": [hidden, 1, 1]},
                     {"type": "multiply", "name": "se", "inputs": ["depthwise_act", "se_scale"]},
                     conv("project", cout, 1), bn("project_bn")]
            if stride == 1 and cin == cout:
                body.append({"type": "add", "name": "stream", "inputs": ["stream", "project_bn"]})
            else:
                body.append({"type": "identity", "name": "stream", "inputs": ["project_bn"]})
            layers.append({"type": "repeat", "name": "block%d_%d" % (i + 1, j), "count": 1, "layers": body})
    layers += [conv("conv_head", 1280, 1, inputs=["stream"]), bn("bn_head"), act("features", "silu")]
    layers += classifier("features", dropout=0.2)
    write("efficientnet_b0", "EfficientNet-B0", "cnn",
          "Tan & Le 2019 (arXiv 1905.11946); torchvision efficientnet_b0: 5,288,548 parameters, "
          "0.39 GMACs per 224x224 image", 5288548, image(), {"layers": layers})


def densenet121():
    growth, bn_size = 32, 4
    layers = [conv("conv0", 64, 7, stride=2, padding=3), bn("norm0"), act("relu0"),
              {"type": "max_pool2d", "name": "stream", "pool_size": 3, "stride": 2, "padding": 1}]
    channels = 64
    for b, count in enumerate([6, 12, 24, 16]):
        layers.append({"type": "repeat", "name": "denseblock%d" % (b + 1), "count": count, "layers": [
            bn("norm1", inputs=["stream"]), act("relu1"), conv("conv1", bn_size * growth, 1),
            bn("norm2"), act("relu2"), conv("conv2", growth, 3, padding=1),
            {"type": "concat", "name": "stream", "axis": 0, "inputs": ["stream", "conv2"]}]})
        channels += count * growth
        if b < 3:
            channels //= 2
            layers += [bn("transition%d_norm" % (b + 1), inputs=["stream"]), act("transition%d_relu" % (b + 1)),
                       conv("transition%d_conv" % (b + 1), channels, 1),
                       {"type": "avg_pool2d", "name": "stream", "pool_size": 2, "stride": 2}]
    layers += [bn("norm5", inputs=["stream"]), act("features")]
    layers += classifier("features")
    write("densenet121", "DenseNet-121", "cnn",
          "Huang et al. 2017 (arXiv 1608.06993); torchvision densenet121: 7,978,856 parameters, "
          "2.83 GMACs per 224x224 image", 7978856, image(), {"layers": layers})


def basic(name, filters, k, stride=1, padding=0, inputs=None):
    """torchvision's BasicConv2d: convolution without bias, batch norm, ReLU; output named `name`."""
    return [conv(name + "_conv", filters, k, stride=stride, padding=padding, inputs=inputs), bn(name + "_bn"),
            act(name)]


def inception_v3():
    L = []
    L += basic("Conv2d_1a_3x3", 32, 3, stride=2)
    L += basic("Conv2d_2a_3x3", 32, 3)
    L += basic("Conv2d_2b_3x3", 64, 3, padding=1)
    L.append({"type": "max_pool2d", "name": "maxpool1", "pool_size": 3, "stride": 2})
    L += basic("Conv2d_3b_1x1", 80, 1)
    L += basic("Conv2d_4a_3x3", 192, 3)
    L.append({"type": "max_pool2d", "name": "stream", "pool_size": 3, "stride": 2})

    def block_a(name, pool_features):
        b = []
        b += basic("branch1x1", 64, 1, inputs=["stream"])
        b += basic("branch5x5_1", 48, 1, inputs=["stream"]) + basic("branch5x5_2", 64, 5, padding=2)
        b += basic("branch3x3dbl_1", 64, 1, inputs=["stream"]) + basic("branch3x3dbl_2", 96, 3, padding=1)
        b += basic("branch3x3dbl_3", 96, 3, padding=1)
        b.append({"type": "avg_pool2d", "name": "branch_pool_avg", "pool_size": 3, "stride": 1, "padding": 1,
                  "inputs": ["stream"]})
        b += basic("branch_pool", pool_features, 1)
        b.append({"type": "concat", "name": "stream", "axis": 0,
                  "inputs": ["branch1x1", "branch5x5_2", "branch3x3dbl_3", "branch_pool"]})
        return {"type": "repeat", "name": name, "count": 1, "layers": b}

    def block_b(name):
        b = basic("branch3x3", 384, 3, stride=2, inputs=["stream"])
        b += basic("branch3x3dbl_1", 64, 1, inputs=["stream"]) + basic("branch3x3dbl_2", 96, 3, padding=1)
        b += basic("branch3x3dbl_3", 96, 3, stride=2)
        b.append({"type": "max_pool2d", "name": "branch_pool", "pool_size": 3, "stride": 2, "inputs": ["stream"]})
        b.append({"type": "concat", "name": "stream", "axis": 0,
                  "inputs": ["branch3x3", "branch3x3dbl_3", "branch_pool"]})
        return {"type": "repeat", "name": name, "count": 1, "layers": b}

    def block_c(name, c7):
        b = basic("branch1x1", 192, 1, inputs=["stream"])
        b += basic("branch7x7_1", c7, 1, inputs=["stream"]) + basic("branch7x7_2", c7, [1, 7], padding=[0, 3])
        b += basic("branch7x7_3", 192, [7, 1], padding=[3, 0])
        b += basic("branch7x7dbl_1", c7, 1, inputs=["stream"])
        b += basic("branch7x7dbl_2", c7, [7, 1], padding=[3, 0]) + basic("branch7x7dbl_3", c7, [1, 7], padding=[0, 3])
        b += basic("branch7x7dbl_4", c7, [7, 1], padding=[3, 0])
        b += basic("branch7x7dbl_5", 192, [1, 7], padding=[0, 3])
        b.append({"type": "avg_pool2d", "name": "branch_pool_avg", "pool_size": 3, "stride": 1, "padding": 1,
                  "inputs": ["stream"]})
        b += basic("branch_pool", 192, 1)
        b.append({"type": "concat", "name": "stream", "axis": 0,
                  "inputs": ["branch1x1", "branch7x7_3", "branch7x7dbl_5", "branch_pool"]})
        return {"type": "repeat", "name": name, "count": 1, "layers": b}

    def block_d(name):
        b = basic("branch3x3_1", 192, 1, inputs=["stream"]) + basic("branch3x3_2", 320, 3, stride=2)
        b += basic("branch7x7x3_1", 192, 1, inputs=["stream"])
        b += basic("branch7x7x3_2", 192, [1, 7], padding=[0, 3]) + basic("branch7x7x3_3", 192, [7, 1], padding=[3, 0])
        b += basic("branch7x7x3_4", 192, 3, stride=2)
        b.append({"type": "max_pool2d", "name": "branch_pool", "pool_size": 3, "stride": 2, "inputs": ["stream"]})
        b.append({"type": "concat", "name": "stream", "axis": 0,
                  "inputs": ["branch3x3_2", "branch7x7x3_4", "branch_pool"]})
        return {"type": "repeat", "name": name, "count": 1, "layers": b}

    def block_e(name):
        b = basic("branch1x1", 320, 1, inputs=["stream"])
        b += basic("branch3x3_1", 384, 1, inputs=["stream"])
        b += basic("branch3x3_2a", 384, [1, 3], padding=[0, 1])
        b += basic("branch3x3_2b", 384, [3, 1], padding=[1, 0], inputs=["branch3x3_1"])
        b += basic("branch3x3dbl_1", 448, 1, inputs=["stream"]) + basic("branch3x3dbl_2", 384, 3, padding=1)
        b += basic("branch3x3dbl_3a", 384, [1, 3], padding=[0, 1])
        b += basic("branch3x3dbl_3b", 384, [3, 1], padding=[1, 0], inputs=["branch3x3dbl_2"])
        b.append({"type": "avg_pool2d", "name": "branch_pool_avg", "pool_size": 3, "stride": 1, "padding": 1,
                  "inputs": ["stream"]})
        b += basic("branch_pool", 192, 1)
        b.append({"type": "concat", "name": "stream", "axis": 0,
                  "inputs": ["branch1x1", "branch3x3_2a", "branch3x3_2b", "branch3x3dbl_3a", "branch3x3dbl_3b",
                             "branch_pool"]})
        return {"type": "repeat", "name": name, "count": 1, "layers": b}

    L += [block_a("Mixed_5b", 32), block_a("Mixed_5c", 64), block_a("Mixed_5d", 64), block_b("Mixed_6a"),
          block_c("Mixed_6b", 128), block_c("Mixed_6c", 160), block_c("Mixed_6d", 160), block_c("Mixed_6e", 192)]
    L.append({"type": "identity", "name": "mixed_6e_out", "inputs": ["stream"]})
    # Auxiliary classifier (trained with its own loss; torchvision's default aux_logits=True).
    L.append({"type": "avg_pool2d", "name": "aux_pool", "pool_size": 5, "stride": 3, "inputs": ["mixed_6e_out"]})
    L += basic("aux_conv0", 128, 1) + basic("aux_conv1", 768, 5)
    L += [{"type": "global_avg_pool", "name": "aux_avgpool"}, {"type": "dense", "name": "aux_fc", "units": 1000},
          {"type": "cross_entropy", "name": "aux_loss"}]
    L.append({"type": "identity", "name": "stream", "inputs": ["mixed_6e_out"]})
    L += [block_d("Mixed_7a"), block_e("Mixed_7b"), block_e("Mixed_7c")]
    L += classifier("stream", dropout=0.5)
    write("inception_v3", "Inception v3", "cnn",
          "Szegedy et al. 2016 (arXiv 1512.00567); torchvision inception_v3 with its auxiliary classifier "
          "(aux_logits=True, as trained): 27,161,264 parameters, 5.71 GMACs per 299x299 image (main path)",
          27161264, image(299), {"layers": L})


def lenet5():
    layers = [
        {"type": "conv2d", "name": "c1", "filters": 6, "kernel_size": 5, "activation": "tanh"},
        {"type": "avg_pool2d", "name": "s2", "pool_size": 2},
        {"type": "conv2d", "name": "c3", "filters": 16, "kernel_size": 5, "activation": "tanh"},
        {"type": "avg_pool2d", "name": "s4", "pool_size": 2},
        {"type": "flatten", "name": "flatten"},
        {"type": "dense", "name": "c5", "units": 120, "activation": "tanh"},
        {"type": "dense", "name": "f6", "units": 84, "activation": "tanh"},
        {"type": "dense", "name": "output", "units": 10},
        {"type": "cross_entropy", "name": "loss"},
    ]
    write("lenet5", "LeNet-5", "cnn",
          "LeCun et al. 1998 (Proc. IEEE 86(11)), on 32x32 grey images with C3 fully connected (the usual modern "
          "form): 61,706 parameters, 416,520 multiply-accumulates per image",
          61706, {"kind": "image", "channels": 1, "image_size": 32}, {"layers": layers})


def lstm_lm():
    layers = [
        {"type": "embedding", "name": "encoder", "vocab_size": 10000, "dim": 1024},
        {"type": "dropout", "name": "embedding_dropout", "rate": 0.5},
        {"type": "lstm", "name": "rnn", "hidden_size": 1024, "num_layers": 2},
        {"type": "dropout", "name": "output_dropout", "rate": 0.5},
        {"type": "dense", "name": "decoder", "units": 10000},
        {"type": "cross_entropy", "name": "loss"},
    ]
    write("lstm-lm", "LSTM language model (2 x 1024)", "rnn",
          "Zaremba et al. 2014 (arXiv 1409.2329) word-level LSTM LM on a 10,000-word vocabulary (Penn Treebank), "
          "2 layers of 1024 units, embedding 1024, untied decoder, as in PyTorch's word_language_model example; "
          "no count is published for this size: 37,283,600 = 10000*1024 + 2*4*1024*(1024+1024+2) + 1024*10000 + "
          "10000 (nn.LSTM keeps two bias vectors)", 37283600, tokens(35), {"layers": layers})


def ssd300():
    """NVIDIA DeepLearningExamples PyTorch/Detection/SSD (ssd/model.py): torchvision ResNet-50 cut after layer3,
    whose first block keeps stride 1 (38x38x1024 at 300x300), five extra blocks and 3x3 multibox heads."""
    layers = [conv("conv1", 64, 7, stride=2, padding=3), bn("bn1"), act("relu"),
              {"type": "max_pool2d", "name": "stream", "pool_size": 3, "stride": 2, "padding": 1}]
    for stage, (count, width) in enumerate(zip([3, 4, 6], [64, 128, 256])):
        stride = 2 if stage == 1 else 1  # layer3's stride 2 is removed by DLE (conv1, conv2, downsample)
        layers.append({"type": "repeat", "name": "layer%d_first" % (stage + 1), "count": 1,
                       "layers": resnet_block("bottleneck", width, stride, True)})
        layers.append({"type": "repeat", "name": "layer%d" % (stage + 1), "count": count - 1,
                       "layers": resnet_block("bottleneck", width, 1, False)})
    layers.append({"type": "identity", "name": "feature0", "inputs": ["stream"]})
    out_channels = [1024, 512, 512, 256, 256, 256]
    for i, (cout, mid) in enumerate(zip(out_channels[1:], [256, 256, 128, 128, 128])):
        layers += [conv("extra%d_conv1" % i, mid, 1, inputs=["feature%d" % i]), bn("extra%d_bn1" % i),
                   act("extra%d_relu1" % i),
                   conv("extra%d_conv2" % i, cout, 3, stride=2 if i < 3 else 1, padding=1 if i < 3 else 0),
                   bn("extra%d_bn2" % i), act("feature%d" % (i + 1))]
    locs, confs = [], []
    for i, boxes in enumerate([4, 6, 6, 6, 4, 4]):
        layers += [conv("loc%d" % i, boxes * 4, 3, padding=1, bias=True, inputs=["feature%d" % i]),
                   {"type": "reshape", "name": "loc%d_view" % i, "shape": [4, -1]},
                   conv("conf%d" % i, boxes * 81, 3, padding=1, bias=True, inputs=["feature%d" % i]),
                   {"type": "reshape", "name": "conf%d_view" % i, "shape": [81, -1]}]
        locs.append("loc%d_view" % i)
        confs.append("conf%d_view" % i)
    layers += [
        {"type": "concat", "name": "locs", "axis": 1, "inputs": locs},
        {"type": "concat", "name": "confs", "axis": 1, "inputs": confs},
        {"type": "cross_entropy", "name": "conf_loss", "inputs": ["confs"],
         "comment": "cross-entropy of 81 classes at each of the 8732 default boxes (hard negative mining's sorts "
                    "are not costed)"},
        {"type": "cross_entropy", "name": "loc_loss", "inputs": ["locs"],
         "comment": "smooth L1 on the 4 x 8732 box offsets, costed as one elementwise loss pass"},
    ]
    # Counted from the definition: torchvision resnet50 (25,557,032) less layer4 (14,964,736) and fc (2,049,000);
    # the extra blocks (3,773,696: convolutions without bias, batch norms); the heads (10,577,910).
    backbone = 25557032 - 14964736 - 2049000
    extras = 0
    for cin, cout, mid in zip(out_channels[:-1], out_channels[1:], [256, 256, 128, 128, 128]):
        extras += cin * mid + 2 * mid + 9 * mid * cout + 2 * cout
    heads = sum(9 * c * n * 85 + n * 85 for c, n in zip(out_channels, [4, 6, 6, 6, 4, 4]))
    published = backbone + extras + heads
    write("ssd300", "SSD300 (ResNet-50 backbone, COCO)", "detection",
          "Liu et al. 2016 (arXiv 1512.02325) with the backbone of NVIDIA DeepLearningExamples "
          "PyTorch/Detection/SSD (ssd/model.py): ResNet-50 to layer3 with layer3's stride removed, 5 extra blocks, "
          "4/6/6/6/4/4 default boxes per cell on 38/19/10/5/3/1 maps = 8732 boxes, 81 classes. No count is "
          "published; %s counted from that definition = %s (torchvision resnet50 without layer4 and fc) + %s "
          "(extra blocks) + %s (heads)" % (format(published, ","), format(backbone, ","), format(extras, ","),
                                            format(heads, ",")),
          published, image(300), {"layers": layers})


def transformer_xl_base():
    """NVIDIA DeepLearningExamples PyTorch/LanguageModeling/Transformer-XL, wt103_base.yaml and mem_transformer.py."""
    n_layer, d, heads, d_head, inner, vocab = 16, 512, 8, 64, 2048, 267735
    tgt_len = mem_len = 192
    cutoffs = [19997, 39997, 199997]
    block = [
        {"type": "attention", "name": "attn", "num_heads": heads, "head_dim": d_head, "causal": True, "bias": False,
         "out_bias": False, "memory_len": mem_len, "relative_positions": True, "inputs": ["stream"]},
        {"type": "dropout", "name": "attn_dropout", "rate": 0.1},
        {"type": "add", "name": "attn_residual", "inputs": ["stream", "attn_dropout"]},
        {"type": "layernorm", "name": "attn_norm"},
        {"type": "dense", "name": "ff1", "units": inner, "activation": "relu"},
        {"type": "dropout", "name": "ff_dropout1", "rate": 0.1},
        {"type": "dense", "name": "ff2", "units": d},
        {"type": "dropout", "name": "ff_dropout2", "rate": 0.1},
        {"type": "add", "name": "ff_residual", "inputs": ["attn_norm", "ff_dropout2"]},
        {"type": "layernorm", "name": "stream"},
    ]
    layers = [
        {"type": "embedding", "name": "word_emb", "vocab_size": vocab, "dim": d},
        {"type": "dropout", "name": "stream", "rate": 0.1},
        {"type": "parameter", "name": "r_bias", "shape": [2, heads * d_head],
         "comment": "r_w_bias and r_r_bias, shared by all layers (MemTransformerLM._create_params)"},
        {"type": "repeat", "name": "layers", "count": n_layer, "layers": block},
        {"type": "dropout", "name": "core_out", "rate": 0.1, "inputs": ["stream"]},
        {"type": "adaptive_softmax", "name": "crit", "vocab_size": vocab, "cutoffs": cutoffs, "tied_to": "word_emb"},
    ]
    per_layer = d * 3 * heads * d_head + 2 * d * heads * d_head + 2 * d + (d * inner + inner + inner * d + d) + 2 * d
    published = n_layer * per_layer + vocab * d + vocab + len(cutoffs) * (d + 1) + 2 * heads * d_head
    write("transformer-xl-base", "Transformer-XL base (WikiText-103)", "transformer-decoder",
          "Dai et al. 2019 (arXiv 1901.02860) as NVIDIA DeepLearningExamples trains it "
          "(PyTorch/LanguageModeling/Transformer-XL, wt103_base.yaml): 16 layers, d_model 512, 8 heads of 64, "
          "d_inner 2048, tgt_len 192 with mem_len 192 cached positions, relative positions, adaptive softmax "
          "(cutoffs 19997/39997/199997, div_val 1) tied to the 267,735-word embedding. The paper's 151M base is "
          "d_model 410 (10 heads of 41, d_inner 2100); DLE's base counts %s from mem_transformer.py "
          "(per layer %s; embedding %s; output biases %s; cluster rows %s; shared r_w/r_r biases %s)"
          % (format(published, ","), format(per_layer, ","), format(vocab * d, ","), format(vocab, ","),
             format(len(cutoffs) * (d + 1), ","), format(2 * heads * d_head, ",")),
          published, tokens(tgt_len), {"layers": layers})


def transformer_big_wmt():
    """NVIDIA DeepLearningExamples PyTorch/Translation/Transformer: fairseq transformer_wmt_en_de_big_t2t."""
    d, ffn, layers, vocab = 1024, 4096, 6, 33712
    attn = 4 * (d * d + d)
    mlp = d * ffn + ffn + ffn * d + d
    enc = attn + mlp + 2 * 2 * d
    dec = 2 * attn + mlp + 3 * 2 * d
    published = vocab * d + layers * (enc + dec) + 2 * 2 * d
    config = {"model_type": "marian", "d_model": d, "encoder_layers": layers, "decoder_layers": layers,
              "encoder_attention_heads": 16, "decoder_attention_heads": 16, "encoder_ffn_dim": ffn,
              "decoder_ffn_dim": ffn, "vocab_size": vocab, "max_position_embeddings": 1024,
              "activation_function": "relu", "dropout": 0.1, "attention_dropout": 0.1, "activation_dropout": 0.1,
              "scale_embedding": True, "normalize_before": True, "add_final_layer_norm": True,
              "normalize_embedding": False, "static_position_embeddings": True,
              "share_encoder_decoder_embeddings": True, "tie_word_embeddings": True}
    hf("transformer-big-wmt", "Transformer big, WMT14 en-de (fairseq t2t)", "transformer-encoder-decoder",
       "Vaswani et al. 2017 (arXiv 1706.03762) big model as NVIDIA DeepLearningExamples trains it "
       "(PyTorch/Translation/Transformer, --arch transformer_wmt_en_de_big_t2t --share-all-embeddings): 6+6 "
       "pre-LayerNorm blocks with final LayerNorms, d 1024, 16 heads, FFN 4096, sinusoidal positions, one "
       "33,712-row table (33,708 BPE tokens + 4 specials) shared by encoder, decoder and output; written as a "
       "Marian config with the Transformers v3 switches normalize_before / add_final_layer_norm. Counted from "
       "fairseq's definition: %s; the paper's 213M used a 37,000-token vocabulary" % format(published, ","),
       published, 128, config)


# ---------------------------------------------------------------- transformers (Hugging Face configs)

def hf(pid, name, family, source, published, seq, config):
    write(pid, name, family, source, published, tokens(seq), {"hf_config": config})


def gpt2_config(embd, layers, heads, positions=1024):
    return {"model_type": "gpt2", "n_embd": embd, "n_layer": layers, "n_head": heads, "n_positions": positions,
            "n_ctx": positions, "vocab_size": 50257, "activation_function": "gelu_new", "resid_pdrop": 0.1,
            "embd_pdrop": 0.1, "attn_pdrop": 0.1}


def bert_config(hidden, layers, heads, inner, vocab=30522, positions=512, types=2, model_type="bert"):
    return {"model_type": model_type, "hidden_size": hidden, "num_hidden_layers": layers,
            "num_attention_heads": heads, "intermediate_size": inner, "vocab_size": vocab,
            "max_position_embeddings": positions, "type_vocab_size": types, "hidden_act": "gelu",
            "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1}


def llama_config(model_type, hidden, inner, layers, heads, kv, vocab, positions, tied=False, **extra):
    cfg = {"model_type": model_type, "hidden_size": hidden, "intermediate_size": inner, "num_hidden_layers": layers,
           "num_attention_heads": heads, "num_key_value_heads": kv, "vocab_size": vocab,
           "max_position_embeddings": positions, "hidden_act": "silu", "rms_norm_eps": 1e-5,
           "tie_word_embeddings": tied, "attention_bias": False}
    cfg.update(extra)
    return cfg


def transformers():
    hf("bert-base", "BERT-Base (uncased), masked-LM pretraining", "transformer-encoder",
       "Devlin et al. 2019 (arXiv 1810.04805) rounds to 110M; Hugging Face bert-base-uncased as BertForMaskedLM: "
       "109,514,298 parameters", 109514298, 128, bert_config(768, 12, 12, 3072))
    hf("bert-large", "BERT-Large (uncased), masked-LM pretraining", "transformer-encoder",
       "Devlin et al. 2019 (arXiv 1810.04805) rounds to 340M; Hugging Face bert-large-uncased as BertForMaskedLM: "
       "335,174,458 parameters", 335174458, 128, bert_config(1024, 24, 16, 4096))
    cfg = bert_config(768, 12, 12, 3072, vocab=50265, positions=514, types=1, model_type="roberta")
    hf("roberta-base", "RoBERTa-Base, masked-LM pretraining", "transformer-encoder",
       "Liu et al. 2019 (arXiv 1907.11692) rounds to 125M; Hugging Face roberta-base as RobertaForMaskedLM: "
       "124,697,433 parameters", 124697433, 512, cfg)
    hf("distilbert", "DistilBERT (base, uncased), masked-LM", "transformer-encoder",
       "Sanh et al. 2019 (arXiv 1910.01108) rounds to 66M; Hugging Face distilbert-base-uncased as "
       "DistilBertForMaskedLM: 66,985,530 parameters", 66985530, 128,
       {"model_type": "distilbert", "dim": 768, "n_layers": 6, "n_heads": 12, "hidden_dim": 3072,
        "vocab_size": 30522, "max_position_embeddings": 512, "activation": "gelu", "dropout": 0.1,
        "attention_dropout": 0.1})
    hf("gpt2", "GPT-2 (124M)", "transformer-decoder",
       "Radford et al. 2019; Hugging Face gpt2 config.json: 124,439,808 parameters (tied embeddings)",
       124439808, 1024, gpt2_config(768, 12, 12))
    hf("gpt2-medium", "GPT-2 Medium (355M)", "transformer-decoder",
       "Radford et al. 2019; Hugging Face gpt2-medium config.json: 354,823,168 parameters (tied embeddings)",
       354823168, 1024, gpt2_config(1024, 24, 16))
    hf("gpt2-large", "GPT-2 Large (774M)", "transformer-decoder",
       "Radford et al. 2019; Hugging Face gpt2-large config.json: 774,030,080 parameters (tied embeddings)",
       774030080, 1024, gpt2_config(1280, 36, 20))
    hf("gpt2-xl", "GPT-2 XL (1.5B)", "transformer-decoder",
       "Radford et al. 2019; Hugging Face gpt2-xl config.json: 1,557,611,200 parameters (tied embeddings)",
       1557611200, 1024, gpt2_config(1600, 48, 25))
    hf("gpt3-xl", "GPT-3 XL (1.3B)", "transformer-decoder",
       "Brown et al. 2020 (arXiv 2005.14165) Table 2.1: 24 layers, d_model 2048, context 2048, 1.3B (rounded; "
       "its 24 x 128 heads do not divide 2048, so 16 heads of 128 here); GPT-2 vocabulary. Exact count of this "
       "shape: EleutherAI gpt-neo-1.3B on Hugging Face, 1,315,575,808 (its Q, K, V have no biases)",
       1315575808, 2048, gpt2_config(2048, 24, 16, positions=2048))
    hf("gpt3-2.7b", "GPT-3 2.7B", "transformer-decoder",
       "Brown et al. 2020 (arXiv 2005.14165) Table 2.1: 32 layers, d_model 2560, 32 heads of 80, context 2048, "
       "2.7B (rounded). Exact count of this shape: EleutherAI gpt-neo-2.7B on Hugging Face, 2,651,307,520 "
       "(its Q, K, V have no biases)", 2651307520, 2048, gpt2_config(2560, 32, 32, positions=2048))
    hf("opt-1.3b", "OPT-1.3B", "transformer-decoder",
       "Zhang et al. 2022 (arXiv 2205.01068); Hugging Face facebook/opt-1.3b config.json: 1,315,758,080 "
       "parameters (tied embeddings)", 1315758080, 2048,
       {"model_type": "opt", "hidden_size": 2048, "ffn_dim": 8192, "num_hidden_layers": 24,
        "num_attention_heads": 32, "vocab_size": 50272, "max_position_embeddings": 2048,
        "word_embed_proj_dim": 2048, "do_layer_norm_before": True, "activation_function": "relu",
        "dropout": 0.1, "attention_dropout": 0.0, "enable_bias": True})
    hf("llama-2-7b", "Llama 2 7B", "transformer-decoder",
       "Touvron et al. 2023 (arXiv 2307.09288); Hugging Face meta-llama/Llama-2-7b-hf: 6,738,415,616 parameters",
       6738415616, 4096, llama_config("llama", 4096, 11008, 32, 32, 32, 32000, 4096))
    hf("llama-2-13b", "Llama 2 13B", "transformer-decoder",
       "Touvron et al. 2023 (arXiv 2307.09288); Hugging Face meta-llama/Llama-2-13b-hf: 13,015,864,320 parameters",
       13015864320, 4096, llama_config("llama", 5120, 13824, 40, 40, 40, 32000, 4096))
    hf("llama-2-70b", "Llama 2 70B", "transformer-decoder",
       "Touvron et al. 2023 (arXiv 2307.09288); Hugging Face meta-llama/Llama-2-70b-hf (grouped-query attention, "
       "8 KV heads): 68,976,648,192 parameters", 68976648192, 4096,
       llama_config("llama", 8192, 28672, 80, 64, 8, 32000, 4096))
    hf("llama-3-8b", "Llama 3 8B", "transformer-decoder",
       "Meta Llama 3 model card (2024); Hugging Face meta-llama/Meta-Llama-3-8B: 8,030,261,248 parameters",
       8030261248, 8192, llama_config("llama", 4096, 14336, 32, 32, 8, 128256, 8192, rope_theta=500000.0))
    hf("mistral-7b", "Mistral 7B (v0.1)", "transformer-decoder",
       "Jiang et al. 2023 (arXiv 2310.06825); Hugging Face mistralai/Mistral-7B-v0.1: 7,241,732,096 parameters",
       7241732096, 4096, llama_config("mistral", 4096, 14336, 32, 32, 8, 32000, 32768, sliding_window=4096))
    hf("mixtral-8x7b", "Mixtral 8x7B", "transformer-decoder-moe",
       "Jiang et al. 2024 (arXiv 2401.04088): 8 experts, 2 per token, 46.7B parameters of which 12.9B active; "
       "Hugging Face mistralai/Mixtral-8x7B-v0.1: 46,702,792,704 parameters", 46702792704, 4096,
       llama_config("mixtral", 4096, 14336, 32, 32, 8, 32000, 32768, num_local_experts=8, num_experts_per_tok=2))
    hf("phi-2", "Phi-2", "transformer-decoder",
       "Microsoft Phi-2 model card (2023); Hugging Face microsoft/phi-2 (model_type phi): 2,779,683,840 parameters",
       2779683840, 2048,
       {"model_type": "phi", "hidden_size": 2560, "intermediate_size": 10240, "num_hidden_layers": 32,
        "num_attention_heads": 32, "vocab_size": 51200, "max_position_embeddings": 2048,
        "hidden_act": "gelu_new", "partial_rotary_factor": 0.4, "resid_pdrop": 0.1, "embd_pdrop": 0.0,
        "attention_dropout": 0.0, "tie_word_embeddings": False})
    for pid, d_model, d_ff, layers, heads, published in [("t5-base", 768, 3072, 12, 12, 222903552),
                                                          ("t5-large", 1024, 4096, 24, 16, 737668096)]:
        hf(pid, "T5 %s" % pid[3:].capitalize(), "transformer-encoder-decoder",
           "Raffel et al. 2020 (arXiv 1910.10683); Hugging Face %s as T5ForConditionalGeneration (LM head tied to "
           "the shared embedding): %s parameters" % (pid, format(published, ",")), published, 512,
           {"model_type": "t5", "d_model": d_model, "d_kv": 64, "d_ff": d_ff, "num_layers": layers,
            "num_decoder_layers": layers, "num_heads": heads, "vocab_size": 32128, "n_positions": 512,
            "relative_attention_num_buckets": 32, "dropout_rate": 0.1, "feed_forward_proj": "relu",
            "tie_word_embeddings": True})
    for pid, hidden, layers, heads, inner, published, gmacs in [
            ("vit-b16", 768, 12, 12, 3072, 86567656, 17.56), ("vit-l16", 1024, 24, 16, 4096, 304326632, 61.55)]:
        write(pid, "ViT-%s/16" % ("B" if pid == "vit-b16" else "L"), "vision-transformer",
              "Dosovitskiy et al. 2021 (arXiv 2010.11929); torchvision %s_16 / Hugging Face google/%s-patch16-224 "
              "with a 1000-class head: %s parameters, %.2f GMACs per 224x224 image"
              % (pid.replace("-", "_")[:5], "vit-base" if pid == "vit-b16" else "vit-large", format(published, ","),
                 gmacs), published, image(),
              {"hf_config": {"model_type": "vit", "hidden_size": hidden, "num_hidden_layers": layers,
                             "num_attention_heads": heads, "intermediate_size": inner, "hidden_act": "gelu",
                             "image_size": 224, "patch_size": 16, "num_channels": 3, "qkv_bias": True,
                             "num_labels": 1000, "hidden_dropout_prob": 0.0,
                             "attention_probs_dropout_prob": 0.0}})


def main():
    for pid in VGG:
        vgg(pid)
    for pid in RESNET:
        resnet(pid)
    mobilenet_v2()
    efficientnet_b0()
    densenet121()
    inception_v3()
    lenet5()
    lstm_lm()
    ssd300()
    transformer_xl_base()
    transformer_big_wmt()
    transformers()


if __name__ == "__main__":
    main()
