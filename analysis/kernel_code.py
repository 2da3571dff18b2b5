"""The code of one kernel as its own run wrote it.

kernel_sources keeps one text per normalised source hash: that of whichever identical kernel (of
any graph or run) has the least text, so its kernel name, cache paths and backend hash may be
another kernel's. A kernel's own text is read from its graph's stored output code instead (the
debug tree's output_code.py/.cpp or the trace's copy), by the output-code parsers' own reading
of a definition, and kept only when it hashes to the kernel's source_hash. Where the run's output
code was not stored (Spyre kernel folders, traces without inductor_output_code) the shared text
is all there is, and KernelCode.own says so.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from inductor_warehouse.analysis.canned_rows import Reader, run_query
from inductor_warehouse.ingest.normalize import kernel_signature, normalize_kernel_source
from inductor_warehouse.ingest.normalize import source_hash as hash_of
from inductor_warehouse.ingest.parsers import aoti_code, output_code

# what a page or the CLI says above a text that is not the kernel's own
SHARED_NOTE = ("Code of an identical kernel (same normalised source), possibly of another graph or run: kernel "
               "names, cache paths and the backend hash may differ from this run's.")
SHARED_NOTE_SPYRE = ("Spec of an identical kernel (same normalised spec), possibly of another call site or run: "
                     "debug handles and HBM addresses may differ from this run's.")
NORMALISED = "normalised: kernel name -> KERNEL, quoted paths -> <path>, backend hash -> <hash>"


@dataclass(frozen=True)
class KernelCode:
    kernel_name: str
    text: str | None  # None: the kernel has no source (an unterminated string, a multi-kernel wrapper)
    own: bool  # text is this kernel's, from its run's output code; else the kept text of its hash
    backend: str | None = None

    @property
    def note(self) -> str | None:
        """What to say above the text: nothing for the kernel's own code."""
        if self.own or self.text is None:
            return None
        return SHARED_NOTE_SPYRE if self.backend == "spyre" else SHARED_NOTE

    def normalised(self) -> str:
        """The text as hashed: this kernel's name (or, in a shared text, the name it carries there)
        made KERNEL, quoted paths <path>, the backend hash <hash>; what a diff across releases reads."""
        if self.text is None:
            return ""
        return normalize_kernel_source(self.text, self.kernel_name if self.own else _named_in(self.text, self.kernel_name))


def _named_in(text: str, kernel_name: str) -> str:
    """The name a shared text carries for a kernel named kernel_name in this run: itself, or the
    same name with another per-graph counter (triton_poi_fused_add_0 for triton_poi_fused_add_3)."""
    if kernel_name in text:
        return kernel_name
    m = re.search(rf"\b{re.escape(kernel_signature(kernel_name))}_\d+\b", text)
    return m.group(0) if m else kernel_name


class KernelCodes:
    """Kernels' code read on one connection; each graph's output code is fetched once."""

    def __init__(self, con: Reader) -> None:
        self.con = con
        self._graphs: dict[tuple[str, str], list[str]] = {}

    def get(self, run_id: str, graph_id: str | None, kernel_name: str, source_hash: str | None = None,
            backend: str | None = None, line: int | None = None, *, look_up: bool = True) -> KernelCode:
        """The code of generated kernel `kernel_name` of the run's graph: its own text when the graph's
        output code is stored, else the kept text of its source hash. `look_up`: read its row
        (explore/kernel_code) for what the caller did not pass."""
        shared: str | None = None
        if look_up:
            rows = run_query(self.con, "explore/kernel_code", run_id=run_id, graph_id=graph_id,
                             kernel_name=kernel_name) if graph_id else []
            if rows:
                r = rows[0]
                source_hash, backend, line, shared = r["source_hash"], r["backend"], r["line"], r["shared_source"]
        return self._code(run_id, graph_id, kernel_name, source_hash, backend, line, shared)

    def graph(self, run_id: str, graph_id: str) -> list[KernelCode]:
        """The code of every generated kernel of the graph, in definition order (one query for all)."""
        return [self._code(run_id, graph_id, r["kernel_name"], r["source_hash"], r["backend"], r["line"],
                           r["shared_source"])
                for r in run_query(self.con, "explore/kernel_code", run_id=run_id, graph_id=graph_id, kernel_name=None)]

    def _code(self, run_id: str, graph_id: str | None, kernel_name: str, source_hash: str | None,
              backend: str | None, line: int | None, shared: str | None) -> KernelCode:
        if source_hash is None:
            return KernelCode(kernel_name, None, False, backend)
        own = self.own_text(run_id, graph_id, kernel_name, source_hash, line)
        if own is not None:
            return KernelCode(kernel_name, own, True, backend)
        if shared is None:
            rows = run_query(self.con, "explore/kernel_source", source_hash=source_hash)
            shared = rows[0]["source"] if rows else None
        return KernelCode(kernel_name, shared, False, backend)

    def own_text(self, run_id: str, graph_id: str | None, kernel_name: str, source_hash: str,
                 line: int | None) -> str | None:
        """The kernel's text in its graph's output code, if stored there and it hashes to source_hash."""
        if not graph_id:
            return None
        key = (run_id, graph_id)
        if key not in self._graphs:
            self._graphs[key] = [r["text"] for r in run_query(self.con, "explore/output_code", run_id=run_id,
                                                              graph_id=graph_id)]
        for text in self._graphs[key]:
            for read in (output_code.kernel_text, aoti_code.kernel_text):
                found = read(text, kernel_name, line)
                if found is not None and hash_of(found, kernel_name) == source_hash:
                    return found
        return None


def code_diff(base: KernelCode | None, head: KernelCode | None) -> str:
    """Unified diff of two kernels' normalised texts (KernelCode.normalised), base to head: what
    changed in the code, without the per-graph counter, cache paths and backend hash each run
    writes. Each side's file name says whose text it is (`own` or an identical kernel's)."""
    def side(label: str, code: KernelCode | None) -> tuple[list[str], str]:
        if code is None:
            return [], f"{label}/-"
        whose = "" if code.own else " (an identical kernel's kept text)"
        return code.normalised().splitlines(keepends=True), f"{label}/{code.kernel_name}{whose}"

    (a, from_name), (b, to_name) = side("base", base), side("head", head)
    return "".join(difflib.unified_diff(a, b, fromfile=from_name, tofile=to_name))
