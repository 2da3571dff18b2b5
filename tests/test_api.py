"""The Python API: canned and ad hoc queries as Polars frames, on a read-only warehouse."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from inductor_warehouse.analysis.compare import compare
from inductor_warehouse.ingest.load import ingest_paths
from inductor_warehouse.store.api import Warehouse
from inductor_warehouse.schema.queries import QueryError

RUNS = Path(__file__).resolve().parent / "fixtures" / "runs"
TRANSFORMER = RUNS / "cpu-torch2.13" / "transformer"
MLP = RUNS / "cpu-torch2.14.1" / "mlp"
KERNEL_DEF = re.compile(r"^\w+ = async_compile\.cpp_pybinding\(", re.M)


def generated_kernels(run: Path) -> int:
    return sum(len(KERNEL_DEF.findall(f.read_text()))
               for f in run.glob("torch_compile_debug/*/torchinductor/*/output_code.py"))


@pytest.fixture(scope="module")
def wh_path(tmp_path_factory) -> str:
    db = str(tmp_path_factory.mktemp("api") / "wh.duckdb")
    ingest_paths([str(TRANSFORMER), str(MLP)], db)
    return db


def test_canned_query_returns_a_polars_frame(wh_path):
    with Warehouse(wh_path) as wh:
        df = wh.query("fusion_rate_by_model_version", model="transformer")
    assert isinstance(df, pl.DataFrame)
    assert df.select("model", "compiler_version", "kernels").rows() == [
        ("transformer", "2.13.0+cpu", generated_kernels(TRANSFORMER))]


def test_parameters_come_as_strings_from_the_cli_too(wh_path):
    with Warehouse(wh_path) as wh:
        assert wh.query("kernels/top_extern_ops", limit="1").height == 1
        with pytest.raises(QueryError, match="takes: model, compiler, limit"):
            wh.query("kernels/top_extern_ops", modle="mlp")


def test_ad_hoc_sql_is_read_only(wh_path):
    """Refused by the allow-list (QueryRefused), not only by the read-only connection below it."""
    from inductor_warehouse.schema.readonly import QueryRefused

    with Warehouse(wh_path) as wh:
        assert wh.sql("SELECT count(*) AS n FROM runs")["n"].to_list() == [2]
        with pytest.raises(QueryRefused, match="read-only here"):
            wh.sql("CREATE TABLE x (a INT)")
        with pytest.raises(QueryRefused, match=r"read_csv\(\) is not read here"):
            wh.sql("SELECT * FROM read_csv('/etc/passwd')")


def test_compare_takes_a_warehouse(wh_path):
    with Warehouse(wh_path) as wh:
        result = compare(wh, "compiler=2.13.0", "compiler=2.14.1")
    # one model a side, and they differ: nothing is like for like
    assert not result.pairs and result.base_only == ["transformer"] and result.head_only == ["mlp"]
    assert result.warnings == ["no model is present on both sides: nothing to compare"]
