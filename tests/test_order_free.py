"""Identical input, identical warehouse: the same runs ingested in other orders and batchings (parse
workers, which hand runs over as they end; the runs in reverse; a batch a run; two ingests of
halves, in either order) leave every table's rows as one ingest leaves them, kernel_sources' texts
included (of kernel texts normalising alike the least is kept, schema/ddl.py LEAST_TEXTS).

Left out of the comparison, as order-dependent by design:
- run_key: a run's key is the next free one when it is written (the writer finds rows by it);
- ingested_at: the timestamp of the ingest that wrote the row (two ingests, two timestamps);
- ingest_seconds: how long a run took to parse, which varies from one ingest to the next;
as tests/test_table_checksums.py leaves them out (and the files' mtimes), whose checksums these are.
"""

from __future__ import annotations

import shutil
from collections import defaultdict
from pathlib import Path

import duckdb
import pytest

from inductor_warehouse.ingest import load
from inductor_warehouse.ingest.load import ingest_paths
from inductor_warehouse.schema import queries
from inductor_warehouse.store.api import Warehouse
from tests import test_queries_golden as golden
from tests.conftest import (BROKEN_TRACE, FIXTURES, GPU_TRAIN_RUN, HARNESS_EXPECTED, VOLATILE, gpu_trace_logs, reader,
                            unpack_cpu_corpora, unpack_gpu_captures, unpack_harness_captures)
from tests.test_table_checksums import table_checksums as tables


def _ingest(monkeypatch, paths: list[Path], db: str, *, jobs: int = 1, batch_runs: int = load.BATCH_RUNS,
            pick=lambda runs: runs, force: bool = False):
    """An ingest (its summary) of the runs `pick` keeps of those found under paths, in its order."""
    found_by = load.discover_anywhere

    def discover(paths):
        found = found_by(paths)
        found.runs = pick(found.runs)
        return found

    with monkeypatch.context() as m:
        m.setattr(load, "discover_anywhere", discover)
        m.setattr(load, "BATCH_RUNS", batch_runs)
        return ingest_paths(paths, db, jobs=jobs, force=force)


def _orders(monkeypatch, paths: list[Path], root: Path, tmp_path: Path, *, keep=lambda runs: runs,
            halves: bool = True) -> str:
    """One ingest in one process of the runs `keep` keeps; asserts that each other order and batching
    (with `halves`, two ingests of halves too) leaves every table as it does; returns its warehouse."""
    one = str(tmp_path / f"one-{halves}.duckdb")
    _ingest(monkeypatch, paths, one, pick=keep)
    want = tables(one, root)
    assert int(want["runs"].split(":")[0]) > 4

    def first(runs):
        runs = keep(runs)
        return runs[:len(runs) // 2]

    def second(runs):
        runs = keep(runs)
        return runs[len(runs) // 2:]

    ways = {
        "--jobs 2": [{"jobs": 2, "pick": keep}],
        "reversed, a batch a run": [{"batch_runs": 1, "pick": lambda runs: keep(runs)[::-1]}],
    }
    if halves:
        ways |= {"halves, second first, batches of 3": [{"pick": second, "batch_runs": 3}, {"pick": first, "batch_runs": 3}],
                 "halves, --jobs 2": [{"pick": first, "jobs": 2}, {"pick": second, "jobs": 2}]}
    for i, (way, ingests) in enumerate(ways.items()):
        db = str(tmp_path / f"way-{halves}-{i}.duckdb")
        for kwargs in ingests:
            _ingest(monkeypatch, paths, db, **kwargs)
        got = tables(db, root)
        differ = {t: (want[t], got.get(t)) for t in want if got.get(t) != want[t]}
        assert not differ and set(got) == set(want), f"{way}: tables whose rows differ from one ingest's: {differ}"
    return one


def _texts_of(db: str) -> dict[str, str]:
    con = reader(db)
    try:
        return dict(con.execute("SELECT source_hash, source FROM kernel_sources").fetchall())
    finally:
        con.close()


def _shared_by_runs(db: str) -> list[str]:
    """The source paths of the runs holding a kernel hash another run holds too."""
    con = reader(db)
    try:
        return [p for (p,) in con.execute("""
            WITH shared AS (SELECT source_hash FROM kernels WHERE source_hash IS NOT NULL
                            GROUP BY 1 HAVING count(DISTINCT run_id) > 1)
            SELECT DISTINCT r.source_path FROM kernels JOIN shared USING (source_hash) JOIN runs r USING (run_id)
            ORDER BY 1""").fetchall()]
    finally:
        con.close()


def _only(path: str):
    return lambda runs: [r for r in runs if r.source_path == path]


def _named_otherwise(db: str) -> list[tuple[str, str]]:
    """(run id, source path) of two runs with kernels of one hash and different names (so their texts,
    which hold the name, differ), by run id; none when no two runs have such kernels."""
    con = reader(db)
    try:
        named = con.execute("SELECT DISTINCT k.source_hash, k.kernel_name, k.run_id, r.source_path FROM kernels k "
                            "JOIN runs r USING (run_id) WHERE k.source_hash IS NOT NULL ORDER BY ALL").fetchall()
    finally:
        con.close()
    by_hash: defaultdict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for h, name, run_id, path in named:
        by_hash[h].append((name, run_id, path))
    for rows in by_hash.values():
        for name, run_id, path in rows:
            other = next(((r, p) for n, r, p in rows if n != name and r != run_id), None)
            if other:
                return sorted([(run_id, path), other])
    return []


def test_fixture_runs_are_stored_alike_in_any_order(monkeypatch, tmp_path):
    """tests/fixtures runs/ (debug trees of four releases), torch_trace/ (trace logs of every era),
    spyre/ (whose mul and mul_bf16 have a kernel of one hash, their texts differing in what the hash
    leaves out), harness/ (HUD's kept points are made again as runs come), and the CPU corpora
    bundled with the demo (five models by three releases). Then the rule itself: for each hash, the
    least of the texts the runs have of it (each run's read from a warehouse of that run alone) is
    kept, whichever of two runs of different texts comes first, and when either is written again."""
    root = tmp_path / "in"
    for part in ("runs", "torch_trace", "spyre", "harness"):
        shutil.copytree(FIXTURES / part, root / part)
    paths = [root / "runs", root / "torch_trace", root / "spyre", root / "harness", *unpack_cpu_corpora(root)]
    # runs/cpu-* are copies of some of the corpora's runs: one ingest stores each once, from the
    # least folder (test_a_run_in_two_folders_is_stored_from_the_least); two ingests, from the
    # later one's (a moved folder), so the halves leave them out
    _orders(monkeypatch, paths, root, tmp_path, halves=False)
    copies = {str(p) for p in (root / "runs").glob("cpu-*/*")}
    one = _orders(monkeypatch, paths, root, tmp_path, keep=lambda runs: [r for r in runs if r.source_path not in copies])

    texts: defaultdict[str, dict[str, str]] = defaultdict(dict)  # hash -> {text: a run's source path}
    for i, path in enumerate(_shared_by_runs(one)):
        db = str(tmp_path / f"alone-{i}.duckdb")
        _ingest(monkeypatch, paths, db, pick=_only(path))
        for h, text in _texts_of(db).items():
            texts[h].setdefault(text, path)
    kept = _texts_of(one)
    assert {h: kept[h] for h in texts} == {h: min(t) for h, t in texts.items()}
    several = sorted(h for h, t in texts.items() if len(t) > 1)
    assert several, "no two runs of the fixtures have different texts of one kernel hash: nothing was chosen"

    h = several[0]
    least = min(texts[h])
    a, b = texts[h][least], texts[h][max(texts[h])]
    assert a != b
    for order in ((a, b), (b, a)):
        db = str(tmp_path / f"pair-{order[0] == a}.duckdb")
        for path in order:
            _ingest(monkeypatch, paths, db, pick=_only(path))
        assert _texts_of(db)[h] == least
        # each run written again (forced: its files are unchanged), the one whose text is kept too
        for path in (a, b):
            _ingest(monkeypatch, paths, db, pick=_only(path), force=True)
            assert _texts_of(db)[h] == least


@pytest.mark.corpus
def test_gpu_corpus_logs_are_stored_alike_in_any_order(monkeypatch, tmp_path):
    """The 67 GPU runs' TORCH_TRACE logs (bench's trace section): many kernels of one hash and
    several names across models."""
    root = gpu_trace_logs(tmp_path)
    one = _orders(monkeypatch, [root], root, tmp_path)
    assert len(_named_otherwise(one)) == 2


def test_a_run_in_two_folders_is_stored_from_the_least(monkeypatch, tmp_path):
    """The same files in two folders are one run (its id is a hash of them): one ingest stores it
    once, from the least folder, whichever is parsed first, and counts the other as stored with it."""
    run = FIXTURES / "runs" / "cpu-torch2.14.1" / "mlp"
    for name in ("b", "a", "c"):
        shutil.copytree(run, tmp_path / "in" / name / "mlp")
    for kwargs in ({}, {"jobs": 2}, {"batch_runs": 1, "pick": lambda runs: runs[::-1]}):
        db = str(tmp_path / f"{len(kwargs)}-{kwargs.get('jobs')}.duckdb")
        summary = _ingest(monkeypatch, [tmp_path / "in"], db, **kwargs)
        assert (summary.runs, summary.replaced) == (1, 2)
        con = reader(db)
        try:
            assert con.execute("SELECT source_path FROM runs").fetchall() == [(str(tmp_path / "in" / "a" / "mlp"),)]
            # its files once
            assert con.execute("SELECT count(DISTINCT run_id), count(*) = count(DISTINCT path) FROM artifacts").fetchall() == [
                (1, True)]
        finally:
            con.close()


# canned queries asked once more with other parameters than the golden test's, where ties can meet:
# every run's Triton facts (kernel names several graphs give), every workload's latest run, a GPU
# run's lines and a profiled graph's provenance
MORE_PARAMS = [("triton/kernel_facts", {}), ("dashboard/latest_per_workload", {"compilers": "2.13"}),
               ("lineage/source_line_kernels", {"run": golden.GPU_MLP_TRAIN}),
               ("explore/provenance_links", {"run_id": golden.GPU_MLP_TRAIN, "graph_id": "0_forward"}),
               ("dashboard/trend_points", {}), ("overview/runs", {})]


def _answers(wh: Path, root: Path) -> dict[str, str]:
    """Every canned query's CSV (as the golden test writes it, less the columns that say when or in
    which order runs were written) on the fixture warehouse `wh`/fixtures.duckdb, the harness
    queries' on `wh`/harness.duckdb."""
    out = {}
    for q in queries.all_queries():
        db = wh / ("harness.duckdb" if q.area in golden.HARNESS_AREAS or q.name in golden.HARNESS_QUERIES
                   else "fixtures.duckdb")
        for i, params in enumerate([golden._params(q), *(p for name, p in MORE_PARAMS if name == q.name)]):
            with Warehouse(str(db)) as w:
                df = w.query(q.name, **params)
            out[f"{q.name} {i}"] = golden.golden_csv(df.drop([c for c in df.columns if c in VOLATILE]), str(root))
    return out


def _rewrite_rows(db: str) -> None:
    """Every table's rows written again in another order (by a hash of the row): the order runs'
    files were parsed in and rows written in, which scans follow, is not the content."""
    con = duckdb.connect(db)
    try:
        tables = [t for (t,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' "
                                            "AND NOT internal ORDER BY 1").fetchall()]
        for t in tables:
            con.execute(f'CREATE TEMP TABLE moved AS SELECT * FROM "{t}" x ORDER BY md5(CAST(x AS VARCHAR))')
            con.execute(f'DELETE FROM "{t}"')
            con.execute(f'INSERT INTO "{t}" SELECT * FROM moved')
            con.execute("DROP TABLE moved")
        con.execute("CHECKPOINT")
    finally:
        con.close()


def test_every_canned_query_answers_alike_in_any_order(monkeypatch, tmp_path):
    """The golden test's two warehouses (conftest.build_fixture_warehouse's runs, the harness
    captures), with a copy of the 2.13 mlp run whose stdout has one more line (another run id, alike
    in release, build and start time: a tie for "latest"), ingested in the order found, in reverse
    with a batch a run, and with every table's rows written again in another order: every canned
    query gives the same bytes."""
    root = tmp_path / "in"
    root.mkdir()
    corpora = unpack_cpu_corpora(root)
    mlp = next(corpora[1].glob("*/mlp"))
    shutil.copytree(mlp, root / "again" / "mlp")
    with open(root / "again" / "mlp" / "stdout.txt", "a") as f:
        f.write("\n")
    captures = unpack_gpu_captures(root)
    gpu = [captures / part / temp / name for part, name in (("train", "mlp__train__fp32__default"),
                                                            ("autotune", "mlp__infer__bf16__max_autotune"))
           for temp in ("cold", "warm")]
    fixtures = [*corpora, root / "again", GPU_TRAIN_RUN, BROKEN_TRACE, *gpu]
    expected = root / "ci_expected_accuracy"
    expected.mkdir()
    shutil.copy(HARNESS_EXPECTED, expected)
    harness = [unpack_harness_captures(root), expected]

    ways = {"found": {}, "reversed, a batch a run": {"batch_runs": 1, "pick": lambda runs: runs[::-1]}}
    answers = {}
    for way, kwargs in ways.items():
        wh = tmp_path / way
        wh.mkdir()
        _ingest(monkeypatch, fixtures, str(wh / "fixtures.duckdb"), **kwargs)
        _ingest(monkeypatch, harness, str(wh / "harness.duckdb"), **kwargs)
        answers[way] = _answers(wh, root)
    rewritten = tmp_path / "rewritten"
    shutil.copytree(tmp_path / "found", rewritten)
    for db in rewritten.glob("*.duckdb"):
        _rewrite_rows(str(db))
    answers["rows written again"] = _answers(rewritten, root)

    want = answers.pop("found")
    assert len(want) > len(queries.all_queries())
    for way, got in answers.items():
        differ = sorted(name for name in want if got[name] != want[name])
        assert not differ, f"{way}: canned queries whose answers differ from the first ingest's: {differ}"
    with Warehouse(str(tmp_path / "found" / "fixtures.duckdb")) as w:
        tied = w.query("dashboard/latest_per_workload", models="mlp", compilers="2.13").to_dicts()
        ids = w.sql("SELECT run_id FROM runs WHERE model = 'mlp' AND compiler_version LIKE '2.13%'")["run_id"].to_list()
    # the copy and its run: one workload, the tie broken by the greater run id
    assert [(r["runs"], r["latest_run_id"]) for r in tied] == [(2, max(ids))] and len(ids) == 2


def test_copies_keep_the_least_folder_at_every_ingest(monkeypatch, tmp_path):
    """Ingested again, two live copies of a run keep the least folder (the one found unchanged where
    it is stored), whichever the ingest parses; the lesser of a new copy and the stored one wins;
    a stored folder that is gone (a moved run) gives way to the folder the run is found in now."""
    run = FIXTURES / "runs" / "cpu-torch2.14.1" / "mlp"
    src = tmp_path / "in"
    for name in ("b", "c"):
        shutil.copytree(run, src / name / "mlp")

    def stored(db: str) -> list[tuple[str]]:
        con = reader(db)
        try:
            return con.execute("SELECT source_path FROM runs").fetchall()
        finally:
            con.close()

    for kwargs in ({}, {"jobs": 2}, {"batch_runs": 1, "pick": lambda runs: runs[::-1]}):
        db = str(tmp_path / f"{len(kwargs)}-{kwargs.get('jobs')}.duckdb")
        _ingest(monkeypatch, [src], db, **kwargs)
        for _ in range(2):  # b unchanged, c parsed again: b stays
            summary = _ingest(monkeypatch, [src], db, **kwargs)
            assert (summary.runs, summary.skipped_runs, summary.replaced) == (0, 1, 1)
            assert stored(db) == [(str(src / "b" / "mlp"),)]
        # c alone: b is not found, so c is where the run is now (a moved folder)
        _ingest(monkeypatch, [src / "c"], db, **kwargs)
        assert stored(db) == [(str(src / "c" / "mlp"),)]
        # both again: c unchanged where stored, b the lesser copy: stored from b, then kept there
        for _ in range(2):
            _ingest(monkeypatch, [src], db, **kwargs)
            assert stored(db) == [(str(src / "b" / "mlp"),)]
    shutil.rmtree(src / "b")  # moved away: the run is stored from c
    _ingest(monkeypatch, [src], db)
    assert stored(db) == [(str(src / "c" / "mlp"),)]
