"""Graph breaks of the releases that write no graph-break record (before 2.6), as Dynamo counted them.

2.6 and later write a `dynamo_graph_break_reason` artifact for every break (trace_events reads it).
2.3 to 2.5 write none, but every break Dynamo counts (`counters["graph_break"]`) restarts the frame's
analysis at once (torch/_dynamo/symbolic_convert.py 2.3.1, 2.4.1, 2.5.1: break_graph_if_unsupported
and STORE_ATTR call `add_to_stats("graph_break")` then `fail_and_restart_analysis()`), and a restart
bumps the compile's `attempt` (the envelope's `0/0_1`). So a compile that never restarted had no
break, and 2.4 and 2.5 name each restart in compilation_metrics' `restart_reasons` (convert_frame's
`restart_reasons.add(e.restart_reason or str(type(e)))`, a set):
- a break Dynamo counted restarts with the exception's message;
- `Unknown fail_and_restart_analysis` is a STORE_ATTR break (counted) or an instruction Dynamo could
  not trace, whose graph then ends and the rest of the frame runs eagerly (filed as unimplemented):
  the log cannot tell which;
- `<class '...RestartAnalysis'>`: a restart with no reason (an nn.Module unspecialized, the compiler
  collective), no break, except SpeculationRestartAnalysis (a counted break with an empty message).
Where the log cannot tell, an `unknown_break` row says why, and the run's graph_breaks is unknown
(views/15_run_rollups_of.sql): a failed compile's reasons are dropped by Dynamo, 2.3 writes no
compilation_metrics, and a set hides a reason given twice (the compiler collective clears the
speculation log, and the break is counted again).

The breaks Dynamo does not count as graph breaks (uncounted_breaks) are another matter in these
releases: a data-dependent branch (`generic_jump`'s jump_graph_break) raises nothing, restarts nothing
and is counted nowhere (not even `counters["unimplemented"]`, where every Unsupported goes: exc.py
2.3.0 to 2.5.0); its only trace is the frame of the resume function it calls, which Dynamo compiles as
a frame of its own, `torch_dynamo_resume_in_<fn>_at_<line>` (resume_execution.py). A break Dynamo
could not resume from is a restart whose reason is `Unknown fail_and_restart_analysis`. So an
`unknown_uncounted` row says why the log cannot tell them (views/15_run_rollups_of.sql: the run's
uncounted_breaks is then NULL): such a restart, a restart whose reason the log lacks, or frames that
may be resume functions (named so by compilation_metrics, or frames other than the first whose name
a log of 2.3, without compilation_metrics, never gives) outnumbering the breaks counted, each of which
resumes in a frame of its own. A log with no such frame had no data-dependent branch that resumed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from inductor_warehouse.ingest.parsers.compile_ids import frame_key, without_attempt
from inductor_warehouse.ingest.parsers.compile_causes import GRAPH_BREAK
from inductor_warehouse.ingest.rows import Json

UNKNOWN_BREAK = "unknown_break"
UNKNOWN_UNCOUNTED = "unknown_uncounted"
# a trace of a release that writes no recompile record (before 2.5): its run's recompiles are unknown
# unless TORCH_LOGS count them (ingest/reader_steps.py read_traces)
UNKNOWN_RECOMPILE = "unknown_recompile"
RECOMPILE = "recompile"
RESTART = "restart"
RESUME_PREFIX = "torch_dynamo_resume_in_"  # resume_execution.py's name for a function resuming after a break
STEP_OR_STORE_ATTR = "Unknown fail_and_restart_analysis"
_NO_REASON = re.compile(r"^<class '[\w.]*?(\w+)'>$")
# compilation_metrics of 2.6 and later carry it (a dataclass default, always written)
MODERN_FIELD = "log_format_version"


@dataclass
class Restarts:
    """Per frame compile (its id without the attempt): the highest attempt any record of it was
    written in, and the compiles a graph-break record or this module already accounted for."""
    attempts: dict[str, int] = field(default_factory=dict)
    recorded: set[str] = field(default_factory=set)  # compiles with a dynamo_graph_break_reason (2.6+)
    read: set[str] = field(default_factory=set)  # compiles whose restarts read_restarts read
    modern: bool = False  # a record of 2.6 or later: the graph-break records are the source
    names: dict[str, str] = field(default_factory=dict)  # frame -> its code's name (compilation_metrics co_name)
    counted: int = 0  # graph breaks read from restart reasons

    def note(self, cid: str) -> None:
        """A record's compile id with an attempt suffix (`1/0_2`): that compile restarted."""
        frame, _, n = cid.rpartition("_")
        if n.isdigit() and int(n) > self.attempts.get(frame, 0):
            self.attempts[frame] = int(n)


def counted(reason: str) -> bool:
    """A restart reason of 2.4/2.5 that is a graph break Dynamo counted."""
    m = _NO_REASON.match(reason)
    return m.group(1) == "SpeculationRestartAnalysis" if m else reason != STEP_OR_STORE_ATTR


def read_restarts(restarts: Restarts, metrics: dict[str, Json], compile_id: str | None) -> list[tuple[str, str]]:
    """(kind, reason) rows for a frame compile's compilation_metrics: its counted breaks, and an
    UNKNOWN_BREAK saying why when the log cannot tell them all; none for a 2.6+ record."""
    if MODERN_FIELD in metrics:
        restarts.modern = True
        return []
    key = without_attempt(compile_id) or ""
    if key in restarts.recorded:
        restarts.modern = True
        return []
    restarts.read.add(key)
    if isinstance(metrics.get("co_name"), str):
        restarts.names[frame_key(key) or key] = metrics["co_name"]
    attempts = restarts.attempts.get(key, 0)
    given = metrics.get("restart_reasons")
    reasons = sorted({str(r) for r in given}) if isinstance(given, list) else None
    rows = [(GRAPH_BREAK, r) for r in reasons or () if counted(r)]
    restarts.counted += len(rows)
    why, either = None, True  # either: the restart may be a break counted or one Dynamo could not resume from
    if reasons is None:
        if attempts:
            why = f"{_times(attempts)}, and compilation_metrics without restart_reasons (PyTorch before 2.4)"
    elif STEP_OR_STORE_ATTR in reasons:
        why = (f"restart reason '{STEP_OR_STORE_ATTR}': a STORE_ATTR graph break (counted) or an instruction "
               "Dynamo could not trace (filed as unimplemented)")
    elif attempts > len(reasons) and not reasons:
        why = f"{_times(attempts)} and no restart reasons (Dynamo drops a failed compile's)"
    elif attempts > len(reasons) and rows:
        why, either = (f"{_times(attempts)} for {len(reasons)} distinct reasons: a graph break may have been "
                       "counted again after a restart that cleared the speculation log"), False
    if why:
        rows.append((UNKNOWN_BREAK, why))
        if either:
            rows.append((UNKNOWN_UNCOUNTED, why))
    return rows


def unread_restarts(restarts: Restarts, finished: set[str | None]) -> list[tuple[str, str, str | None]]:
    """(compile id, kind, reason) of the compiles that restarted and whose metrics never came (2.3
    writes none), in a log of a release without graph-break records: either break may be the cause.
    And a RESTART row (reason unknown) for each restart, the attempts its records were written in:
    the restarts compilation_metrics would have named."""
    if restarts.modern or restarts.recorded:
        return []
    unread = [(key, n) for key, n in sorted(restarts.attempts.items())
              if n and key not in restarts.read and key not in finished]
    return [row for key, n in unread
            for row in ((key, kind, f"{_times(n)}, and no compilation_metrics for it (PyTorch 2.3 writes none)")
                        for kind in (UNKNOWN_BREAK, UNKNOWN_UNCOUNTED))] + [
            (key, RESTART, None) for key, n in unread for _ in range(n)]


def unseen_branches(restarts: Restarts, started: set[str | None]) -> str | None:
    """Why a log of a release without graph-break records cannot tell its data-dependent branches,
    or None: its frames that may be resume functions outnumber the breaks it counted."""
    if restarts.modern or restarts.recorded:
        return None
    frames = {f for c in started if c and (f := frame_key(c)) and not f.startswith("!")}
    first = min(frames, key=lambda f: (len(f), f), default=None)  # the log's first frame resumes nothing
    resumed = {n for n in restarts.names.values() if n.startswith(RESUME_PREFIX)}
    maybe = len(resumed) + sum(1 for f in frames if f not in restarts.names and f != first)
    if maybe <= restarts.counted:
        return None
    return (f"{maybe} frame{'s' if maybe != 1 else ''} that may resume after a break ({len(resumed)} named "
            f"{RESUME_PREFIX}*) for {restarts.counted} graph break{'s' if restarts.counted != 1 else ''} "
            "counted: a data-dependent branch of a release before 2.6 leaves no other trace")


def _times(n: int) -> str:
    return f"restarted {n} time{'s' if n != 1 else ''}"
