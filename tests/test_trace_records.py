"""The record table of TORCH_TRACE records (ingest/parsers/trace_records.py) against what PyTorch writes: the scan of
every released wheel 2.3.1 to 2.14.1 (tests/fixtures/catalog/trace_artifacts_by_release.txt), the
local torch wheels scanned by zoo/trace_names.py, and the records of real logs."""

from __future__ import annotations

import gzip
import re
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from inductor_warehouse.cli.main import cli
from inductor_warehouse.ingest.parsers.trace_records import TRACE_RECORDS, NAMED_KINDS, UNKNOWN, document, entry_of
from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import FIXTURES, ROOT, corpus_path, reader
from zoo.trace_names import scan

BY_RELEASE = FIXTURES / "catalog" / "trace_artifacts_by_release.txt"
LINE = re.compile(r"^(\S+)\s+(?:REMOVED after (\S+)\s+)?(.+?)\s{2,}(\S+)$")
# names computed at run time that no reading of the code resolves (the record table lists what they are)
UNREADABLE = {"EXPR:f'{structured_log_prefix_fn()}'", "EXPR:self.f_code.co_filename"}
# the wheel scan reads direct call sites only: these moved behind a variable (pgo's event_name in
# 2.10, node_runtime_estimation's artifact_name in 2.11), where zoo/trace_names.py finds them still
# written by 2.13 and 2.14
STILL_WRITTEN = {("artifact", "put_remote_code_state"), ("artifact", "fx_collectives_node_runtime_estimation")}
RECORD = re.compile(rb'^[^\t\n]*?\] \{"(\w+)": (\{"name": "([^"]*)")?', re.M)


def _release(version: str) -> str:
    return ".".join(version.split(".")[:2])


def _by_release():
    for line in BY_RELEASE.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        first, removed, what, _ = LINE.match(line).groups()
        kind, _, name = what.partition(":")
        yield kind, name, _release(first), _release(removed) if removed else ""


def test_every_record_of_every_release_is_in_the_catalog_with_its_releases():
    checked = 0
    for kind, name, first, last in _by_release():
        if kind.startswith("EXPR") or name.startswith("EXPR") or (kind not in NAMED_KINDS and name):
            continue  # computed names: the record table has them as patterns, checked against the wheels below
        entry = entry_of(kind, name if kind in NAMED_KINDS else None)
        assert entry is not None, (kind, name)
        if entry.name == name or kind not in NAMED_KINDS:
            assert (entry.first, entry.last) == (first, "" if (kind, name) in STILL_WRITTEN else last), (kind, name)
        checked += 1
    assert checked > 100


def _local_torch() -> list[Path]:
    return sorted(p for p in ROOT.glob(".venv-torch-*/lib/python*/site-packages/torch") if (p / "__init__.py").exists())


@pytest.mark.torch
@pytest.mark.parametrize("torch_dir", _local_torch(), ids=lambda p: p.parts[-5])
def test_every_name_a_local_torch_can_write_is_in_the_catalog(torch_dir):
    names = scan(torch_dir)
    assert len(names) > 120
    missing = [(k, n) for k, n in sorted(names)
               if n not in UNREADABLE and k not in UNREADABLE and not (k in NAMED_KINDS and n == "")
               and entry_of(k, n if k in NAMED_KINDS else None) is None]
    assert missing == []


def test_what_the_parser_reads_the_catalog_says_it_reads():
    """Every record kind and artifact the TORCH_TRACE parser has a handler for is catalogued as parsed or
    kept (dynamo_start: the frame's file for compile_events.origin, and unfinished compiles), and no kind the
    catalog calls parsed or kept goes unread."""
    from inductor_warehouse.ingest.parsers.trace_readers import READERS

    handled = list(READERS)
    assert len(handled) > 25
    assert [(k, n) for k, n in handled if (e := entry_of(k, n)) is None or e.handling == "ignored"] == []
    assert entry_of("dynamo_start", None).handling == "parsed" and "origin" in entry_of("dynamo_start", None).what
    read_without_handler = {"aot_forward_graph", "aot_inference_graph"}  # counted where records are taken apart
    unread = sorted(e.kind for e in TRACE_RECORDS if e.kind not in NAMED_KINDS and e.handling != "ignored"
                    and (e.kind, None) not in READERS and e.kind not in read_without_handler)
    assert unread == []


def test_every_record_the_catalog_calls_parsed_or_kept_names_its_reader():
    """Named kinds too: an artifact the record table says is parsed has a reader in trace_readers, and the
    document names it."""
    from inductor_warehouse.ingest.parsers.trace_records import RecordEntry, read_by

    unread = [(e.kind, e.name) for e in TRACE_RECORDS if e.handling != "ignored" and not read_by(e)]
    assert unread == []
    assert read_by(entry_of("artifact", "fx_graph_cache_hit")) == "trace_caches.read_cache"
    assert read_by(RecordEntry("artifact", "a_2_15_artifact", "2.15", "", "parsed", "")) == ""  # the check can fail


def test_the_document_is_the_catalog():
    assert (ROOT / "docs" / "trace_records.md").read_text() == document()
    assert len({(e.kind, e.name) for e in TRACE_RECORDS}) == len(TRACE_RECORDS)


def _records(text: bytes) -> dict[tuple, int]:
    counts: dict[tuple, int] = {}
    for m in RECORD.finditer(text):
        kind = m.group(1).decode()
        key = (kind, m.group(3).decode() if kind in NAMED_KINDS and m.group(3) is not None else None)
        counts[key] = counts.get(key, 0) + 1
    return counts


def test_each_run_says_which_records_it_had_and_unknown_ones_are_named(tmp_path):
    log = FIXTURES / "torch_trace" / "eras" / "handwritten_header_forms.log"
    db = str(tmp_path / "wh.duckdb")
    s = ingest_paths([log], db)
    expected = _records(log.read_bytes())
    rows = reader(db).execute("SELECT record_kind, name, n, handling FROM trace_records").fetchall()
    assert {(k, n): c for k, n, c, _ in rows} == expected
    assert [(k, h) for k, _, _, h in rows if h == UNKNOWN] == [("some_future_kind", UNKNOWN)]
    assert s.unknown_records() == {"some_future_kind": 1} and s.errors == 0
    out = CliRunner().invoke(cli, ["--db", db, "query", "ingest/unknown_records", "--format", "csv"]).output
    assert out.splitlines()[1].startswith("some_future_kind,,1,1,1,")
    # the summary names it
    again = CliRunner().invoke(cli, ["--db", str(tmp_path / "other.duckdb"), "ingest", str(log)])
    assert "trace records no release up to 2.14 writes" in again.output and "some_future_kind x1" in again.output


def test_a_run_replaced_in_the_same_ingest_leaves_its_unknown_records_and_errors_counted_once(tmp_path):
    """The same log twice (one run id): the summary counts the stored run's unknown records and
    errors, not both copies'."""
    text = (FIXTURES / "torch_trace" / "eras" / "handwritten_header_forms.log").read_text()
    text += 'V1123 10:00:01.000000 4242 torch/_dynamo/utils.py:1288] {"compilation_metrics": {"compile_id": \n'
    for copy in ("a", "b"):
        (tmp_path / copy).mkdir()
        (tmp_path / copy / "train.log").write_text(text)
    db = str(tmp_path / "wh.duckdb")
    s = ingest_paths([tmp_path / "a", tmp_path / "b"], db)
    stored_errors = reader(db).execute("SELECT count(*) FROM ingest_errors").fetchone()[0]
    unknown = reader(db).execute("SELECT sum(n) FROM trace_records WHERE handling = 'unknown'").fetchone()[0]
    assert (s.runs, s.replaced) == (1, 1)
    assert s.unknown_records() == {"some_future_kind": unknown} == {"some_future_kind": 1}
    assert s.errors == len(s.error_rows) == stored_errors >= 1


def test_an_unknown_artifact_name_is_counted_by_name(tmp_path):
    """A 2.14.1 log whose dynamo_side_effects artifact was renamed to a name no release writes."""
    log = FIXTURES / "torch_trace" / "cpu-torch2.14.1-ca" / "dedicated_log_torch_trace_5bvb0xvn.log.gz"
    text = gzip.decompress(log.read_bytes())
    renamed = tmp_path / "renamed.log"
    renamed.write_bytes(text.replace(b'"name": "dynamo_side_effects"', b'"name": "a_2_15_artifact"'))
    s = ingest_paths([renamed], str(tmp_path / "wh.duckdb"))
    assert s.unknown_records() == {"artifact a_2_15_artifact": text.count(b'"name": "dynamo_side_effects"')} != {}


@pytest.mark.corpus
def test_tlparse_logs_and_the_gpu_corpus_report_the_unknown_records_they_meet(tmp_path):
    """Done when: an ingest of tlparse's test logs and the shared GPU corpus reports the unknown names
    it met (or none). Each unknown name the summary reports is a trace_records row, and the other way."""
    tlparse = corpus_path("tlparse-logs")
    gpu = corpus_path("gpu-h200-torch2.11.tar.xz")
    with tarfile.open(gpu) as tf:
        tf.extractall(tmp_path / "gpu", members=[m for m in tf.getmembers() if "/trace/" in m.name], filter="data")
    db = str(tmp_path / "wh.duckdb")
    s = ingest_paths([tlparse, tmp_path / "gpu"], db)
    rows = reader(db).execute("SELECT record_kind, name, sum(n) FROM trace_records WHERE handling = 'unknown' "
                              "GROUP BY ALL").fetchall()
    assert s.unknown_records() == {(k if k not in NAMED_KINDS else f"{k} {n}"): c for k, n, c in rows}
    # every record of those logs, by kind and name, is a row
    total = sum(sum(_records(p.read_bytes()).values()) for p in list(Path(tlparse).rglob("*.log"))
                + list((tmp_path / "gpu").rglob("*.log")))
    assert reader(db).execute("SELECT sum(n) FROM trace_records").fetchone()[0] == total
    print("unknown records:", s.unknown_records() or "none")
