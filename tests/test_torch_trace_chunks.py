"""TORCH_TRACE logs read in pieces of any size give the same records as read whole: records are
cut where a line does not start with a TAB, wherever the pieces end."""

from __future__ import annotations

import gzip

import pytest

from inductor_warehouse.ingest.parsers.torch_trace import parse_torch_trace_chunks
from tests.conftest import FIXTURES

COMP_FAILURE = FIXTURES / "torch_trace" / "tlparse" / "comp_failure.log.gz"  # no final newline
DYNAMIC_213 = FIXTURES / "torch_trace" / "cpu-torch2.13-dynamic" / "dedicated_log_torch_trace_r5h24g62.log.gz"


def _pieces(data: bytes, size: int) -> list[bytes]:
    return [data[i:i + size] for i in range(0, len(data), size)]


@pytest.mark.parametrize("path", [COMP_FAILURE, DYNAMIC_213], ids=lambda p: p.name)
@pytest.mark.parametrize("size", [1, 7, 4096, 1 << 30])
def test_pieces_of_any_size_give_every_record(path, size):
    data = gzip.decompress(path.read_bytes())
    lines = data.split(b"\n")
    headers = [line for line in lines if line and not line.startswith(b"\t")]
    parsed = parse_torch_trace_chunks(_pieces(data, size))
    assert parsed.problems == []
    assert parsed.counters["records"] == len(headers)
    assert parsed.counters["md5_verified"] == sum(b'"has_payload": ' in h for h in headers)
    assert parsed.counters["lines"] == data.count(b"\n") + (not data.endswith(b"\n"))
    assert parsed.counters["bytes"] == len(data)
    whole = parse_torch_trace_chunks([data])
    assert parsed.rows == whole.rows


def test_a_blank_line_inside_a_payload_keeps_the_record_whole():
    data = gzip.decompress(COMP_FAILURE.read_bytes())
    # a blank line before every payload line: each record's payload arrives in many pieces
    spaced = data.replace(b"\n\t", b"\n\n\t")
    blanks = data.count(b"\n\t")
    for size in (3, 1 << 30):
        parsed = parse_torch_trace_chunks(_pieces(spaced, size))
        assert parsed.problems == []
        assert parsed.counters["blank_lines"] == blanks
        # 8 payloads with has_payload in comp_failure.log (grep -c '"has_payload"')
        assert parsed.counters["md5_verified"] == 8


def test_payload_lines_before_any_record_are_errors_with_their_line_numbers():
    data = gzip.decompress(COMP_FAILURE.read_bytes())
    parsed = parse_torch_trace_chunks([b"\tstray one\n\tstray two\n" + data])
    assert [(p.line, p.message) for p in parsed.problems] == [
        (1, "payload line without a record header"), (2, "payload line without a record header")]
    assert parsed.counters["md5_verified"] == 8
