"""The compile modes production uses, one small workload each; meant to run under `iwh capture`.

    python zoo/scenarios.py --scenario aoti --device cpu
    torchrun --standalone --nproc-per-node 2 zoo/scenarios.py --scenario ddp --device cpu
    python zoo/scenarios.py --list            # JSON: the scenarios

Scenarios (each also says what the warehouse should find in its artifacts):
- reduce_overhead: a 4-layer transformer under `mode="reduce-overhead"` (cudagraphs on CUDA, split
  into partitions), a second function that mutates its input (cudagraphs skipped for it), and a
  new batch size (a re-recording).
- aoti: `torch.export` then `torch._inductor.aoti_compile_and_package`, the package loaded and run.
- export: `torch.export.export` alone, no Inductor: graphs and guards, no kernels.
- compiled_optimizer: a training step whose Adam step is compiled on its own.
- flex_attention: `flex_attention` with a causal score_mod, compiled.
- graph_breaks: frames whose graphs, between graph breaks, compute nothing (kernel-less graphs)
  beside frames that compute.
- combo_kernels: independent small ops of one graph under `combo_kernels=True` (Triton only): one
  launch runs several fused subkernels, so one kernel maps back to several model lines.
- ddp: DistributedDataParallel over the ranks torchrun starts (gloo on CPU, NCCL on CUDA), plus a
  compiled function with a functional all_reduce, so collectives land in the output code.

Imports nothing from the warehouse, so it runs under any torch with torch.compile. What only this
process knows goes to IWH_RUN_FACTS (rank 0 alone, under torchrun).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

from worker import versions  # beside this file, as `python zoo/scenarios.py` and torchrun run it

SCENARIOS = ("reduce_overhead", "aoti", "export", "compiled_optimizer", "flex_attention", "graph_breaks", "ddp",
             "combo_kernels")
# scenarios launched by torchrun, and with how many processes
DISTRIBUTED = {"ddp": 2}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--list", action="store_true")
    p.add_argument("--scenario", choices=SCENARIOS)
    p.add_argument("--device", default="cpu")
    args = p.parse_args(argv)
    if args.list:
        print(json.dumps({"scenarios": list(SCENARIOS), "distributed": DISTRIBUTED}))
        return 0
    if not args.scenario:
        p.error("--scenario is required")
    rank = int(os.environ.get("RANK", "0"))
    facts = {"scenario": args.scenario, "device": args.device.split(":")[0], "ok": False, "error": None}
    t0 = time.monotonic()
    try:
        facts.update(versions(args.device))
        facts.update(RUNNERS[args.scenario](args.device) or {})
        facts["ok"] = True
    except Exception as exc:  # the failure is the run's result: recorded, then a non-zero exit
        traceback.print_exc()
        facts["error"] = f"{type(exc).__name__}: {exc}"[:2000]
    facts["seconds_total"] = round(time.monotonic() - t0, 2)
    if rank == 0 and os.environ.get("IWH_RUN_FACTS"):
        Path(os.environ["IWH_RUN_FACTS"]).write_text(json.dumps(facts, indent=1))
    print(json.dumps({k: facts[k] for k in ("scenario", "ok", "seconds_total")} | {"rank": rank}))
    return 0 if facts["ok"] else 1


def _counters() -> dict:
    """Dynamo's and Inductor's in-process counters: an independent check on what was parsed."""
    from torch._dynamo.utils import counters

    return {group: {k: v for k, v in c.items() if isinstance(v, int)} for group, c in counters.items()}


def _write_truth(extra: dict | None = None) -> None:
    path = os.environ.get("IWH_RUN_FACTS")
    if not path or int(os.environ.get("RANK", "0")) != 0:
        return
    truth = {"dynamo_counters": _counters(), **(extra or {})}
    Path(path).with_name("ground_truth.json").write_text(json.dumps(truth, indent=1, default=str))


def _blocks(dim: int, layers: int):
    from torch import nn
    from torch.nn import functional as F

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
            self.up, self.down = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, 4, d // 4).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
            return x + self.down(F.gelu(self.up(self.ln2(x))))

    return nn.Sequential(*[Block() for _ in range(layers)])


def reduce_overhead(device: str) -> dict:
    import torch

    torch.manual_seed(0)
    model = _blocks(64, 4).to(device).eval()
    compiled = torch.compile(model, mode="reduce-overhead")

    def bump(x, out):
        out.add_(x)  # mutates an input that is not a parameter or buffer: cudagraphs are skipped
        return out * 2

    bump_c = torch.compile(bump, mode="reduce-overhead")
    with torch.no_grad():
        for batch in (4, 4, 4, 8, 8, 8):  # a second batch size records a second graph
            compiled(torch.randn(batch, 16, 64, device=device))
        for _ in range(3):
            bump_c(torch.randn(32, device=device), torch.zeros(32, device=device))
    _write_truth()
    return {}


def aoti(device: str) -> dict:
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.LayerNorm(128), nn.Linear(128, 16)).to(device).eval()
    x = torch.randn(8, 64, device=device)
    ep = torch.export.export(model, (x,))
    with tempfile.TemporaryDirectory() as tmp:
        path = torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(tmp, "model.pt2"))
        runner = torch._inductor.aoti_load_package(path)
        with torch.no_grad():
            out = runner(x)
        _keep_package(path)
    _write_truth({"output_shape": list(out.shape)})
    return {}


def _keep_package(path: str) -> None:
    """The package's kernel_information.json is copied next to the capture's artifacts: the package
    itself lives in a temporary folder (its code is the debug tree's output_code.cpp)."""
    import zipfile

    out = os.environ.get("TORCH_COMPILE_DEBUG_DIR")
    if not out:
        return
    dest = Path(out) / "aoti_package"
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            if name.endswith("kernel_information.json"):
                target = dest / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(z.read(name))


def export(device: str) -> dict:
    import torch
    from torch import nn

    class Gate(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(32, 32)

        def forward(self, x, y):
            return torch.sigmoid(self.fc(x)) * y

    model = Gate().to(device)
    batch = torch.export.Dim("batch", min=2, max=64)
    args = (torch.randn(8, 32, device=device), torch.randn(8, 32, device=device))
    ep = torch.export.export(model, args, dynamic_shapes=({0: batch}, {0: batch}))
    ep.module()(*args)
    _write_truth({"exported_nodes": len(ep.graph.nodes)})
    return {}


def compiled_optimizer(device: str) -> dict:
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    @torch.compile
    def opt_step():
        opt.step()

    for _ in range(3):
        opt.zero_grad(set_to_none=True)
        model(torch.randn(16, 64, device=device)).pow(2).mean().backward()
        opt_step()
    _write_truth()
    return {}


def flex_attention(device: str) -> dict:
    import torch
    from torch.nn.attention.flex_attention import flex_attention as flex

    def causal(score, b, h, q_idx, kv_idx):
        return torch.where(q_idx >= kv_idx, score, -float("inf"))

    attend = torch.compile(flex)
    q, k, v = (torch.randn(2, 4, 128, 32, device=device) for _ in range(3))
    with torch.no_grad():
        out = attend(q, k, v, score_mod=causal)
    _write_truth({"output_shape": list(out.shape)})
    return {}


def graph_breaks(device: str) -> dict:
    import torch

    def shaped(x):
        # only views and metadata between the breaks: the graphs Dynamo makes of these stretches
        # compute nothing, so Inductor generates no kernel for them
        y = x.view(-1)
        torch._dynamo.graph_break()
        z = y.unsqueeze(0)
        torch._dynamo.graph_break()
        w = torch.relu(z) + 1
        torch._dynamo.graph_break()
        return w.t(), z

    compiled = torch.compile(shaped)
    for _ in range(2):
        compiled(torch.randn(4, 8, device=device))
    _write_truth()
    return {}


def ddp(device: str) -> dict:
    import torch
    import torch.distributed as dist
    from torch import nn
    from torch.distributed._functional_collectives import all_reduce
    from torch.nn.parallel import DistributedDataParallel

    cuda = device.startswith("cuda")
    dist.init_process_group("nccl" if cuda else "gloo")
    rank = dist.get_rank()
    dev = torch.device(f"cuda:{rank}") if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(dev)
    class Tower(nn.Module):
        # a module of user code: DDP's own forward is skipped by Dynamo, this frame is compiled
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(nn.Linear(512, 512) for _ in range(3))

        def forward(self, x):
            for layer in self.layers:
                x = torch.relu(layer(x))
            return x

    torch.manual_seed(0)
    model = Tower().to(dev)
    # a bucket a layer (bucket_cap_mb=1, the smallest DDPOptimizer takes): it splits the graph at
    # bucket boundaries, one subgraph each
    ddp_model = torch.compile(DistributedDataParallel(model, bucket_cap_mb=1))
    opt = torch.optim.SGD(ddp_model.parameters(), lr=1e-3)

    @torch.compile
    def synced_norm(x):
        # a functional collective inside a compiled graph: Inductor schedules it in the output code
        total = all_reduce(x * x, "sum", dist.group.WORLD)
        return torch.sqrt(total.sum()) + x.mean()

    # what tlparse's multi-rank report reads: per-op runtime estimates (log_tlparse) and the order
    # compiled graphs ran in (graph_execution), where this torch writes them
    order = getattr(torch._inductor.debug, "record_and_log_graph_execution_order", contextlib.nullcontext)
    with torch._inductor.config.patch(log_tlparse=True) if hasattr(torch._inductor.config, "log_tlparse") \
            else contextlib.nullcontext(), order():
        for _ in range(2):
            opt.zero_grad(set_to_none=True)
            ddp_model(torch.randn(16, 512, device=dev)).pow(2).mean().backward()
            opt.step()
            synced_norm(torch.randn(32, 32, device=dev))
    _write_truth({"world_size": dist.get_world_size()})
    dist.barrier()
    dist.destroy_process_group()
    return {"world_size": 2}


def combo_kernels(device: str) -> dict:
    import torch
    import torch._inductor.config as inductor_config

    inductor_config.combo_kernels = True
    inductor_config.combo_kernel_allow_mixed_sizes = 1

    def heads(a, b, c, d):
        x = torch.relu(a) * 2          # four outputs that share no input: one combo kernel holds them
        y = torch.sigmoid(b) + 1
        z = c.sum(dim=-1)
        w = torch.tanh(d) - d
        return x, y, z, w

    compiled = torch.compile(heads)
    args = [torch.randn(64, 128, device=device) for _ in range(4)]
    with torch.no_grad():
        for _ in range(3):
            compiled(*args)
    _write_truth()
    return {}


RUNNERS = {name: globals()[name] for name in SCENARIOS}

if __name__ == "__main__":
    sys.exit(main())
