"""Compile and run one zoo model; meant to run under `iwh capture` with the torch under test.

    python zoo/worker.py --model mlp --mode train --dtype fp32 --variant default --device cpu
    python zoo/worker.py --list          # JSON: the models this interpreter can build, variants

It drives the model's inputs once each (compiles, recompiles), then a few steady-state steps,
then, when IWH_PROFILE names a file, one more step under torch.profiler exported there as a Chrome
trace. What only this process knows (device name, Triton and CUDA versions, success or the error)
goes to IWH_RUN_FACTS for the manifest, and Inductor's own counters to ground_truth.json beside it.
Runs with any torch that has torch.compile; imports nothing from the warehouse.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from pathlib import Path

DTYPES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}
MODES = ("infer", "train")


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    if args.list:
        return _list()
    facts = {"model": args.model, "mode": args.mode, "dtype": args.dtype, "variant": args.variant,
             "device": args.device, "ok": False, "error": None}
    t0 = time.monotonic()
    try:
        facts.update(versions(args.device))
        facts["batch"] = _run(args, facts)
        facts["ok"] = True
    except Exception as exc:  # the failure is the run's result: record it, then exit non-zero
        traceback.print_exc()
        facts["error"] = f"{type(exc).__name__}: {exc}"[:2000]
    facts["seconds_total"] = round(time.monotonic() - t0, 2)
    _write_facts(facts)
    print(json.dumps({k: facts[k] for k in ("model", "mode", "dtype", "variant", "ok", "seconds_total")}))
    return 0 if facts["ok"] else 1


def _parse(argv):
    from variants import VARIANTS

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--list", action="store_true")
    p.add_argument("--model")
    p.add_argument("--mode", choices=MODES, default="infer")
    p.add_argument("--dtype", choices=sorted(DTYPES), default="fp32")
    p.add_argument("--variant", choices=sorted(VARIANTS), default="default")
    p.add_argument("--device", default="cpu")
    p.add_argument("--batch", type=int, help="default: the model's own")
    p.add_argument("--steps", type=int, default=2, help="steady-state steps after compiling")
    args = p.parse_args(argv)
    if not args.list and not args.model:
        p.error("--model is required")
    return args


def _list() -> int:
    from models import MODELS
    from variants import VARIANTS

    print(json.dumps({
        "models": [m.name for m in MODELS.values() if m.available()],
        "unavailable": [m.name for m in MODELS.values() if not m.available()],
        "variants": list(VARIANTS), "modes": list(MODES), "dtypes": list(DTYPES),
    }))
    return 0


def versions(device: str) -> dict:
    """The torch (and on CUDA the device, CUDA and Triton) a capture ran under."""
    import torch

    facts = {"torch": torch.__version__, "torch_git": getattr(torch.version, "git_version", None)}
    if device.startswith("cuda"):
        facts["device_name"] = torch.cuda.get_device_name(torch.device(device))
        facts["cuda"] = torch.version.cuda
        try:
            import triton

            facts["triton"] = triton.__version__
        except ImportError:
            pass
    return facts


def _run(args, facts: dict) -> int:
    import torch
    from models import MODELS
    from variants import VARIANTS, split_known

    spec = MODELS[args.model]
    device, dtype = torch.device(args.device), getattr(torch, DTYPES[args.dtype])
    batch = args.batch or spec.batch
    torch.manual_seed(0)
    known, missing = split_known(torch._inductor.config, VARIANTS[args.variant])
    if missing:
        facts["variant_missing"] = ",".join(missing)
        print(f"zoo: this torch has no inductor config {missing}; variant runs without them", file=sys.stderr)
    model = spec.build().to(device=device, dtype=dtype).train(args.mode == "train")
    inputs = [tuple(_place(t, device, dtype) for t in batch_args) for batch_args in spec.inputs(batch)]
    if spec.dynamic:
        arg, dim = spec.dynamic
        torch._dynamo.mark_dynamic(inputs[0][arg], dim)
    with torch._inductor.config.patch(known):
        compiled = torch.compile(model)
        step = _train_step(compiled, model) if args.mode == "train" else _infer_step(compiled)
        for batch_args in inputs:
            step(batch_args)
        for _ in range(args.steps):
            step(inputs[-1])
        _sync(device)
        if os.environ.get("IWH_PROFILE"):
            _profile(step, inputs[-1], device, os.environ["IWH_PROFILE"])
    _write_ground_truth()
    return batch


def _place(t, device, dtype):
    return t.to(device=device, dtype=dtype) if t.is_floating_point() else t.to(device)


def _first_tensor(out):
    import torch

    if isinstance(out, torch.Tensor):
        return out
    if hasattr(out, "to_tuple"):  # HuggingFace ModelOutput
        out = out.to_tuple()
    return _first_tensor(out[0])


def _train_step(compiled, model):
    import torch

    opt = torch.optim.SGD(model.parameters(), lr=1e-3)

    def step(batch_args):
        opt.zero_grad(set_to_none=True)
        _first_tensor(compiled(*batch_args)).float().pow(2).mean().backward()
        opt.step()

    return step


def _infer_step(compiled):
    import torch

    def step(batch_args):
        with torch.no_grad():
            compiled(*batch_args)

    return step


def _sync(device) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _profile(step, batch_args, device, path: str) -> None:
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with profile(activities=activities) as prof:
        step(batch_args)
        _sync(device)
    prof.export_chrome_trace(path)


def _write_ground_truth() -> None:
    """Inductor's and Dynamo's in-process counters: an independent check on what was parsed."""
    facts_path = os.environ.get("IWH_RUN_FACTS")
    if not facts_path:
        return
    from torch._dynamo.utils import counters
    from torch._inductor import metrics

    truth = {k: v for k, v in vars(metrics).items() if type(v) in (int, float) and not k.startswith("_")}
    truth["dynamo_counters"] = {group: dict(c) for group, c in counters.items()}
    Path(facts_path).with_name("ground_truth.json").write_text(json.dumps(truth, indent=1, default=str))


def _write_facts(facts: dict) -> None:
    path = os.environ.get("IWH_RUN_FACTS")
    if path:
        Path(path).write_text(json.dumps(facts, indent=1))


if __name__ == "__main__":
    sys.exit(main())
