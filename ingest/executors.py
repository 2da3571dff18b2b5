"""Where runs are parsed: in this process, in worker processes of this machine (`ingest/forked.py`),
or in Ray tasks (`ingest/ray_tasks.py`). Each yields every run's `Loaded` (or `Failed`) as it
ends; the writer stays the calling process.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import TypeVar, cast

import pyarrow as pa

from inductor_warehouse.ingest import forked, ray_tasks, remote, spill
from inductor_warehouse.ingest.convert import Loaded
from inductor_warehouse.ingest.listing import Run
from inductor_warehouse.ingest.remote import FetchError

C = TypeVar("C")  # what every run's parse is given besides its run (the loader's: ingest/load.py `Context`)


@dataclass
class Failed:
    """A run whose parse raised where it is contained (a Ray task; a fetch from object storage)."""
    source_path: str
    error: BaseException


def parse_all(runs: list[Run], jobs: int, context: C, parse: Callable[[tuple[Run, C]], Loaded],
              executor: str = "local", ray_address: str | None = None) -> Iterator[Loaded | Failed]:
    """`parse((run, context))` of every run, in the order they end."""
    work = [(r, context) for r in runs]
    if executor == "ray":
        yield from _on_ray(work, jobs, ray_address, parse)
        return
    contained = partial(_contained, parse)
    if jobs <= 1 or len(runs) <= 1:
        for w in work:
            yield contained(w)
        return
    # pyarrow imports pandas on its first array: once here, not once per forked worker
    pa.array([], type=pa.string())
    # larger runs first keeps every worker busy to the end
    work.sort(key=_size, reverse=True)
    for (run, _), data, error in forked.imap_unordered(contained, work, jobs=jobs, initializer=_worker):
        if isinstance(error, forked.WorkerDied):
            # a worker killed (the OOM killer on a huge log) costs its run alone
            yield Failed(run.source_path, error)
        elif error is not None:
            raise error
        else:
            yield cast("Loaded | Failed", data)  # an item's result whenever it has no exception


def _size(w: tuple[Run, object]) -> int:
    return sum(a.size for a in w[0].artifacts)


def _contained(parse: Callable[[tuple[Run, C]], Loaded], args: tuple[Run, C]) -> Loaded | Failed:
    """A run of object storage that cannot be fetched fails alone; a parser's bug still stops the
    ingest (the fuzzer counts on it)."""
    try:
        return parse(args)
    except FetchError as e:
        return Failed(args[0].source_path, e)


def _worker() -> None:
    """A parse worker makes millions of row dicts that live until its run is sent: Python's default
    collector thresholds would collect often to free few cycles, and what the worker inherited from
    the writer is frozen out of every collection."""
    gc.freeze()
    gc.set_threshold(20_000, 10, 10)


def _on_ray(work: list[tuple[Run, C]], jobs: int, address: str | None,
            parse: Callable[[tuple[Run, C]], Loaded]) -> Iterator[Loaded | Failed]:
    """Each run a Ray task. A task that raises, or whose worker dies, fails its run alone: on a
    cluster a lost worker is weather, not a bug to stop a backfill of thousands of runs for."""
    if not work:
        return
    work.sort(key=_size, reverse=True)
    # tasks read object storage as this ingest would: its AWS_* settings travel with each task, as an
    # argument (Ray puts a runtime environment's variables on command lines and in its logs)
    settings = {k: v for k, v in os.environ.items() if k.startswith("AWS_")} if any(w[0].source for w in work) else None
    tasks = [(parse, w, settings) for w in work]
    for (_, (run, _), _), data, error in ray_tasks.imap_unordered(_in_task, tasks, address=address, cpus=jobs):
        # an item's result whenever it has no exception
        yield Failed(run.source_path, error) if error is not None else spill.unpack(cast(Loaded, data))


# a Ray task's argument: the parse, its run and context, the AWS_* settings it reads object storage with
Task = tuple[Callable[[tuple[Run, C]], Loaded], tuple[Run, C], dict[str, str] | None]


def _in_task(task: Task[C]) -> Loaded:
    """A run's parse in a Ray task; its spilled parts, files of the worker's machine, travel back as bytes."""
    parse, args, settings = task
    if settings is not None:
        remote.configure(settings)
    return spill.pack(parse(args))
