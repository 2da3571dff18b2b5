"""The zoo's models: small built-ins that need no downloads, and library models built from
configs with random weights where torchvision, timm or transformers are installed.

Each model gives the input tuples to drive it with, in order: compiling on the first, and for
`dyn_graphbreak` hitting a dynamic dimension and a recompile on the later ones. The steady-state
step repeats the last.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from collections.abc import Callable

import torch
from torch import nn
from torch.nn import functional as F


@dataclass(frozen=True)
class ZooModel:
    name: str
    build: Callable[[], nn.Module]
    inputs: Callable[[int], list[tuple]]
    requires: str | None = None
    batch: int = 8
    # (argument, dimension) of the first input to mark dynamic, once it is on its device and dtype
    dynamic: tuple[int, int] | None = None

    def available(self) -> bool:
        return self.requires is None or importlib.util.find_spec(self.requires) is not None


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(512, 1024), nn.Linear(1024, 1024), nn.Linear(1024, 10)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(F.gelu(self.fc1(x)))))


class TransformerBlock(nn.Module):
    """Pre-LN block: layer norms, SDPA attention and a GELU MLP give pointwise, reduction and
    extern kernels in one graph."""

    def __init__(self, dim: int = 256, heads: int = 4):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.up, self.down = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attn.transpose(1, 2).reshape(b, t, d))
        return x + self.down(F.gelu(self.up(self.ln2(x))))


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1, stride=2), nn.BatchNorm2d(32), nn.ReLU(),
        )
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        return self.head(self.features(x).mean((2, 3)))


class DynGraphBreak(nn.Module):
    """An explicit graph break and a data-dependent branch, fed a dynamic batch dimension and
    then a new rank, so one run shows graph breaks, dynamic shapes and a recompile."""

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(64, 128), nn.Linear(128, 32)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        torch._dynamo.graph_break()
        if h.sum() > 0:
            h = h * 2
        return self.fc2(h).softmax(-1)


def _dyn_inputs(batch: int) -> list[tuple]:
    return [(torch.randn(batch, 64),), (torch.randn(2 * batch, 64),), (torch.randn(2, batch, 64),)]


def _torchvision(name: str) -> Callable[[], nn.Module]:
    def build():
        import torchvision

        return getattr(torchvision.models, name)(weights=None)

    return build


def _timm(name: str) -> Callable[[], nn.Module]:
    def build():
        import timm

        return timm.create_model(name, pretrained=False)

    return build


def _hf_bert() -> nn.Module:
    from transformers import BertConfig, BertModel

    config = BertConfig(vocab_size=1000, hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=1024, max_position_embeddings=128)
    return BertModel(config)


def _images(batch: int, size: int = 224) -> list[tuple]:
    return [(torch.randn(batch, 3, size, size),)]


MODELS: dict[str, ZooModel] = {
    m.name: m
    for m in [
        ZooModel("mlp", Mlp, lambda b: [(torch.randn(b, 512),)]),
        ZooModel("transformer", TransformerBlock, lambda b: [(torch.randn(b, 64, 256),)]),
        ZooModel("cnn", Cnn, lambda b: [(torch.randn(b, 3, 32, 32),)]),
        ZooModel("dyn_graphbreak", DynGraphBreak, _dyn_inputs, dynamic=(0, 0)),
        ZooModel("tv_resnet18", _torchvision("resnet18"), _images, "torchvision"),
        ZooModel("tv_mobilenet_v3_small", _torchvision("mobilenet_v3_small"), _images, "torchvision"),
        ZooModel("timm_deit_tiny_patch16_224", _timm("deit_tiny_patch16_224"), _images, "timm"),
        ZooModel("hf_bert", _hf_bert, lambda b: [(torch.randint(0, 1000, (b, 128)),)], "transformers"),
    ]
}
