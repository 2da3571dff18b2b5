"""A run's node counts and fusion rate are unknown when some of its graphs' are (a graph whose IR never
came, a cache hit that wrote none), and a side's fusion rate is the rate of the node counts it shows.
On the old-caches captures (tests/fixtures/old_caches: 2.4.1 and 2.5.1 cold runs whose in-run FX cache
hit left graph 6's folder empty; 2.13 whole) and the cold-warm fixture's 2.5.1 cold run
(tests/fixtures/cache_answers: graph 0's IR alone). Expected values are read from the debug trees'
folders and from plain SQL over the graphs table."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from inductor_warehouse.analysis.compare import compare
from inductor_warehouse.analysis.metrics import side_samples
from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import FIXTURES, reader
from tests.test_dashboards import frame_with, open_page, texts, with_copy


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[str, dict[str, Path]]:
    root = tmp_path_factory.mktemp("fusion_counts")
    for name, archive in (("oc", "old_caches/cpu-torch2.3-2.13-old-caches.tar.xz"),
                          ("cw", "cache_answers/cpu-torch2.5-2.13-cold-warm.tar.xz")):
        with tarfile.open(FIXTURES / archive) as tf:
            tf.extractall(root / name, filter="data")
    picked = {"2.4.1": root / "oc" / "2.4.1" / "gbreak_dyn-cold", "2.5.1": root / "oc" / "2.5.1" / "gbreak_dyn-cold",
              "2.5.1 trimmed": root / "cw" / "2.5.1" / "gbreak_dyn-cold", "2.13": root / "oc" / "2.13" / "gbreak_dyn-cold"}
    db = str(root / "w.duckdb")
    summary = ingest_paths(list(picked.values()), db)
    assert summary.runs == 4 and summary.errors == 0
    return with_copy(db), picked


def _without_ir(run: Path) -> int:
    """Graph folders of the run's debug tree that hold no ir_pre_fusion.txt."""
    return sum(1 for d in run.rglob("torchinductor/model_*") if d.is_dir() and not (d / "ir_pre_fusion.txt").exists())


def test_a_run_with_graphs_of_unknown_nodes_has_unknown_nodes_and_rate(runs):
    db, picked = runs
    con = reader(db)
    try:
        for name, run in picked.items():
            graphs, known, pre, post, rate = con.execute(
                "SELECT (SELECT count(*) FROM graphs WHERE run_id = m.run_id), "
                "(SELECT count(pre_fusion_nodes) FROM graphs WHERE run_id = m.run_id), "
                "pre_fusion_nodes, post_fusion_nodes, fusion_rate FROM run_metrics m "
                "JOIN runs r USING (run_id) WHERE r.source_path = ?", [str(run)]).fetchone()
            partial = _without_ir(run) > 0 or known < graphs
            if name == "2.13":
                assert not partial and known == graphs > 0
                assert rate == pytest.approx(1 - post / pre)
            else:  # graph 6 an in-run cache hit (the old caches); graphs 1-6 trimmed away (cold-warm)
                assert partial and 0 < known < graphs, name
                assert (pre, post, rate) == (None, None, None), name
    finally:
        con.close()


def test_compare_page_calls_no_partial_sum_a_fusion_regression(runs, monkeypatch):
    """2.4.1 -> 2.5.1: every run of gbreak_dyn has a graph of unknown nodes, so no side knows its
    fusion rate, and nothing about fusion is a regression (main called 16.7% -> 14.3% one, exact, the
    head's 2/2 node counts beside it)."""
    db, _ = runs
    at = open_page(db, "compare", monkeypatch, compare_base="compiler=2.4.1+cu121",
                   compare_head="compiler=2.5.1+cu124")
    said = texts(at)
    assert "fusion" not in " ".join(w.value for w in at.warning), said
    result = compare(reader(db), "compiler=2.4.1+cu121", "compiler=2.5.1+cu124")
    [pair] = result.pairs
    for m in ("pre_fusion_nodes", "post_fusion_nodes", "fusion_rate"):
        assert (pair.metrics[m].base, pair.metrics[m].head) == (None, None), m


def test_a_sides_fusion_rate_follows_from_its_node_counts(runs, monkeypatch):
    """2.5.1 -> 2.13: the base is unknown (n/a), the head's rate is 1 - post / pre of the node counts
    the same table shows."""
    db, picked = runs
    at = open_page(db, "compare", monkeypatch, compare_base="compiler=2.5.1+cu124", compare_head="compiler=2.13.0+cpu")
    row = frame_with(at, "model", "fusion_rate_head").iloc[0]
    pre, post = int(row["pre_fusion_nodes_head"]), int(row["post_fusion_nodes_head"])
    assert row["fusion_rate_head"] == f"{100 * (1 - post / pre):.1f}%" and row["fusion_rate_base"] == "n/a"
    con = reader(db)
    try:
        assert con.execute("SELECT sum(pre_fusion_nodes), sum(post_fusion_nodes) FROM graphs g JOIN runs r "
                           "USING (run_key) WHERE r.source_path = ?", [str(picked["2.13"])]).fetchone() == (pre, post)
    finally:
        con.close()


def test_several_runs_make_the_rate_of_their_median_counts():
    """Runs whose node counts differ (12/10 and 2/2, the two 2.5.1 cold runs' known sums on main): the
    side shows each count's lower median, and the rate of those two, not 1 - 12/14 of the summed counts."""
    side = [{"pre_fusion_nodes": 12, "post_fusion_nodes": 10}, {"pre_fusion_nodes": 2, "post_fusion_nodes": 2},
            {"pre_fusion_nodes": 12, "post_fusion_nodes": 9}]
    assert side_samples(side, "pre_fusion_nodes") == [12.0, 2.0, 12.0]
    assert side_samples(side, "fusion_rate") == [pytest.approx(1 - 9 / 12)]
    assert side_samples(side[:2], "fusion_rate") == [0.0]  # the lower medians: 2 and 2


def test_trends_fusion_line_goes_through_its_dots(runs, monkeypatch):
    """The Trends fusion-rate line goes through the value of its point's dots, and a point of unknown
    nodes is no dot (main drew 2.5.1's line at 14.3%, between dots of 16.7% and 0.0%: partial sums)."""
    import json

    import pyarrow as pa

    db, _ = runs
    at = open_page(db, "trends", monkeypatch)
    [chart] = [c.proto for c in at.get("vega_lite_chart")
               if json.loads(c.proto.spec)["layer"][0]["encoding"]["y"]["field"] == "fusion_rate_point"]
    dots = pa.ipc.open_stream(chart.data.data).read_all().to_pandas()
    assert list(dots["compiler_version"]) == ["2.13.0+cpu"]
    assert (dots["fusion_rate"] == dots["fusion_rate_point"]).all(), dots
    assert "off its line" not in texts(at)
