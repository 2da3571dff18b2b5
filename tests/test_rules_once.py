"""Rules the ingest (Python) and the queries (SQL) both apply, written once: each test fails when
the two uses part again."""

from __future__ import annotations

import re
import tarfile
from pathlib import PurePosixPath

import duckdb
import pytest

from inductor_warehouse.ingest import sources
from inductor_warehouse.ingest.debug_tree import compile_order, graph_folder
from inductor_warehouse.ingest.listing import in_graph_folders
from inductor_warehouse.ingest.parsers.kernel_rows import generated_row
from inductor_warehouse.ingest.parsers.trace_records import release as trace_release
from inductor_warehouse.schema import ddl
from inductor_warehouse.schema.releases import release_key, release_parts
from inductor_warehouse.schema.kernel_names import TRITON_PREFIX_CATEGORY, VIEW_FILE, name_category_sql
from tests.conftest import FIXTURES


@pytest.fixture(scope="module")
def con():
    con = duckdb.connect()
    ddl.create_current(con)
    yield con
    con.close()


def _sql(con, expr: str, *args):
    return con.execute(f"SELECT {expr}", list(args)).fetchone()[0]


def test_name_category_view_is_written_from_the_mapping():
    assert VIEW_FILE.read_text() == name_category_sql(), f"{VIEW_FILE.name} is out of date: run `make schema`"


@pytest.mark.parametrize("prefix", [*TRITON_PREFIX_CATEGORY, "unk", "xyz"])
def test_sql_and_ingest_give_a_kernel_name_one_category(con, prefix):
    """A profiled kernel's name (SQL) and an output-code kernel without its decorator (the ingest)
    read the same category off `triton_<prefix>_`; `unk` (no single decorator) gives none in both."""
    name = f"triton_{prefix}_fused_add_0"
    ingest = generated_row(name, "triton", 0, None, None, 1, None)["category"]
    assert _sql(con, "inductor_name_category(?)", name) == ingest
    assert (ingest is not None) == (prefix in TRITON_PREFIX_CATEGORY)


def test_name_category_agrees_with_the_decorator_of_real_code(con):
    """In Inductor's own code, the category a kernel's name says is the heuristics decorator it is
    compiled with (read here from the files, independently of the parser)."""
    seen = set()
    for path in sorted(FIXTURES.rglob("output_code.py")):
        text = path.read_text(errors="replace")
        for m in re.finditer(r"^(triton_\w+) = async_compile\.triton\('\1', '''(.*?)'''", text, re.S | re.M):
            decorator = re.search(r"@triton_heuristics\.(\w+)\(", m[2])
            if decorator is None or decorator[1] not in TRITON_PREFIX_CATEGORY.values():
                continue
            assert _sql(con, "inductor_name_category(?)", m[1]) == decorator[1], (path, m[1])
            seen.add(decorator[1])
    assert {"pointwise", "persistent_reduction", "template"} <= seen


def test_kernel_feeding_kinds_are_the_ingest_register_of_them(con):
    """views/12_workloads.sql's feeds_kernels, which kernels_unseen and run_rollups_of ask, is true of
    exactly the artifact kinds whose parser fills the kernels table (ingest/sources.py), so a new such
    kind is not missed."""
    kinds = [*sources.KINDS, sources.OTHER, sources.UNREADABLE, sources.EMPTY_GRAPH_FOLDER]
    said = {k for k in kinds if _sql(con, "feeds_kernels(?)", k)}
    assert said == {s.kind for s in sources.SOURCES if "kernels" in s.tables}


def test_views_ask_the_kernel_kinds_and_harness_rule_once():
    """No view spells out the list of kernel-feeding kinds or of harness-only kinds but the macro
    that defines it."""
    for path in ddl.view_files():
        for spelled in ("'output_code', 'torch_trace'", "'harness', 'manifest', 'other'"):
            assert path.read_text().count(spelled) == (path.name == "12_workloads.sql"), (path.name, spelled)


# torch.__version__ as releases, nightlies, source builds and CI write it, the forms a manifest or a
# harness label gives, and texts that name no release
VERSIONS = ["2.13.0+cpu", "2.11.0+cu130", "2.14.1+cu130", "2.14.0a0+git1234567", "2.6.0.dev20240915+cu124",
            "2.6.0.dev20241010", "2.6.0", "2.6", "2.13+", "2.4.1+cu121", "2.13.0.1", "2.1.0", "1.13.1",
            "20240915", "", None, "unknown", "v2.13.0", "nightly"]


def test_python_orders_releases_as_the_views_do(con):
    """schema/releases.py (`iwh changes`, the suite page, the trace's release) reads a version as
    views/30_version_key.sql's version_key and sorts versions as its release_order."""
    for v in VERSIONS:
        parts = release_parts(v)
        assert _sql(con, "version_key(?)", v) == (list(parts) if parts else [None]), v
        assert trace_release(v) == (parts[:2] if len(parts) >= 2 else None), v
    by_sql = [v for (v,) in con.execute("SELECT v FROM unnest(?::VARCHAR[]) t(v) ORDER BY release_order(v, NULL)",
                                         [VERSIONS]).fetchall()]
    assert [v or "" for v in by_sql] == sorted((v or "" for v in VERSIONS), key=release_key)
    assert release_parts("2.6.0.dev20240915+cu124") == (2, 6, 0) and trace_release("2.13+") == (2, 13)


def _graph_folder_names() -> set[str]:
    """The names of every folder where the listing (ingest/listing.py) takes graph folders to be, in
    the fixtures' debug trees and the capture archives'."""
    names = {p.name for p in FIXTURES.rglob("*") if p.is_dir() and in_graph_folders(p)}
    for archive in sorted((FIXTURES / "captures").glob("*.tar.xz")):
        with tarfile.open(archive) as tar:
            names |= {PurePosixPath(m.name).name for m in tar.getmembers()
                      if m.isdir() and in_graph_folders(PurePosixPath(m.name))}
    return names


def test_graph_folder_names_are_read_in_one_place():
    """ingest/debug_tree.py's graph_folder, which the debug tree's graphs and the empty folders'
    (ingest/joins.py) both take their ids from, reads the name of every real folder where the
    listing finds graph folders (discovery, object storage and the sources alike) as its parts say:
    `<model>__<aot id>_<phase>_<nth>.<counter>`, or `<model>___<nth>.<counter>` with no AOT id."""
    names = _graph_folder_names()
    assert any("___" in n for n in names) and any("_backward_" in n for n in names)
    for name in names:
        model, rest = name.rsplit("__", 1)
        parts, counter = rest.split("_"), int(rest.rsplit(".", 1)[1])
        named = graph_folder(name)
        assert named is not None, name
        if len(parts) == 3:
            assert named == (f"{parts[0]}_{parts[1]}", int(parts[0]), parts[1], counter), name
        else:
            assert named == (name, None, None, counter), name
    assert graph_folder("output_code.py") is None and compile_order("a/model__0_forward_1.7")[0] == 7


@pytest.mark.parametrize("temperature", [None, "off", "cold", "partial", "warm", "unknown"])
def test_compare_reads_a_runs_cache_kind_as_the_sql_does(con, temperature):
    """`iwh compare` keeps a side's runs of one cache kind in Python (analysis/metrics.py) as the
    queries do in SQL (views/06_point_values.sql): the same kind of every temperature, and the same
    order of preference."""
    from inductor_warehouse.analysis.metrics import CACHE_KINDS, compile_kind

    kind = compile_kind(temperature)
    assert kind == _sql(con, "compile_kind(?)", temperature)
    assert CACHE_KINDS.index(kind) == _sql(con, "compile_kind_order(?)", temperature)


@pytest.mark.parametrize("counts", [(3, 4), (0, 0)])
def test_compare_pools_a_hit_rate_as_the_sql_does(con, counts):
    """A side's hit rate in `iwh compare` (analysis/metrics.py POOLED) is the SQL macro's of the same
    counts (views/05_rates.sql: hit_rate(hits, lookups))."""
    from inductor_warehouse.analysis.metrics import POOLED, pooled

    num, den, _ = POOLED["fx_cache_hit_rate"]
    mine = pooled([{num: counts[0], den: counts[1]}], "fx_cache_hit_rate")
    theirs = _sql(con, "hit_rate(?::BIGINT, ?::BIGINT)", counts[0], counts[1])
    assert mine == pytest.approx(theirs) if theirs is not None else mine is None


@pytest.mark.parametrize("runs", [((10, 6),), ((0, 0),), ((12, 10), (2, 2), (12, 9)), ((12, 10), (14, 11))])
def test_compare_takes_a_fusion_rate_as_the_sql_does(con, runs):
    """A side's fusion rate in `iwh compare` (analysis/metrics.py OF_COUNTS) is the rate of its runs'
    lower-median node counts, as views/06_point_values.sql takes a point's:
    fusion_rate(count_of_runs(pre), count_of_runs(post)) over the same (pre, post) runs."""
    from inductor_warehouse.analysis.metrics import side_samples

    mine = side_samples([{"pre_fusion_nodes": pre, "post_fusion_nodes": post} for pre, post in runs], "fusion_rate")
    values = ", ".join(f"({pre}::BIGINT, {post}::BIGINT)" for pre, post in runs)
    (theirs,) = con.execute(f"SELECT fusion_rate(count_of_runs(pre), count_of_runs(post)) "
                            f"FROM (VALUES {values}) t(pre, post)").fetchone()
    assert mine == ([pytest.approx(theirs)] if theirs is not None else [])
