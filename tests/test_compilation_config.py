"""compilations.inductor_config (migration 0004): filled by the TORCH_TRACE parser, and backfilled
from `record` when an older warehouse is opened."""

from __future__ import annotations

import gzip

import duckdb
import orjson

from inductor_warehouse.ingest.parsers.torch_trace import parse_torch_trace
from inductor_warehouse.schema.ddl import migration_files
from inductor_warehouse.store.opening import connect
from tests.conftest import FIXTURES

LOGS = sorted((FIXTURES / "torch_trace").rglob("*.log.gz"))


def _metrics_from_headers(path) -> list[dict]:
    """compilation_metrics records read straight from the header lines, not through the parser."""
    out = []
    with gzip.open(path, "rb") as f:
        for line in f:
            for kind in (b"compilation_metrics", b"bwd_compilation_metrics"):
                if b'] {"' + kind + b'": ' in line:
                    out.append(orjson.loads(line[line.index(b"] {") + 2:])[kind.decode()])
    return out


def test_inductor_config_is_the_records_own_text():
    with_config = 0
    for path in LOGS:
        with gzip.open(path, "rb") as f:
            rows = parse_torch_trace(f).rows["compilations"]
        expected = [m.get("inductor_config") for m in _metrics_from_headers(path)]
        assert [r["inductor_config"] for r in rows] == expected, path
        with_config += sum(v is not None for v in expected)
    # `zcat LOG | grep -v '^\t' | grep -c '"inductor_config"'`: 2.6.0 ca 4, 2.13 dynamic 6,
    # 2.14.1 ca 14, the AOTInductor provenance log 1, the three other tlparse logs none (their
    # torch wrote no inductor_config); tlparse's seven provenance logs (torch_trace/provenance) one
    # compilation_metrics record each (their other matching lines are compilation_metrics_runtime's)
    assert with_config == 32


def test_an_older_warehouse_gets_the_column_from_its_records(tmp_path):
    db = str(tmp_path / "old.duckdb")
    con = duckdb.connect(db)
    con.execute("CREATE TABLE _migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMP)")
    for path in migration_files():
        if path.stem < "0004":
            con.execute(path.read_text())
            con.execute("INSERT INTO _migrations VALUES (?, now())", [path.stem])
    con.execute("""INSERT INTO compilations (run_id, compile_id, record) VALUES
        ('r1', '0/0', '{"inductor_config": "{\\"max_autotune\\": true}", "co_name": "f"}'),
        ('r1', '1/0', '{"co_name": "g"}')""")
    con.close()
    con = connect(db)
    assert con.execute("SELECT compile_id, inductor_config FROM compilations ORDER BY compile_id").fetchall() == [
        ("0/0", '{"max_autotune": true}'), ("1/0", None)]
    assert con.execute("SELECT record ->> 'co_name' FROM compilations ORDER BY compile_id").fetchall() == [("f",), ("g",)]
