"""Every canned query, run on a fixture warehouse, must print its reviewed golden CSV.

The warehouse (conftest.build_fixture_warehouse) holds the three CPU corpora (15 runs), one profiled GPU
training run (tests/fixtures/runs/gpu-torch2.11/mlp__train__fp32__default: profiler timings,
fusion decisions) and a trace log with corrupted JSON (tests/fixtures/broken/tlparse_corrupted_json:
ingest errors), so no query answers with an empty table only for lack of data.
`make golden` (pytest --update-golden) rewrites tests/golden/*.csv; review the diff before committing.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from inductor_warehouse.schema import queries
from inductor_warehouse.store.api import Warehouse
from tests.conftest import build_fixture_warehouse, build_harness_warehouse

ROOT = Path(__file__).resolve().parent
GOLDEN = ROOT / "golden"

# run ids are content hashes of the artifacts, the same wherever the fixtures are unpacked
TRANSFORMER_213 = "b6891344ca4df3f9"
GPU_MLP_TRAIN = "95584ecbc78c29d7"
HARNESS_213 = ["f23ee67117a90628", "356261e1c853436f", "974e9861d49999e9", "89daf1ca8b796380", "da92246563c5b04b",
               "4bba370eb5385432"]
HARNESS_2141 = ["005c15b66c6cffcb", "74d8e895c6f85f7d", "66242cf6278ea2df", "bced007458060cd3", "124afb3d7c40e851",
                "4b23b53e91b6ad66"]
# parameters for queries that show one run, graph or kernel; the others run with their defaults
PARAMS = {
    "compare/runs": {"compiler": "2.13.0"},
    "compare/inductor_configs": {"hashes": "bc6edb1d2842dd5798878a1336ac676d,f33a5495d2b9ff745835bf4deaf023a7"},
    "compare/kernels": {"run": TRANSFORMER_213},
    "lineage/source_line_kernels": {"run": TRANSFORMER_213},
    "lineage/model_lines": {"run": TRANSFORMER_213, "base": "b113a93fe1c75eae"},  # against transformer 2.14.1
    "lineage/line_across_runs": {"file": "gen_models.py", "line": 28, "model": "transformer"},
    "compare/fusions": {"run": TRANSFORMER_213},
    "explore/kernel_source": {"source_hash": "fa38fb0f02be12f98731ba0b81a0ca7b"},
    "explore/kernel_code": {"run_id": GPU_MLP_TRAIN, "graph_id": "0_forward", "kernel_name": "triton_poi_fused_gelu_0"},
    "explore/output_code": {"run_id": GPU_MLP_TRAIN, "graph_id": "0_forward"},
    "kernels/kernel_count_trend": {"model": "transformer"},
    "changes/kernel_identities": {"model": "transformer"},
    "changes/kernel_identity_digests": {"model": "transformer"},
    "fusion/fusion_rate_by_model_version": {"label": "mode"},
    "harness/hud_regression": {"base": "2.13", "head": "2.14.1"},
    "harness/graph_break_gate": {"head": "2.14.1"},
    "triton/config_changes": {"key": "variant", "base": "default", "head": "single_config",
                               "pair_on": "mode,dtype,batch,device,harness"},
    "triton/kernel_facts": {"model": "mobilenetv2_100"},
    "triton/autotune_candidates": {"run": "5dc647689c5f6eee"},  # the GPU default config's mobilenetv2_100
    "compile/phase_series": {"model": "transformer", "phase": "inductor"},
    # every workload on one page: the page the query gives by default holds five
    "compile/phase_changes": {"workloads": "1000"},
    "compare/failures": {"runs": "02607c43b480369b,e7eb884f134af3d3"},  # ca 2.14.1 and 2.13
    # the harness captures' CPU runs: 2.13's six (three models, performance and accuracy) and 2.14.1's
    "compare/harness": {"runs": ",".join(HARNESS_213 + HARNESS_2141)},
    "compare/hud_summary": {"base_runs": ",".join(HARNESS_213), "head_runs": ",".join(HARNESS_2141)},
    "dashboard/break_runs": {"cause": "gb0088"},
    # the CPU captures and CI's expected CSV have no variant label: on no point of it
    "dashboard/harness_off_axis": {"key": "variant"},
    "dashboard/break_reasons": {"kind": "failure"},
}
RUN_PARAMS = {"run_id": GPU_MLP_TRAIN}
GRAPH_PARAMS = {"run_id": TRANSFORMER_213, "graph_id": "0_forward"}
# a profiled GPU graph: its extern calls' kernel time (explore/kernels)
PARAMS["explore/kernels"] = {"run_id": GPU_MLP_TRAIN, "graph_id": "0_forward"}
# columns that depend on where and when the fixture warehouse was built, not on the artifacts
VOLATILE = {"ingested_at", "ingest_seconds", "source_path"}


# areas whose queries read the benchmark harness's and Triton's facts, which the shared warehouse
# has none of: they run on the harness captures (conftest.build_harness_warehouse)
HARNESS_AREAS = {"harness", "triton"}
HARNESS_QUERIES = {"compare/harness", "compare/hud_summary", "dashboard/harness_off_axis"}


@pytest.fixture(scope="session")
def golden_db(tmp_path_factory) -> str:
    return build_fixture_warehouse(tmp_path_factory.mktemp("golden_wh"))


@pytest.fixture(scope="session")
def harness_db(tmp_path_factory) -> str:
    return build_harness_warehouse(tmp_path_factory.mktemp("harness_wh"))


def _params(q: queries.Query) -> dict:
    if q.name in PARAMS:
        return PARAMS[q.name]
    names = {p.name for p in q.params}
    if {"run_id", "graph_id"} <= names:
        return GRAPH_PARAMS
    if "run_id" in names:
        return RUN_PARAMS
    return {}


def golden_csv(df: pl.DataFrame, root: str) -> str:
    df = df.drop([c for c in df.columns if c in VOLATILE])
    casts = []
    for name, dtype in df.schema.items():
        if isinstance(dtype, (pl.List, pl.Array)):
            casts.append(pl.format("[{}]", pl.col(name).cast(pl.List(pl.String)).list.join(", ")))
        elif isinstance(dtype, pl.Struct):
            casts.append(pl.col(name).struct.json_encode())
        elif dtype == pl.String:
            casts.append(pl.col(name).str.replace_all(root, "<fixtures>", literal=True))
    if casts:
        df = df.with_columns(casts)
    return df.write_csv(float_precision=6)


@pytest.mark.parametrize("name", [q.name for q in queries.all_queries()])
def test_query_matches_golden(name, request):
    q = queries.get(name)
    golden_db = request.getfixturevalue("harness_db" if q.area in HARNESS_AREAS or q.name in HARNESS_QUERIES
                                        else "golden_db")
    with Warehouse(golden_db) as wh:
        df = wh.query(q.name, **_params(q))
    got = golden_csv(df, str(Path(golden_db).parent))
    path = GOLDEN / (name.replace("/", "__") + ".csv")
    if request.config.getoption("--update-golden"):
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(got)
        return
    if not path.exists():
        pytest.fail(f"no golden file {path.name}: run `make golden` and review the new CSV")
    assert got == path.read_text(), f"{name} differs from {path.name}; if the change is right, `make golden`"


def test_phase_changes_pages_by_workload(golden_db):
    """compile/phase_changes gives a page of workloads, in order of model and workload: the pages
    together are its rows over every workload."""
    with Warehouse(golden_db) as wh:
        every = wh.query("compile/phase_changes", workloads=None).to_dicts()
        n = wh.con.execute("SELECT count(DISTINCT (model, workload)) FROM run_workloads").fetchone()[0]
        # a page whose workloads did not change has no rows: every page is asked for
        pages = [wh.query("compile/phase_changes", workloads=2, offset=i).to_dicts() for i in range(0, n + 2, 2)]
    keys = [sorted({(r["model"], r["workload"]) for r in page}) for page in pages]
    assert sum(1 for page in pages if page) >= 2 and all(len(k) <= 2 for k in keys) and not pages[-1]
    assert [k for ks in keys for k in ks] == sorted({(r["model"], r["workload"]) for r in every})
    assert [r for page in pages for r in page] == every


def test_every_golden_file_has_a_query():
    """A golden CSV whose query was renamed or removed is stale."""
    names = {q.name.replace("/", "__") for q in queries.all_queries()}
    stale = sorted(p.stem for p in GOLDEN.glob("*.csv") if p.stem not in names)
    assert not stale, f"golden files without a query (delete them): {stale}"


def test_no_query_uses_an_empty_window():
    """`count(*) OVER ()` can abort DuckDB 1.5 under concurrent queries and invalidate the database
    for the whole process (duckdb/duckdb#22846; once in `make test` under load): totals are counts."""
    import re

    texts = {q.name: q.sql for q in queries.all_queries()}
    texts.update({p.name: p.read_text() for p in (ROOT.parent / "schema" / "views").glob("*.sql")})
    code = {name: re.sub(r"--[^\n]*", "", sql) for name, sql in texts.items()}
    assert len(code) > 50
    assert not [name for name, sql in code.items() if re.search(r"OVER\s*\(\s*\)", sql, re.I)]
