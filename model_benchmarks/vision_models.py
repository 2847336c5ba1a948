"""torchvision's image classifiers for the model runner: convnets and vision transformers,
random weights (``weights=None``: nothing is downloaded).

Each entry is a torchvision builder at its published size, fed ``[batch, 3, 224, 224]``
random images; the model is wrapped so that the runner drives it like a HuggingFace model:
keyword inputs (``pixel_values``, ``labels``) and an output with ``logits`` and ``loss``
(cross-entropy on random class labels, in inference too, as the HuggingFace entries have a
loss).  Dropout and stochastic depth stay in the graph at p=1e-30, so that eager and compiled
runs, whose random streams differ, compute the same function.

``small=True`` gives tiny versions of the same block types (32x32 images, batch 2, 10 classes,
one or two blocks per stage, narrow channels) that compile and run on a CPU in seconds.

torchvision is optional: this module imports it only when a model is built, and asking for one
without it is an error that names the package.
"""

from __future__ import annotations

import dataclasses
from collections import namedtuple
from typing import Any, Callable

import torch

PREFIX = "tv_"
SMALL_BATCH = 2
SMALL_IMAGE = 32
SMALL_CLASSES = 10
#: dropout / stochastic-depth probability kept in the graph (the identity in practice)
TINY_P = 1e-30


@dataclasses.dataclass(frozen=True)
class VisionSpec:
    name: str  # tv_<torchvision builder>
    builder: str  # the function in torchvision.models
    batch_size: int
    image_size: int = 224
    num_classes: int = 1000

    @property
    def cls(self) -> str:  # what --list prints beside the name
        return f"torchvision.models.{self.builder}"

    @property
    def seq_len(self) -> int:  # the report's second size column: the image side
        return self.image_size


# builder, batch size. Batches follow the range PyTorch's timm/torchbench runners use for convnets
# in inference (64-256), smaller for the transformers and DenseNet (large activations), so that
# an fp16 forward takes well under 50 ms on an H100.
_TABLE: list[tuple[str, int]] = [
    ("resnet50", 128),
    ("mobilenet_v3_large", 256),
    ("efficientnet_b0", 256),
    ("convnext_tiny", 128),
    ("regnet_y_1_6gf", 128),
    ("densenet121", 64),
    ("vit_b_16", 64),
    ("swin_t", 64),  # shifted-window attention
]

SPECS: dict[str, VisionSpec] = {PREFIX + b: VisionSpec(PREFIX + b, b, bs) for b, bs in _TABLE}


# torchvision's wheels on PyPI are CUDA builds: next to a CPU-only torch their C extension (the
# detection ops) does not load, and `import torchvision` then stops while registering shape
# functions for two of those ops. The classifiers never call them: the fallback declares the two
# ops (no kernels) and imports again. The library object must stay alive for the declarations to stay.
_declared_ops = None


def import_torchvision():
    """torchvision, or SystemExit naming the package when it is not installed or does not import."""
    global _declared_ops
    try:
        import torchvision
    except ModuleNotFoundError:
        raise SystemExit("the tv_* models need torchvision: pip install the torchvision release that pairs with "
                         f"torch {torch.__version__.split('+')[0]} (e.g. torchvision 0.28 for torch 2.13)") from None
    except RuntimeError as exc:
        if "torchvision::" not in str(exc) or _declared_ops is not None:
            raise SystemExit(f"torchvision is installed but does not import: {exc}") from exc
        _declared_ops = torch.library.Library("torchvision", "FRAGMENT")
        for op in ("nms", "qnms"):
            if not hasattr(torch.ops.torchvision, op):
                _declared_ops.define(f"{op}(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        import torchvision
    return torchvision


ClassifierOutput = namedtuple("ClassifierOutput", ["logits", "loss"])


class ImageClassifier(torch.nn.Module):
    """A torchvision classifier behind the interface the runner drives: keyword inputs, and an
    output with ``.logits`` and ``.loss`` (cross-entropy against ``labels``)."""

    def __init__(self, net: torch.nn.Module, num_classes: int):
        super().__init__()
        self.net = net
        self.num_classes = num_classes

    def forward(self, pixel_values: torch.Tensor, labels: torch.Tensor) -> ClassifierOutput:
        logits = self.net(pixel_values)
        return ClassifierOutput(logits, torch.nn.functional.cross_entropy(logits, labels))


# --small: the same block types at toy size (each builder gets torchvision.models)
def _small_resnet50(tvm):
    from torchvision.models.resnet import Bottleneck, ResNet

    return ResNet(Bottleneck, [1, 1, 1, 1], num_classes=SMALL_CLASSES, width_per_group=16)


def _small_mobilenet_v3_large(tvm):
    from torchvision.models.mobilenetv3 import InvertedResidualConfig, MobileNetV3

    def block(cin, k, exp, cout, se, act, stride):
        return InvertedResidualConfig(cin, k, exp, cout, se, act, stride, 1, 0.5)

    setting = [block(16, 3, 16, 16, False, "RE", 1), block(16, 3, 64, 24, False, "RE", 2),
               block(24, 5, 72, 40, True, "RE", 2), block(40, 3, 240, 40, True, "HS", 1)]
    return MobileNetV3(setting, last_channel=128, num_classes=SMALL_CLASSES)


def _small_efficientnet_b0(tvm):
    from torchvision.models.efficientnet import EfficientNet, MBConvConfig

    setting = [MBConvConfig(1, 3, 1, 32, 16, 1, 0.5), MBConvConfig(6, 3, 2, 16, 24, 2, 0.5),
               MBConvConfig(6, 5, 2, 24, 40, 1, 0.5)]
    return EfficientNet(setting, dropout=0.2, num_classes=SMALL_CLASSES)


def _small_convnext_tiny(tvm):
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt

    return ConvNeXt([CNBlockConfig(16, 32, 1), CNBlockConfig(32, None, 2)], stochastic_depth_prob=0.1,
                    num_classes=SMALL_CLASSES)


def _small_regnet_y_1_6gf(tvm):
    from torchvision.models.regnet import BlockParams, RegNet

    params = BlockParams.from_init_params(depth=3, w_0=16, w_a=16.0, w_m=2.0, group_width=8, se_ratio=0.25)
    return RegNet(params, num_classes=SMALL_CLASSES, stem_width=16)


def _small_densenet121(tvm):
    return tvm.DenseNet(growth_rate=8, block_config=(2, 2), num_init_features=16, bn_size=2,
                        num_classes=SMALL_CLASSES)


def _small_vit_b_16(tvm):
    return tvm.VisionTransformer(image_size=SMALL_IMAGE, patch_size=8, num_layers=2, num_heads=4, hidden_dim=64,
                                 mlp_dim=128, num_classes=SMALL_CLASSES)


def _small_swin_t(tvm):
    # 8x8 patches in the first stage, windows of 4x4: the second block's windows are shifted
    return tvm.SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 4],
                               window_size=[4, 4], stochastic_depth_prob=0.2, num_classes=SMALL_CLASSES)


_SMALL: dict[str, Callable[[Any], torch.nn.Module]] = {
    "resnet50": _small_resnet50,
    "mobilenet_v3_large": _small_mobilenet_v3_large,
    "efficientnet_b0": _small_efficientnet_b0,
    "convnext_tiny": _small_convnext_tiny,
    "regnet_y_1_6gf": _small_regnet_y_1_6gf,
    "densenet121": _small_densenet121,
    "vit_b_16": _small_vit_b_16,
    "swin_t": _small_swin_t,
}


def shape(spec: VisionSpec, small: bool = False) -> tuple[int, int]:
    """(batch size, image side)."""
    return (SMALL_BATCH, SMALL_IMAGE) if small else (spec.batch_size, spec.image_size)


def num_classes(spec: VisionSpec, small: bool = False) -> int:
    return SMALL_CLASSES if small else spec.num_classes


def _keep_random_ops_near_identity(net: torch.nn.Module) -> None:
    from torchvision.ops import StochasticDepth

    for module in net.modules():
        if isinstance(module, (torch.nn.Dropout, StochasticDepth)) and module.p > 0:
            module.p = TINY_P


def _give_zero_heads_weights(net: torch.nn.Module) -> None:
    """ViT starts its classifier at zero (logits all 0 whatever the body computes, an accuracy check that
    checks nothing): random weights instead, as the other heads have."""
    for module in net.modules():
        if isinstance(module, torch.nn.Linear) and not torch.any(module.weight):
            torch.nn.init.normal_(module.weight, std=0.02)


@torch.no_grad()
def _set_batch_norm_statistics(model: ImageClassifier, spec: VisionSpec, small: bool) -> None:
    """Running statistics of every batch norm from one training-mode forward of random images.

    Fresh statistics (mean 0, variance 1) do not match what random weights produce, and eval mode then
    scales the activations block after block (logits near 1e-5 or in the thousands: a vacuous check
    or fp16 overflow); a trained network's statistics match its activations, as these do."""
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return
    param = next(model.parameters())
    batch, side = shape(spec, small)
    gen = torch.Generator().manual_seed(12345)
    images = torch.randn((min(batch, 16), 3, side, side), generator=gen).to(param.device, param.dtype)
    momenta = [m.momentum for m in norms]
    was_training = model.training
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # a plain average over the forward passes (one here)
    model.net.train()
    model.net(images)
    for m, momentum in zip(norms, momenta):
        m.momentum = momentum
    model.train(was_training)


def build_model(spec: VisionSpec, small: bool = False, device: str | torch.device = "cpu",
                dtype: torch.dtype = torch.float32, seed: int = 0) -> ImageClassifier:
    """The classifier with random weights (seeded) on `device` (``"meta"`` keeps nothing allocated: the model is
    built on the CPU and moved, since RegNet computes its stage widths with tensors)."""
    tvm = import_torchvision().models
    meta = torch.device(device).type == "meta"
    torch.manual_seed(seed)
    with torch.device("cpu" if meta else device):
        net = _SMALL[spec.builder](tvm) if small else getattr(tvm, spec.builder)(weights=None)
        _give_zero_heads_weights(net)
    _keep_random_ops_near_identity(net)
    model = ImageClassifier(net, num_classes(spec, small)).to(device=device, dtype=dtype)
    if not meta:
        _set_batch_norm_statistics(model, spec, small)
    return model


def make_inputs(spec: VisionSpec, model: torch.nn.Module | None, small: bool = False,
                device: str | torch.device = "cpu", dtype: torch.dtype | None = None,
                seed: int = 0) -> dict[str, torch.Tensor]:
    """Random images (standard normal, as normalized pixels are) and class labels.

    The images take the dtype of `model`'s parameters unless `dtype` is given (fp32 under autocast)."""
    batch, side = shape(spec, small)
    if dtype is None:
        param = next(model.parameters(), None) if model is not None else None
        dtype = param.dtype if param is not None else torch.float32
    gen = torch.Generator().manual_seed(seed)
    images = torch.randn((batch, 3, side, side), generator=gen).to(device=device, dtype=dtype)
    labels = torch.randint(0, num_classes(spec, small), (batch,), generator=gen).to(device)
    return {"pixel_values": images, "labels": labels}


def shifted_window_softmax(attn: torch.Tensor, table: torch.Tensor, index: torch.Tensor,
                           img: torch.Tensor) -> torch.Tensor:
    """Swin-T's first-stage attention softmax on its own: scores `attn` [B * windows, 3 heads, 49, 49] plus
    the relative-position bias (`table` [169, 3] gathered by `index` [2401]) and the shifted windows' mask
    built from the region ids `img` [7 k, 7 k] (k * k windows of 7 x 7). What h-tvgaps fused into one kernel
    (codegen/index_equal.py); the GPU probe and its CPU test share it."""
    side, n, heads = img.shape[0] // 7, 49, table.shape[1]
    windows = side * side
    bias = table[index].view(n, n, heads).permute(2, 0, 1).contiguous()
    attn = attn + bias.unsqueeze(0)
    mask = img.view(side, 7, side, 7).permute(0, 2, 1, 3).reshape(windows, n)
    mask = mask.unsqueeze(1) - mask.unsqueeze(2)
    mask = mask.masked_fill(mask != 0, -100.0).masked_fill(mask == 0, 0.0)
    attn = attn.view(-1, windows, heads, n, n) + mask.unsqueeze(1).unsqueeze(0)
    return torch.softmax(attn.view(-1, heads, n, n), -1)
