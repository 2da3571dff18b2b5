"""Texts that repeat from run to run are kept once (migration 0009): guard trees in guard_trees by
md5, and compilations.record without inductor_config (a column) and inductor_provenance (the
kernel stack-trace artifacts again). Expected values are read from the logs here, line by line."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from collections import Counter
from pathlib import Path

import duckdb

from inductor_warehouse.ingest.load import ingest_paths
from inductor_warehouse.schema.ddl import migration_files
from inductor_warehouse.store.opening import connect
from tests.conftest import FIXTURES, reader

LOGS = [FIXTURES / "torch_trace" / "cpu-torch2.14.1-ca" / "dedicated_log_torch_trace_5bvb0xvn.log.gz",
        FIXTURES / "torch_trace" / "cpu-torch2.13-dynamic" / "dedicated_log_torch_trace_r5h24g62.log.gz"]


def _records(path: Path) -> list[tuple[dict, str | None]]:
    """(header JSON, payload text or None) of every record of a trace log."""
    out: list[tuple[dict, list[str] | None]] = []
    with gzip.open(path, "rt", encoding="utf-8", newline="\n") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("\t"):
                out[-1][1].append(line[1:])
            elif "] {" in line:
                header = json.loads(line[line.index("] {") + 2:])
                out.append((header, [] if "has_payload" in header else None))
    return [(h, "\n".join(p) if p is not None else None) for h, p in out]


def _guard_trees(path: Path) -> list[str]:
    return [text for h, text in _records(path) if "dynamo_cpp_guards_str" in h]


def _runs(tmp_path: Path, copies: int) -> Path:
    """Each log as up to 3 runs of their own: a run id is a hash of the bytes, so each copy is
    stored otherwise (as written, plain, gzipped again at level 1)."""
    root = tmp_path / "runs"
    for i, log in enumerate(LOGS):
        for c in range(copies):
            (root / f"{i}-{c}").mkdir(parents=True)
            if c == 0:
                shutil.copyfile(log, root / f"{i}-{c}" / log.name)
            elif c == 1:
                (root / f"{i}-{c}" / log.name.removesuffix(".gz")).write_bytes(gzip.decompress(log.read_bytes()))
            else:
                (root / f"{i}-{c}" / log.name).write_bytes(gzip.compress(gzip.decompress(log.read_bytes()), 1))
    return root


def test_a_guard_tree_is_kept_once_however_many_runs_have_it(tmp_path):
    db = str(tmp_path / "wh.duckdb")
    assert ingest_paths([_runs(tmp_path, copies=3)], db).runs == 2 * 3
    con = reader(db)
    try:
        for log in LOGS:
            expected = Counter(_guard_trees(log))
            for (run_id,) in con.execute("SELECT run_id FROM runs WHERE source_path LIKE ?",
                                         [f"%{log.name.removesuffix('.gz')}%"]).fetchall():
                got = con.execute("SELECT t.text FROM guards g JOIN guard_trees t USING (tree_hash) WHERE g.run_id = ?",
                                  [run_id]).fetchall()
                assert Counter(t for (t,) in got) == expected, log.name
        distinct = {t for log in LOGS for t in _guard_trees(log)}
        assert con.execute("SELECT count(*) FROM guard_trees").fetchone()[0] == len(distinct)
        assert {h for (h,) in con.execute("SELECT tree_hash FROM guard_trees").fetchall()} == {
            hashlib.md5(t.encode()).hexdigest() for t in distinct}
        assert con.execute("SELECT count(*) FROM guards").fetchone()[0] == 3 * sum(len(_guard_trees(x)) for x in LOGS)
    finally:
        con.close()


def test_a_guard_tree_that_is_not_utf8_is_kept_by_the_md5_of_what_is_stored(tmp_path):
    """A tree's key is the md5 of its text's UTF-8 bytes. The md5 the has_payload check made of the
    payload is that key only where the payload decodes as it is; a byte that does not (here one
    put into a real log's first guard tree) is stored as U+FFFD, and the key is of what is stored."""
    lines = gzip.decompress(LOGS[0].read_bytes()).split(b"\n")
    first = next(i for i, line in enumerate(lines) if b'"dynamo_cpp_guards_str"' in line and b"\t" not in line[:1])
    lines[first + 1] = lines[first + 1] + b"\xff"
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / LOGS[0].name.removesuffix(".gz")).write_bytes(b"\n".join(lines))
    db = str(tmp_path / "wh.duckdb")
    summary = ingest_paths([tmp_path / "run"], db)
    assert summary.runs == 1
    assert any("md5 mismatch on a dynamo_cpp_guards_str record" in e["message"] for e in summary.error_rows)
    con = reader(db)
    try:
        trees = dict(con.execute("SELECT tree_hash, text FROM guard_trees").fetchall())
        assert all(h == hashlib.md5(t.encode()).hexdigest() for h, t in trees.items())
        damaged = [t for t in trees.values() if "\ufffd" in t]
        first_line, _, rest = _guard_trees(LOGS[0])[0].partition("\n")
        assert damaged == [f"{first_line}\ufffd\n{rest}"]
        assert len(trees) == len(set(_guard_trees(LOGS[0])))
    finally:
        con.close()


def test_a_record_leaves_out_what_is_kept_elsewhere(tmp_path):
    """inductor_provenance of a compilation_metrics record is the kernel stack-trace payloads of
    that compile (checked here on the log), which lineage holds; inductor_config is a column."""
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([_runs(tmp_path, copies=1)], db)
    con = reader(db)
    try:
        for log in LOGS:
            records = _records(log)
            stacks = [text for h, text in records
                      if h.get("artifact", {}).get("name") == "inductor_provenance_tracking_kernel_stack_traces"]
            metrics = [h["compilation_metrics"] for h, _ in records if "compilation_metrics" in h]
            provenance = [p for m in metrics for p in m.get("inductor_provenance") or ()]
            assert provenance and set(provenance) == set(stacks), log.name
            rows = con.execute("""SELECT c.record, c.inductor_config FROM compilations c JOIN runs r USING (run_id)
                                  WHERE r.source_path LIKE ? AND c.record_kind = 'compilation_metrics'
                                  ORDER BY c.start_time_us""", [f"%{log.name}"]).fetchall()
            assert len(rows) == len(metrics)
            for (record, config), m in zip(rows, sorted(metrics, key=lambda m: m.get("start_time_us") or 0), strict=True):
                assert json.loads(record) == {k: v for k, v in m.items()
                                              if k not in ("inductor_config", "inductor_provenance")}
                assert config == m.get("inductor_config")
    finally:
        con.close()


def test_an_older_warehouse_moves_its_guard_trees_and_trims_its_records(tmp_path):
    db = str(tmp_path / "old.duckdb")
    con = duckdb.connect(db)
    con.execute("CREATE TABLE _migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMP)")
    for path in migration_files():
        if path.stem < "0009":
            con.execute(path.read_text())
            con.execute("INSERT INTO _migrations VALUES (?, now())", [path.stem])
    tree = _guard_trees(LOGS[0])[0]
    con.executemany("INSERT INTO guards (run_id, compile_id, guard_count, text) VALUES (?, ?, ?, ?)",
                    [["r1", "0/0", 41, tree], ["r2", "0/0", 41, tree], ["r2", "1/0", 0, None]])
    con.execute("""INSERT INTO compilations (run_id, compile_id, record, inductor_config) VALUES
        ('r1', '0/0', '{"co_name": "f", "inductor_config": "{}", "inductor_provenance": ["x"], "guard_count": 3}', '{}'),
        ('r1', '1/0', '{"co_name": "g"}', NULL)""")
    con.close()
    con = connect(db)
    try:
        assert con.execute("SELECT count(*), any_value(text) FROM guard_trees").fetchone() == (1, tree)
        assert con.execute("SELECT run_id, compile_id, guard_count, tree_hash FROM guards ORDER BY ALL").fetchall() == [
            ("r1", "0/0", 41, hashlib.md5(tree.encode()).hexdigest()), ("r2", "0/0", 41, hashlib.md5(tree.encode()).hexdigest()),
            ("r2", "1/0", 0, None)]
        assert "text" not in [c for (c,) in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'guards'").fetchall()]
        records = [json.loads(r) for (r,) in con.execute("SELECT record FROM compilations ORDER BY compile_id").fetchall()]
        assert records == [{"co_name": "f", "guard_count": 3}, {"co_name": "g"}]
        assert con.execute("SELECT inductor_config FROM compilations ORDER BY compile_id").fetchall() == [("{}",), (None,)]
    finally:
        con.close()


def test_a_batch_keeps_the_least_text_of_a_hash_wherever_it_comes_from():
    """The writer's choice among texts of one key (kernel sources normalising alike): the least of the
    batch's and the warehouse's, whichever run of the batch has it; a held key is written again only
    when a lesser text replaces it. Keyed by the exact text (no text column named), a key is written
    once and a held one never."""
    import pyarrow as pa

    from inductor_warehouse.ingest.write import _kept_of_each

    def part(rows):
        return pa.table({"source_hash": [h for h, _ in rows], "source": [t for _, t in rows]})

    def kept(parts, held, text="source"):
        new, replaced = _kept_of_each(parts, "source_hash", text, held)
        return sorted(zip(new.column("source_hash").to_pylist(), new.column("source").to_pylist(), strict=True)), replaced

    runs = [part([("a", "a1"), ("b", "b2"), ("c", "c1")]), part([("b", "b1"), ("d", "d3")]),
            part([("d", "d2"), ("e", "e3")])]
    held = {"c": "c0", "e": "e9"}
    want = [("a", "a1"), ("b", "b1"), ("d", "d2"), ("e", "e3")], ["e"]
    assert kept(runs, held) == want
    assert kept(runs[::-1], held) == want
    assert kept([runs[1], runs[0], runs[2]], held) == want
    assert kept(runs[:1], {"a": "a0", "b": "b0", "c": "c0"}) == ([], [])
    # keys of the exact text: the first row of a key the warehouse lacks
    assert kept(runs, dict.fromkeys(["c", "e"]), None) == ([("a", "a1"), ("b", "b2"), ("d", "d3")], [])


def test_a_text_no_run_names_any_more_goes_with_the_run_that_named_it(tmp_path):
    """A run replaced by a run of other files (its folder's log changed): the texts only it named go
    in the same transaction, the others' stay, and every text a row names is there."""
    from inductor_warehouse.schema.ddl import SHARED_REFERENCES, SHARED_TEXTS

    root = _runs(tmp_path, copies=1)
    db = str(tmp_path / "wh.duckdb")
    assert ingest_paths([root], db).runs == 2
    with reader(db) as con:
        before = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in SHARED_TEXTS}
    # the second log cut to its first record: the run in that folder is replaced, naming no text
    log = root / "1-0" / LOGS[1].name
    first = gzip.decompress(log.read_bytes()).split(b"\n", 1)[0] + b"\n"
    log.write_bytes(gzip.compress(first))
    assert ingest_paths([root], db).runs == 1
    with reader(db) as con:
        trees = {t for (t,) in con.execute("SELECT text FROM guard_trees").fetchall()}
        assert trees == set(_guard_trees(LOGS[0]))  # the first log's, read here, and no other
        for table, (key, _) in SHARED_TEXTS.items():
            named = " UNION ".join(f"SELECT {c} FROM {ref} WHERE {c} IS NOT NULL" for ref, c in SHARED_REFERENCES[table])
            assert con.execute(f"SELECT count(*) FROM {table} WHERE {key} NOT IN ({named})").fetchone()[0] == 0, table
            assert con.execute(f"SELECT count(*) FROM ({named}) n WHERE n.{SHARED_REFERENCES[table][0][1]} "
                               f"NOT IN (SELECT {key} FROM {table})").fetchone()[0] == 0, table
        after = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in SHARED_TEXTS}
    assert after["guard_trees"] < before["guard_trees"] and after["kernel_sources"] < before["kernel_sources"]


def test_every_column_naming_a_shared_text_is_listed():
    """SHARED_REFERENCES names every column of the schema that holds a shared text's hash, so that a
    text one of them still names is never deleted."""
    import re

    from inductor_warehouse.schema.ddl import CURRENT, SHARED_REFERENCES, SHARED_TEXTS

    schema = CURRENT.read_text()
    columns = {(t, c) for t, body in re.findall(r"CREATE TABLE (\w+)\((.*?)\n\);", schema, re.S)
               for c in re.findall(r"^\s+\"?(\w+)\"? ", body, re.M)}
    keys = {k for k, _ in SHARED_TEXTS.values()}
    holding = {(t, c) for t, c in columns if (c in keys or c.endswith("config_hash")) and t not in SHARED_TEXTS}
    assert holding == {r for refs in SHARED_REFERENCES.values() for r in refs}
