"""What a benchmark harness file's name and folders say of its rows: suite, backend, mode, dtype and
device, in every naming generation of PyTorch's harness and CI (read off `benchmarks/dynamo/common.py`
from 2022 to 2026, `tools/stats/upload_dynamo_perf_stats.py`, and files committed in public
repositories; tests/fixtures/SOURCES.md):

- the harness's own default names, 2022 on: `speedup_<backend>.csv`, `accuracy_<backend>.csv`,
  `tolerance_<backend>.csv`, `precision_checker_<backend>.csv` (`<backend>` is `--backend` as given:
  `inductor`, `aot_eager`, `eager`, ...), and `<backend>.csv` (`inductor.csv`); scripts that keep them
  add words (`speedup_inductor_huggingface_20230301.csv`);
- CI's, 2023 on: `<backend>_<suite>_<dtype>_<mode>_<device>_<performance|accuracy>.csv`, the backend
  being HUD's compiler name (`inductor_with_cudagraphs`, `inductor_no_cudagraphs`, `inductor_dynamic`,
  `inductor_cpp_wrapper`, ...), and `_compilation_metrics` after any of these;
- CI's expected values: `expected_ci_perf_<backend>_<suite>.csv` (2022-2023) and
  `ci_expected_accuracy/[<platform>/]<config>_<suite>_<mode>.csv`, `<config>` a backend with its
  device and variants (`cpu_inductor_amp_freezing`, `dynamic_aot_eager`) and `<platform>` a folder
  (`rocm/`, `cu124/`); 2022's `<mode>_<suite>[<shard>].csv` names no backend.

A word is taken for a field only where the naming puts it (a backend is the harness's `--backend`
word, or the configuration words around a suite, or a whole name that is a backend); a name that
says nothing of a field leaves it None, never a guess. A backend is made only of words the harness,
CI and HUD use for one (BACKEND_WORDS, VARIANT_WORDS): a name whose configuration holds any other
word (`mobilenetv2_100__inductor_timm_models_...`, a user's prefix; `inductor_distributed_x.csv`)
names no backend, and the words it was not read for are said (`unread_words`). A word right after
the device is the device's (CI's `cpu_x86`, `cuda_h100`). Folders are read word by word for suite,
mode, dtype and device, and for a backend only where a folder's whole name is one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TypeAlias

FIELDS = ("suite", "backend", "mode", "dtype", "device")
# what a name (or a JSON record) says of the FIELDS: field -> its value, None where it says none
Fields: TypeAlias = dict[str, str | None]
SUITES = {"timm_models": "timm_models", "timm": "timm_models", "huggingface": "huggingface",
          "torchbench": "torchbench"}
MODES = {"training": "training", "inference": "inference"}
# HUD's dtypes (compilerUtils.ts DTYPES: amp, float16, bfloat16, quant, notset) and the harness's float32
DTYPES = {"float32": "float32", "float16": "float16", "bfloat16": "bfloat16", "amp": "amp", "quant": "quant",
          "notset": "notset"}
# torch-xpu-ops' inductor_xpu_test.sh: `amp_bf16` (--amp) and `amp_fp16` (--amp, INDUCTOR_AMP_DT=float16),
# two dtypes, spelled as written (as workload_value spells half precision: bf16, fp16)
AMP_DTYPES = {"bf16": "amp_bf16", "fp16": "amp_fp16"}
DEVICES = {"cpu": "cpu", "cuda": "cuda", "xpu": "xpu", "mps": "mps", "hpu": "hpu", "rocm": "rocm"}
CUDA_PLATFORM = re.compile(r"^cu\d{3,}$")  # ci_expected_accuracy/cu124/: a CUDA build's expected values
# what the harness's file names say that is none of the fields
# (torch-xpu-ops' runner names its tables `inductor-results-<suite>-<dtype>-<mode>-<device>-<kind>.csv`)
KIND_WORDS = {"performance", "accuracy", "compilation", "metrics", "coverage", "results"}
# the harness's prefixes of `--backend` (common.py's output_filename), and CI's expected perf files
BACKEND_PREFIXES = (("precision", "checker"), ("expected", "ci", "perf"), ("speedup",), ("accuracy",),
                    ("tolerance",))
# torch._dynamo's backends (list_backends, the debug ones included) and the words of HUD's compiler
# names: a configuration names a backend when one of these is among its words
BACKEND_WORDS = {"inductor", "eager", "cudagraphs", "nvfuser", "nnc", "onnxrt", "tvm", "openxla", "ipex",
                 "tensorrt", "torchxla", "torchao", "optimus", "ts", "aot",
                 # 2022's: runner.py's compilers (nvprims_nvfuser, trt) and torch._dynamo.optimizations'
                 # backends (nvprims_aten, aot_nvprims_nvfuser, fx2trt, torch2trt, onnx2tensorrt, onnx2tf, taso)
                 "nvprims", "trt", "fx2trt", "torch2trt", "onnx2tensorrt", "onnx2tf", "taso"}
# the other words of a backend variant's name: CI's (.ci/pytorch/test.sh test_perf_for_dashboard:
# `${backend}_no_cudagraphs_`, `_with_cudagraphs_freezing_autotune_`, `_dynamic_`, `_cpp_wrapper_`,
# `_export_`, `_aot_inductor_`, `_max_autotune_`, `_deterministic_perf_`, `_cudagraphs_low_precision_`),
# HUD's compiler names (torchci/lib/benchmark/compilerUtils.ts), ci_expected_accuracy's configurations
# (`dynamo_eager`, `cpu_inductor_amp_freezing`, `dynamic_cpu_max_autotune_inductor_amp_freezing`,
# `inductor_distributed`), torch._dynamo's `aot_eager_decomp_partition`, and pytorch/benchmark's
# torchao runs (`torchao_<quantization>_<suite>_...`)
VARIANT_WORDS = {"no", "with", "dynamic", "cpp", "wrapper", "freezing", "max", "autotune", "export", "deterministic",
                 "perf", "low", "precision", "dynamo", "distributed", "decomp", "partition", "noquant",
                 "autoquant", "int8dynamic", "int8weightonly", "int4weightonly",
                 # 2022's variants: nvprims_aten, aot_nop, aot_ts_nvfuser_nodecomps, nnc_ofi (optimize_for_inference)
                 "aten", "nop", "nodecomps", "ofi"}
# intel-xpu-backend-for-triton's modes `inference-no-freezing` and `inference-with-freezing` are mode
# inference and a variant of the backend kept as written (`inductor_no_freezing`): HUD names freezing
# runs a compiler of their own, and that script's plain `inference` is the one with --freezing.
_DATE = re.compile(r"^(19|20)\d{6}$")


@dataclass
class Named:
    """The fields a name said, and where each came from (`file name`, `folder <name>`)."""
    values: Fields = field(default_factory=lambda: dict.fromkeys(FIELDS))
    said_by: dict[str, str] = field(default_factory=dict)

    def put(self, key: str, value: str | None, source: str) -> None:
        if value and more_specific(self.values.get(key), value) == value != self.values.get(key):
            self.values[key] = value
            self.said_by[key] = source


def more_specific(said: str | None, other: str | None) -> str | None:
    """The value of a field that `said` (the source that ranks first) and `other` name: `said`, unless
    `other` is the same word made more specific (`amp` then `amp_bf16`, `inductor` then
    `inductor_with_cudagraphs`), as the harness's JSON names only `--amp` and `--backend` where the
    file's name and the runner's columns say which precision and which of CI's configurations."""
    if said is None or (other is not None and other.startswith(said + "_")):
        return other
    return said


def _word(token: str, table: dict[str, str]) -> str | None:
    """`token` in a vocabulary, also with a shard number glued on (`inference_timm_models0.csv`)."""
    return table.get(token) or table.get(token.rstrip("0123456789")) if token else None


def _dtype_pair(tokens: list[str], i: int) -> str | None:
    """`amp_bf16`, `amp_fp16` at tokens[i]: one dtype of two words."""
    return AMP_DTYPES.get(tokens[i + 1]) if tokens[i] == "amp" and i + 1 < len(tokens) else None


def _device(token: str) -> str | None:
    return "cuda" if CUDA_PLATFORM.match(token) else DEVICES.get(token)


def _read(filename: str) -> tuple[Fields, list[str]]:
    """(fields, words): what a harness file's name says, and the words of it that stand where a
    backend is and name none (file_fields, unread_words)."""
    stem = filename.rsplit("/", 1)[-1]
    for ext in (".csv", ".json"):
        stem = stem.removesuffix(ext)
    # the harness and CI join a name's words with `_`; Intel's XPU scripts also with `-`, in the
    # whole name (`inductor-<suite>-<dtype>-...`) or in a mode (`inference-no-freezing`)
    tokens = [t for t in re.split(r"[-_]", stem.lower()) if t]
    out: Fields = dict.fromkeys(FIELDS)
    prefix = next((p for p in BACKEND_PREFIXES if tuple(tokens[:len(p)]) == p), None)
    config: list[str] = []
    suite_seen = False
    i = len(prefix) if prefix else 0
    backend_words: list[str] = []
    in_backend = prefix is not None
    after_device = False
    while i < len(tokens):
        t = tokens[i]
        pair = f"{t}_{tokens[i + 1]}" if i + 1 < len(tokens) else ""
        suite = _word(pair, SUITES) if pair == "timm_models" or pair.startswith("timm_models") else None
        dtype = _dtype_pair(tokens, i)
        step = 2 if suite or dtype else 1
        suite = suite or _word(t, SUITES)
        dtype = dtype or _word(t, DTYPES)
        known = suite or _word(t, MODES) or dtype or _device(t) or t in KIND_WORDS \
            or _DATE.match(t) or t.isdigit()
        if in_backend and not known:
            backend_words.append(t)  # the harness's `--backend`, as given
        else:
            in_backend = False
            if suite:
                out["suite"], suite_seen = out["suite"] or suite, True
            elif _word(t, MODES):
                out["mode"] = out["mode"] or _word(t, MODES)
            elif dtype:
                out["dtype"] = out["dtype"] or dtype
            elif _device(t):
                out["device"] = out["device"] or _device(t)
            elif not known and not (after_device and t not in BACKEND_WORDS | VARIANT_WORDS):
                config.append(t)
        after_device = bool(_device(t)) and not in_backend
        i += step
    words = backend_words if prefix is not None else config
    if prefix is None and not suite_seen and not out["mode"] and not set(words) & BACKEND_WORDS:
        return out, []  # a name that is no configuration at all (`results.csv`): nothing stands for a backend
    unread = [w for w in words if w not in BACKEND_WORDS | VARIANT_WORDS]
    if words and not unread and set(words) & BACKEND_WORDS:
        # the harness's `--backend`; CI's names: the configuration words around the suite are HUD's
        # compiler name; `inductor.csv`, `aot_eager.csv`: a name that is a backend alone
        out["backend"] = "_".join(words)
    return out, unread


def file_fields(filename: str) -> Fields:
    """suite, backend, mode, dtype and device named by a harness file's name (None where it names none)."""
    return _read(filename)[0]


def unread_words(filename: str) -> list[str]:
    """The words of a file's name that stand where its backend is and are none of a backend's words
    (a user's prefix, a word of a variant nobody here knows): why the name gave no backend."""
    return _read(filename)[1]


def folder_fields(folders: list[str]) -> Named:
    """What the folders a file lies in say (nearest first): a vocabulary word of suite, mode, dtype or
    device among a folder name's words (split on -, _ and .), a backend where a whole folder name is
    one (`aot_eager/`); a folder whose words name two values of one field says nothing of it."""
    named = Named()
    for folder in folders:
        tokens = [t for t in re.split(r"[-_.\s]+", folder.lower()) if t]
        found: dict[str, set[str]] = {k: set() for k in FIELDS}
        for j, t in enumerate(tokens):
            pair = f"{t}_{tokens[j + 1]}" if j + 1 < len(tokens) else ""
            if j and _dtype_pair(tokens, j - 1):
                continue  # the second word of `amp_bf16`, said with the first
            for key, value in (("suite", SUITES.get(pair) or SUITES.get(t)), ("mode", MODES.get(t)),
                               ("dtype", _dtype_pair(tokens, j) or DTYPES.get(t)), ("device", _device(t))):
                if value:
                    found[key].add(value)
        whole = file_fields(folder + ".csv")
        if whole["backend"] and "_".join(tokens) == whole["backend"]:
            found["backend"].add(whole["backend"])
        for key, values in found.items():
            if len(values) == 1:
                named.put(key, values.pop(), f"folder {folder}")
    return named
