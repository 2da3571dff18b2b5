"""fx_graph_runnable parser: build and config metadata from real repro scripts."""

from __future__ import annotations

import re

from pathlib import Path

import pytest

from inductor_warehouse.ingest.parsers.fx_graph_runnable import parse_fx_graph_runnable
from tests.conftest import FIXTURES, GPU_TRAIN_RUN, fixture_files, unpacked_corpus

TREE = FIXTURES / "debug_tree"
RUNNABLES = fixture_files("fx_graph_runnable.py")
ARCHIVES = ("cpu-torch2.6.0.tar.xz", "cpu-torch2.13.tar.xz", "cpu-torch2.14.1.tar.xz", "gpu-h200-torch2.11.tar.xz")


def _facts(pattern: str, root: Path = TREE) -> dict:
    parsed = parse_fx_graph_runnable(next(root.rglob(f"{pattern}/fx_graph_runnable.py")).read_text())
    assert parsed.problems == []
    return parsed.facts


def test_gpu_build_device_config_and_env():
    facts = _facts("model__0_forward_1.0", GPU_TRAIN_RUN)
    # lines 53-55 and 66 of the file
    assert facts["compiler_version"] == "2.11.0+cu130"
    assert facts["compiler_commit"] == "70d99e998b4955e0049d13a98d77ae1b14db1f45"
    assert facts["cuda_version"] == "13.0"
    assert (facts["device_name"], facts["device_count"]) == ("NVIDIA H200", 1)
    assert facts["inductor_config"] == {"trace.enabled": "False", "trace.save_real_tensors": "False"}
    assert facts["env"]["TORCHINDUCTOR_CACHE_DIR"] == "/tmp/torchinductor_user/tmpvven5a7r"
    assert facts["env"]["TORCH_LOGS"] == "graph_breaks,recompiles,fusion"


def test_cpu_wheel_has_no_cuda_version_or_device():
    facts = _facts("cpu-2.13-cnn/**/model__0_backward_3.1")
    # `# torch cuda version: None` on a +cpu wheel
    assert facts["compiler_version"] == "2.13.0+cpu" and "cuda_version" not in facts
    assert "device_name" not in facts
    assert facts["inductor_config"]["unroll_reductions_threshold"] == "8"


def test_torch_26_has_no_env_lines_and_more_config():
    facts = _facts("cpu-2.6.0-transformer/**/model__0_forward_1.0")
    assert (facts["compiler_version"], facts["cuda_version"]) == ("2.6.0+cu124", "12.4")
    assert facts["compiler_commit"] == "2236df1770800ffea5697b11b0bb0d910b2e59e1"
    assert "env" not in facts
    assert facts["inductor_config"]["rocm.arch"] == "[]"


@pytest.mark.parametrize("path", RUNNABLES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_config_lines_counted_by_grep(path):
    text = path.read_text()
    facts = parse_fx_graph_runnable(text).facts
    assert len(facts["inductor_config"]) == len(set(re.findall(r"^torch\._inductor\.config\.([\w.]+) = ", text, re.M)))
    assert len(facts.get("env", {})) == len(set(re.findall(r"^os\.environ\['(\w+)'\] = ", text, re.M)))


def test_not_a_runnable_is_a_warning():
    parsed = parse_fx_graph_runnable((FIXTURES / "broken/cut_fx_graph/fx_graph_readable.py").read_text())
    assert parsed.facts == {} and [p.severity for p in parsed.problems] == ["warning"]


@pytest.mark.corpus
@pytest.mark.parametrize("archive", ARCHIVES)
def test_every_corpus_runnable_names_its_torch_version(archive):
    files = sorted(unpacked_corpus(archive).rglob("fx_graph_runnable.py"))
    assert files
    for path in files:
        text = path.read_text()
        parsed = parse_fx_graph_runnable(text)
        assert parsed.problems == [], path
        assert parsed.facts["compiler_version"] == re.search(r"^# torch version: (\S+)", text, re.M).group(1)
