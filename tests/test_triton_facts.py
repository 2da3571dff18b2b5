"""Triton's facts of each generated kernel: the cache's metadata, the trace's triton_kernel_info, the
autotuner's debug log; and a kernel whose num_warps changed between two Inductor configs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from inductor_warehouse.ingest.joins import choose_triton as _choose_triton
from inductor_warehouse.ingest.discover import discover
from inductor_warehouse.ingest.parsers.triton_cache import is_triton_metadata, parse_triton_metadata
from tests.test_harness import _query, _sql, harness  # noqa: F401 (the module fixture)

CACHE = Path(__file__).parent / "fixtures" / "triton_cache"
META = next(CACHE.glob("*/triton_poi_fused_add_0.json"))


def test_cache_metadata():
    data = META.read_bytes()
    assert is_triton_metadata(data[:8192])
    rows = parse_triton_metadata(data, META.parent.name).rows["triton_kernels"]
    doc = json.loads(data)
    assert rows == [{
        "compile_id": None, "kernel_name": "triton_poi_fused_add_0", "source": "triton_cache",
        "cache_key": META.parent.name, "num_warps": doc["num_warps"], "num_stages": doc["num_stages"],
        "num_ctas": doc["num_ctas"], "maxnreg": None, "shared_bytes": doc["shared"], "target": "cuda:90",
        "triton_version": doc["triton_version"], "config": None, "chosen": None, "autotune_state": None,
        "num_configs": None, "compile_time_us": None, "n_regs": None, "n_spills": None,
        "metadata": {k: v for k, v in doc.items() if k != "extern_libs"},
    }]
    assert not is_triton_metadata((CACHE.parent / "harness" / "cpu-2.13-deit_tiny-performance.json").read_bytes()[:8192])
    bad = parse_triton_metadata(b'{"num_warps": 4, "target": {}}', "x")
    assert bad.problems[0].message == "Triton cache metadata without a kernel name"


def test_discovery_reads_the_metadata_and_skips_ir_and_groups(tmp_path):
    run = tmp_path / "run"
    (run / "triton_cache").mkdir(parents=True)
    (run / "manifest.json").write_text('{"model": "m"}')
    import shutil
    shutil.copytree(META.parent, run / "triton_cache" / META.parent.name)
    found = discover([run])
    kinds = sorted((a.path.name, a.kind) for a in found.runs[0].artifacts)
    assert kinds == [("manifest.json", "manifest"), ("triton_poi_fused_add_0.json", "triton_cache")]
    assert found.skipped["unrecognised file"] == 2  # the group file and the IR, never read


def test_the_binary_that_ran_is_the_one_the_trace_or_log_names():
    def cache(name, warps, stages):
        return {"kernel_name": name, "source": "triton_cache", "num_warps": warps, "num_stages": stages, "chosen": None}
    rows = [cache("k_tuned", 4, 1), cache("k_tuned", 8, 1), cache("k_single", 2, 1), cache("k_unknown", 4, 1),
            cache("k_unknown", 8, 1), cache("k_lone", 4, 2),
            {"kernel_name": "k_tuned", "source": "torch_logs", "num_warps": 8, "num_stages": 1, "chosen": True},
            {"kernel_name": "k_single", "source": "torch_trace", "num_warps": 2, "num_stages": 1, "chosen": True,
             "num_configs": 1},
            {"kernel_name": "k_lone", "source": "torch_trace", "num_warps": None, "num_stages": None, "chosen": None,
             "num_configs": 1}]
    _choose_triton(rows)
    chosen = {(r["kernel_name"], r["num_warps"]): r["chosen"] for r in rows if r["source"] == "triton_cache"}
    assert chosen == {("k_tuned", 4): False, ("k_tuned", 8): True, ("k_single", 2): True,
                      ("k_unknown", 4): None, ("k_unknown", 8): None, ("k_lone", 4): True}


_BEST = re.compile(r"Best config for (\S+): .*?num_warps: (\d+), .*nreg (\d+), nspill (\d+), #shared-mem (\d+)$")


def _best_configs(log: Path) -> dict[str, tuple]:
    """The autotuner's choices, straight from stderr."""
    return {m[1]: (int(m[2]), int(m[3]), int(m[4]), int(m[5]))
            for line in log.read_text().splitlines() if (m := _BEST.search(line))}


def _only_configs(trace: Path) -> dict[str, int]:
    """num_warps of each kernel that had one config, from the trace's triton_kernel_info payloads."""
    out, lines = {}, trace.read_text().splitlines()
    for i, line in enumerate(lines):
        if '"name": "triton_kernel_info"' in line:
            for kernel, info in json.loads(lines[i + 1].lstrip("\t")).items():
                if "only_config" in info:
                    out[kernel] = dict(info["only_config"])["num_warps"]
    return out


def test_gpu_facts_and_a_kernel_whose_num_warps_changed(harness):  # noqa: F811
    db, root = harness
    gpu = root / "harness-timm" / "gpu-torch2.11"
    model = "mobilenetv2_100"
    best = _best_configs(gpu / "default" / "performance" / model / "torch_logs.txt")
    single = gpu / "single_config" / "performance" / model
    only = _only_configs(next((single / "trace").glob("*.log")))
    assert len(best) == 24 and len(only) >= 24
    # autotune_pointwise=False leaves reductions autotuned: their choice is in that run's log
    head = {**only, **{k: v[0] for k, v in _best_configs(single / "torch_logs.txt").items()}}
    assert len(head) > len(only)
    run = _sql(db, "SELECT run_id FROM runs WHERE source_path LIKE '%gpu-torch2.11/default/performance/mobilenetv2_100'")
    facts = {r["kernel_name"]: r for r in _query(db, "triton/kernel_facts", run=run[0]["run_id"])}
    for kernel, (warps, regs, spills, shared) in best.items():
        f = facts[kernel]
        assert (f["num_warps"], f["n_regs"], f["n_spills"], f["shared_bytes"]) == (warps, regs, spills, shared)
    changes = [r for r in _query(db, "triton/config_changes", key="variant", base="default", head="single_config",
                                 pair_on="mode,dtype,batch,device,harness")
               if r["model"] == model]
    want = {k for k in best if k in head and best[k][0] != head[k]}
    assert want and {r["base_kernel"] for r in changes} == want
    for r in changes:
        assert (r["base_num_warps"], r["head_num_warps"]) == (best[r["base_kernel"]][0], head[r["head_kernel"]])
    # registers and spills only where the autotuner logged them: not for the single config's kernels
    assert all((r["head_n_regs"] is None) == (r["head_kernel"] in only) for r in changes)
    assert _sql(db, "SELECT count(*) AS n FROM triton_kernels WHERE source = 'torch_logs' AND n_regs IS NULL")[0]["n"] == 0


def _warps_by_hand(root, model: str) -> tuple[dict, dict]:
    """Each kernel's num_warps in the default and the single-config GPU capture, read from the
    autotuner's log and the trace's only_config (as above)."""
    gpu = root / "harness-timm" / "gpu-torch2.11"
    best = {k: v[0] for k, v in _best_configs(gpu / "default" / "performance" / model / "torch_logs.txt").items()}
    single = gpu / "single_config" / "performance" / model
    head = {**_only_configs(next((single / "trace").glob("*.log"))),
            **{k: v[0] for k, v in _best_configs(single / "torch_logs.txt").items()}}
    return best, head


@pytest.mark.parametrize("model", ["mobilenetv2_100", "deit_tiny_patch16_224.fb_in1k"])
def test_compare_kernels_and_changes_show_the_kernels_whose_num_warps_changed(harness, model):  # noqa: F811
    """`iwh compare --kernels` of the two GPU configs, and `iwh changes --series variant`, list the
    Triton kernels whose num_warps moved, with each side's warps as the logs say."""
    from inductor_warehouse.analysis.changes import TRITON, changes
    from inductor_warehouse.analysis.compare import compare
    from inductor_warehouse.analysis.kernel_diff import kernel_diff
    from inductor_warehouse.analysis.render import render
    from inductor_warehouse.store.api import Warehouse

    db, root = harness
    best, head = _warps_by_hand(root, model)
    want = {k: (best[k], head[k]) for k in best if k in head and best[k] != head[k]}
    assert want
    with Warehouse(db) as wh:
        diff = kernel_diff(wh.con, "variant=default,harness=performance", "variant=single_config,harness=performance",
                           model)
        text = render(compare(wh.con, "variant=default", "variant=single_config", model), "table", diff)
        report = changes(wh.con, model, series_label="variant", metrics=(TRITON,))
    assert {t.head_kernel: (t.base_num_warps, t.head_num_warps) for t in diff.triton} == want
    assert f"Triton launch configs: {len(want)} kernel{'s' if len(want) > 1 else ''} changed warps, stages or shared " \
           "memory" in text
    shown = [c for p in report.points for c in p.changes]
    assert {c.detail.split(";")[0] for c in shown} == set(want)
    for c in shown:
        b, h = want[c.detail.split(";")[0]]
        assert c.before.startswith(f"warps={b} ") and c.after.startswith(f"warps={h} ")
    assert {p.position for p in report.points} == {2} and all(p.before_at == "default" for p in report.points)


def _timed_configs(log: Path) -> dict[str, list[tuple]]:
    """Each kernel the autotuner benchmarked: the (num_warps, nreg, nspill, shared) of every config it
    timed, read from stderr: the lines after `Benchmark all input configs for K, get:` up to its
    `Best config` line."""
    out: dict[str, list[tuple]] = {}
    kernel = None
    for line in log.read_text().splitlines():
        if "Benchmark all input configs for " in line:
            kernel = line.rsplit("Benchmark all input configs for ", 1)[1].removesuffix(", get:")
            out[kernel] = []
        elif "Best config for " in line:
            kernel = None
        elif kernel and (m := re.search(r"num_warps: (\d+), .*nreg (\d+), nspill (\d+), #shared-mem (\d+)$", line)):
            out[kernel].append(tuple(int(x) for x in m.groups()))
    return out


def test_every_config_the_autotuner_timed_with_its_registers_and_spills(harness):  # noqa: F811
    """The autotuner's debug log lists each config it timed: each is a row (triton/autotune_candidates),
    the one its Best config line names chosen; the kernel's facts stay the chosen one's."""
    db, root = harness
    folder = root / "harness-timm" / "gpu-torch2.11" / "default" / "performance" / "mobilenetv2_100"
    timed, best = _timed_configs(folder / "torch_logs.txt"), _best_configs(folder / "torch_logs.txt")
    assert len(timed) == 24 and sum(len(v) for v in timed.values()) > len(timed)
    run = _sql(db, f"SELECT run_id FROM runs WHERE source_path = '{folder}'")[0]["run_id"]
    rows = _query(db, "triton/autotune_candidates", run=run)
    got: dict[str, list] = {}
    for r in rows:
        got.setdefault(r["kernel_name"], []).append(r)
    assert got.keys() == timed.keys()
    for kernel, configs in timed.items():
        assert sorted((r["num_warps"], r["n_regs"], r["n_spills"], r["shared_bytes"]) for r in got[kernel]) == \
            sorted(configs), kernel
        chosen = [r for r in got[kernel] if r["chosen"]]
        assert len(chosen) == 1 and (chosen[0]["num_warps"], chosen[0]["n_regs"], chosen[0]["n_spills"],
                                     chosen[0]["shared_bytes"]) == best[kernel]
    facts = {r["kernel_name"]: r for r in _query(db, "triton/kernel_facts", run=run)}
    assert all((facts[k]["n_regs"], facts[k]["n_spills"]) == (best[k][1], best[k][2]) for k in timed)
