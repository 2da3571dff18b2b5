"""torch-spyre's provenance sidecars (tests/fixtures/spyre_provenance: torch-spyre's own two examples
of the format, and a hand-written profile of the first), checked against the JSON read here."""

from __future__ import annotations

import json
import shutil

from click.testing import CliRunner

from inductor_warehouse.cli.main import cli
from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import FIXTURES, reader

SIDECARS = FIXTURES / "spyre_provenance"
LEVEL0 = SIDECARS / "level0_and_fused"
REPLAY = SIDECARS / "cache_replay"


def _doc(folder):
    return json.loads((folder / "spyre_provenance.json").read_text())


def test_both_sidecars_ingest_with_their_identities_handles_occurrences_and_gaps(tmp_path):
    db = str(tmp_path / "wh.duckdb")
    s = ingest_paths([SIDECARS], db)
    assert (s.runs, s.errors) == (2, 0)
    con = reader(db)
    for folder in (LEVEL0, REPLAY):
        doc = _doc(folder)
        [(run_id, device)] = con.execute("SELECT run_id, device FROM runs WHERE source_path = ?", [str(folder)]).fetchall()
        assert device == "spyre"

        def rows(sql, run_id=run_id):
            return con.execute(sql + " WHERE run_id = ? ORDER BY ALL", [run_id]).fetchall()

        assert rows("SELECT identity_key, event_name_base FROM spyre_kernel_identities") == sorted(
            (k, v["eventNameBase"]) for k, v in doc["kernelIdentities"].items())
        assert rows("SELECT handle_id, source_line, fused_from FROM spyre_handles") == sorted(
            (k, (h["source"] or {}).get("start_line"), h["fused_from"]) for k, h in doc["handles"].items())
        assert rows("SELECT occurrence_key, identity_key, compile_key, compiler_kernel_name, aliases "
                    "FROM spyre_kernel_occurrences") == sorted(
            (k, o["identityKey"], o["compileId"], o["compilerKernelName"], [r["alias"] for r in o["registrations"]])
            for k, o in doc["kernelOccurrences"].items())
        gaps = sorted((k, p["upstreamJoin"]) for k, p in doc["upstreamProjections"].items() if p["upstreamJoin"] != "ok")
        assert rows("SELECT compile_key, upstream_join FROM spyre_compiles") == sorted(
            (k, p["upstreamJoin"]) for k, p in doc["upstreamProjections"].items())
        assert gaps and {g for _, g in gaps} <= {"unavailable-provenance-level-0", "unavailable-cache-replay"}
    # the gap of the level-0 compile and of the cache replay, by the canned query
    out = CliRunner().invoke(cli, ["--db", db, "query", "spyre/provenance_gaps", "--format", "csv"]).output
    assert sorted(line.split(",")[1] for line in out.splitlines()[1:]) == [
        "unavailable-cache-replay", "unavailable-provenance-level-0"]
    # lineage only from the projection that joined: its kernel stack traces, by alias
    joined = next(p for p in _doc(LEVEL0)["upstreamProjections"].values() if p["upstreamJoin"] == "ok")
    lineage = con.execute("SELECT kernel_name || ':' || debug_handle, user_line FROM lineage l JOIN runs r USING (run_id) "
                          "WHERE r.source_path = ? ORDER BY ALL", [str(LEVEL0)]).fetchall()
    assert {k for k, _ in lineage} == set(joined["kernelStackTraces"])
    assert con.execute("SELECT count(*) FROM lineage l JOIN runs r USING (run_id) WHERE r.source_path = ?",
                       [str(REPLAY)]).fetchone()[0] == 0


def test_a_profiler_event_joins_to_its_kernel_and_source_lines(tmp_path):
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([LEVEL0], db)
    profile = json.loads((LEVEL0 / "profile.json").read_text())
    doc = _doc(LEVEL0)
    out = CliRunner().invoke(cli, ["--db", db, "query", "spyre/profiled_kernels", "--format", "json"]).output
    rows = {r["event_name_base"]: r for r in json.loads(out)}
    for key, identity in doc["kernelIdentities"].items():
        events = [e for e in profile["traceEvents"] if e["name"].split("#")[0] == identity["eventNameBase"]]
        row = rows[identity["eventNameBase"]]
        assert (row["identity_key"], row["calls"]) == (key, len(events))
        assert row["total_us"] == (sum(e["dur"] for e in events) if events else None)
        # the source lines of its handles, and of the handles they were fused from
        handles, lines = list(identity["directHandleIds"]), set()
        while handles:
            h = doc["handles"][handles.pop()]
            handles += h["fused_from"]
            if h["source"]:
                lines.add(f"{h['source']['file']}:{h['source']['start_line']}")
        assert (row["source_lines"] or "") == ", ".join(sorted(lines))
    assert rows["spyre_kernel_v1_fused_linear_relu_atqydvnuutl766na"]["source_lines"] == \
        "/workspace/model.py:17, /workspace/model.py:18"


def test_identities_become_the_spyre_kernels_identity(tmp_path):
    """A Spyre run whose kernel folder is the one the sidecar's occurrence names: its kernels'
    signature carries the identity, so runs match them by it (a composed fixture: the sdsc spec of
    torch-spyre's `add` example in a folder named as the sidecar's compiler kernel)."""
    run = tmp_path / "run"
    shutil.copytree(FIXTURES / "spyre" / "add", run / "inductor-spyre" / "sdsc_fused_linear_relu_0")
    shutil.copy(LEVEL0 / "spyre_provenance.json", run / "spyre_provenance.json")
    db = str(tmp_path / "wh.duckdb")
    s = ingest_paths([run], db)
    assert (s.runs, s.errors) == (1, 0)
    signatures = reader(db).execute("SELECT DISTINCT signature FROM kernels").fetchall()
    assert signatures == [("spyre_kernel_v1_fused_linear_relu_atqydvnuutl766na:add",)]


def _apply(doc, mutation):
    """A JSON-pointer replace or add, as torch-spyre's fixture manifest states its mutations."""
    *parents, last = mutation["path"].lstrip("/").split("/")
    target = doc
    for part in parents:
        target = target[int(part)] if isinstance(target, list) else target[part]
    if isinstance(target, list):
        target[int(last)] = mutation["value"]
    else:
        assert mutation["operation"] == "add" or last in target
        target[last] = mutation["value"]
    return doc


def test_the_sidecars_torch_spyres_manifest_calls_invalid_are_warned_of(tmp_path):
    """Each mutation of torch-spyre's fixture manifest is a damaged file: a warning of its run, whose
    records stay; the two valid files it lists give none."""
    manifest = json.loads((SIDECARS / "fixture_manifest.json").read_text())
    bases = {"valid_v1.json": LEVEL0, "valid_cache_replay_v1.json": REPLAY}
    assert {v["path"] for v in manifest["valid"]} == set(bases)
    for case in manifest["invalid"]:
        folder = tmp_path / case["name"]
        folder.mkdir()
        doc = _apply(_doc(bases[case["base"]]), case["mutation"])
        (folder / "spyre_provenance.json").write_text(json.dumps(doc))
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([tmp_path / c["name"] for c in manifest["invalid"]] + list(bases.values()), db)
    con = reader(db)
    warned = dict(con.execute("SELECT r.source_path, count(*) FROM ingest_errors e JOIN runs r USING (run_id) "
                              "WHERE e.severity = 'warning' GROUP BY 1").fetchall())
    assert {p.rsplit("/", 1)[-1] for p in warned} == {c["name"] for c in manifest["invalid"]}
    assert con.execute("SELECT count(*) FROM ingest_errors WHERE severity <> 'warning'").fetchone() == (0,)
    # the records of a damaged file stay: its identities, as the file holds them
    dangling = tmp_path / "dangling-handle-reference"
    assert con.execute("SELECT handle_ids FROM spyre_kernel_identities i JOIN runs r USING (run_id) "
                       "WHERE r.source_path = ? AND identity_key = 'atqydvnuutl766na'",
                       [str(dangling)]).fetchone() == (["999"],)


def test_a_partial_join_keeps_the_stack_traces_it_captured(tmp_path):
    """torch-spyre's writer marks a compile `partial` when some registered kernels lack upstream
    records, and still writes the stack traces it captured: they are lineage, as an ok join's are
    (the level-0 example with its joined compile marked partial, a state the writer's validator accepts)."""
    doc = _doc(LEVEL0)
    key, joined = next((k, p) for k, p in doc["upstreamProjections"].items() if p["upstreamJoin"] == "ok")
    joined["upstreamJoin"] = "partial"
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "spyre_provenance.json").write_text(json.dumps(doc))
    db = str(tmp_path / "wh.duckdb")
    s = ingest_paths([tmp_path / "run"], db)
    assert (s.errors, s.warnings) == (0, 0)
    con = reader(db)
    assert {k for (k,) in con.execute("SELECT kernel_name || ':' || debug_handle FROM lineage").fetchall()} == set(
        joined["kernelStackTraces"])
    assert con.execute("SELECT upstream_join FROM spyre_compiles WHERE compile_key = ?", [key]).fetchone() == ("partial",)
