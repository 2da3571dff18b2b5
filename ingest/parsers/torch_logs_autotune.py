"""The autotuner's report in TORCH_LOGS text: max-autotune's tables of the choices it timed
(autotune_choices), and the Triton configs it timed and kept at debug level (triton_kernels).

Inductor's autotuner at debug level (TORCH_LOGS="+torch._inductor.runtime.triton_heuristics"), once
it timed a kernel's configs, writes `Benchmark all input configs for K, get:`, then a line for each
config it timed, then `Best config for K: ...`, the one it keeps; each with the registers, spills
and shared memory of its binary (Triton reads them at load; no other artifact holds them).
"""

from __future__ import annotations

import re

import orjson

from inductor_warehouse.ingest.rows import AutotuneChoiceRow, Json, Parsed, TritonKernelRow

SOURCE = "torch_logs"
_BEST_CONFIG = re.compile(r"\] (?:\[(!?[\d/_]+)\] )?Best config for (?P<kernel>\S+): (?P<config>.*): (?P<ms>[^:,]+), "
                          r"nreg (?P<nreg>-?\d+), nspill (?P<nspill>-?\d+), #shared-mem (?P<shared>\S+)$")
_BENCHMARK_ALL = re.compile(r"\] (?:\[(!?[\d/_]+)\] )?Benchmark all input configs for (?P<kernel>\S+), get:$")
_CANDIDATE = re.compile(r"\] (?:\[(!?[\d/_]+)\] )?(?P<config>\w+: .*): (?P<ms>[^:,]+), "
                        r"nreg (?P<nreg>-?\d+), nspill (?P<nspill>-?\d+), #shared-mem (?P<shared>\S+)$")
_CONFIG_ITEM = re.compile(r"(\w+): ([^,]+)")


class Candidates:
    """The configs the autotuner timed for a kernel (chosen false), until its `Best config` line
    marks the one it keeps (chosen true); a best config without candidate lines is a row of its own."""

    def __init__(self, parsed: Parsed) -> None:
        self.parsed = parsed
        self.kernel: str | None = None
        self.compile_id: str | None = None
        self.rows: list[TritonKernelRow] = []

    def feed(self, line: str, lineno: int) -> None:
        text = line.rstrip("\r\n")
        if (m := _BENCHMARK_ALL.search(text)) is not None:
            self.kernel, self.compile_id, self.rows = m["kernel"], m.group(1), []
        elif self.kernel is not None and (m := _CANDIDATE.search(text)) is not None:
            row = _config_row(m, self.kernel, m.group(1) or self.compile_id, False, lineno)
            self.rows.append(row)
            self.parsed.add("triton_kernels", row)

    def best(self, line: str, lineno: int) -> None:
        m = _BEST_CONFIG.search(line.rstrip("\r\n"))
        if m is None:
            self.parsed.counters["torch_logs.best_config_unread"] += 1
            return
        timed = [r for r in self.rows if r["config"] == m["config"]] if self.kernel == m["kernel"] else []
        if timed:
            timed[0]["chosen"] = True
        else:
            self.parsed.add("triton_kernels", _config_row(m, m["kernel"], m.group(1), True, lineno))
        self.kernel, self.rows = None, []


def _config_row(m: re.Match[str], kernel: str, compile_id: str | None, chosen: bool, lineno: int) -> TritonKernelRow:
    items = dict(_CONFIG_ITEM.findall(m["config"]))
    return {
        "compile_id": compile_id, "kernel_name": kernel, "source": SOURCE, "cache_key": None,
        "num_warps": _int_text(items.get("num_warps")), "num_stages": _int_text(items.get("num_stages")),
        "num_ctas": _int_text(items.get("num_ctas")), "maxnreg": _int_text(items.get("maxnreg")),
        "shared_bytes": _int_text(m["shared"]), "target": None, "triton_version": None,
        "config": m["config"], "chosen": chosen, "autotune_state": None, "num_configs": None, "compile_time_us": None,
        "n_regs": int(m["nreg"]), "n_spills": int(m["nspill"]),
        "metadata": {"time_ms": _float_text(m["ms"]), "line": lineno},
    }


def _int_text(v: str | None) -> int | None:
    try:
        return int(v) if v is not None else None
    except ValueError:
        return None


def _float_text(v: str) -> float | None:
    try:
        return float(v)
    except ValueError:
        return None


AUTOTUNE_STARTS = ("Autotune Choices Stats:", "AUTOTUNE ")
_AUTOTUNE_HEAD = re.compile(r"^AUTOTUNE (\w+)\((.*)\)$")
_AUTOTUNE_ROW = re.compile(r"^  (\S+) ([\d.]+) ms (?:([\d.]+)%|(DIVIDED BY ZERO ERROR))\s?(.*)$")
_AUTOTUNE_END = re.compile(r"^\w+ AUTOTUNE (?:benchmarking )?takes .*?(?: for (\d+) choices)?(?: and .*)?$")


class AutotuneTables:
    """max-autotune's tables, printed plainly on stderr (no glog prefix) after each op it tuned:

        Autotune Choices Stats:                    (2.9+)
        {"num_choices": 20, "best_kernel": "bias_addmm", ...}
        AUTOTUNE addmm(8x1024, 8x512, 512x1024)
        strides: [0, 1], [512, 1], [1, 512]        (2.8+)
        dtypes: torch.bfloat16, ...                (2.8+)
          bias_addmm 0.0059 ms 100.0%
          triton_mm_1 0.0069 ms 85.3% ACC_TYPE='tl.float32', ..., num_stages=2, num_warps=2
        SingleProcess AUTOTUNE benchmarking takes 0.3894 seconds and ... for 20 choices

    Only the fastest rows are printed (10 by default); num_choices says how many were timed. The
    compile id is the one of the last prefixed log line before the table, when there was one."""

    def __init__(self, parsed: Parsed) -> None:
        self.parsed = parsed
        self.compile_id: str | None = None
        self.open = False
        self.stats: dict[str, Json] = {}
        # the columns the table's rows share, and each row's own, until the table ends
        self.table: AutotuneChoiceRow | None = None
        self.rows: list[AutotuneChoiceRow] = []
        self.seq = 0
        self.expect_stats = False

    def feed(self, line: str, lineno: int) -> bool:
        """Takes the line when it belongs to a table; False hands it back to the glog parsing."""
        if line.startswith("Autotune Choices Stats:"):
            self.close()
            self.open, self.expect_stats = True, True
            return True
        if self.expect_stats:
            self.expect_stats = False
            try:
                stats = orjson.loads(line)
                self.stats = stats if isinstance(stats, dict) else {}
                return True
            except orjson.JSONDecodeError:
                self.parsed.problem(f"autotune stats are not JSON: {line[:120]}", lineno, "warning")
                self.stats = {}
        m = _AUTOTUNE_HEAD.match(line)
        if m:
            self.close(keep_stats=True)
            self.open = True
            self.table = {"op": m.group(1), "shapes": m.group(2), "strides": None, "dtypes": None, "line": lineno}
            return True
        if self.table is None:
            self.open = bool(self.stats)
            return False
        if line.startswith("strides: "):
            self.table["strides"] = line[len("strides: "):]
        elif line.startswith("dtypes: "):
            self.table["dtypes"] = line[len("dtypes: "):]
        elif (row := _AUTOTUNE_ROW.match(line)) is not None:
            pct = float(row.group(3)) if row.group(3) else None
            self.rows.append({"choice": row.group(1), "time_ms": float(row.group(2)), "pct": pct,
                              "config": row.group(5).strip(), "line": lineno})
        elif (end := _AUTOTUNE_END.match(line)) is not None:
            self.close(num_choices=int(end.group(1)) if end.group(1) else None)
        else:
            self.close()  # a table cut short: keep what it listed
            return False
        return True

    def close(self, num_choices: int | None = None, keep_stats: bool = False) -> None:
        if self.table is not None:
            self.seq += 1
            t = self.table
            n = num_choices or _int(self.stats.get("num_choices"))
            for rank, r in enumerate(self.rows, 1):
                self.parsed.add("autotune_choices", {
                    "compile_id": self.compile_id, "seq": self.seq, "op": t["op"], "shapes": t["shapes"],
                    "strides": t["strides"], "dtypes": t["dtypes"], "num_choices": n, "rank": rank,
                    "choice": r["choice"], "config": r["config"], "time_ms": r["time_ms"], "pct": r["pct"],
                    "winner": rank == 1, "source": SOURCE, "line": r["line"],
                })
            if not self.rows:
                self.parsed.counters["autotune_table_without_rows"] += 1
        self.table, self.rows, self.open = None, [], False
        if not keep_stats:
            self.stats = {}


def _int(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None
