"""Parsing fanned out to Ray tasks (`iwh ingest --executor ray`): a local Ray started for the
ingest (by a keeper that goes with this process: ingest/ray_local.py), or an existing cluster. The
writer stays the calling process; this module only maps a function over work items and hands back
each result, or the exception its task ended with. Nothing of this process's environment travels
with the tasks: what they need is in their arguments.

Ray is imported here only when called: `iwh` starts without it.
"""

from __future__ import annotations

import contextlib
import importlib.util
from typing import TYPE_CHECKING, TypeVar, cast
import logging
import os
import sys
from collections.abc import Callable, Iterable, Iterator

if TYPE_CHECKING:
    from ray import ObjectRef

    from inductor_warehouse.ingest.ray_local import LocalRay

T = TypeVar("T")  # a work item
R = TypeVar("R")  # what `fn` makes of one


class RayUnavailable(Exception):
    """Ray is not installed, or the cluster cannot be reached."""


def imap_unordered(fn: Callable[[T], R], items: Iterable[T], *, address: str | None,
                   cpus: int) -> Iterator[tuple[T, R | None, BaseException | None]]:
    """(item, fn(item), None) or (item, None, the exception) for each item, in the order tasks end.

    `address` names a cluster (`host:port` of its head, or `ray://host:port` through Ray Client);
    None means $RAY_ADDRESS, else a local Ray of `cpus` CPUs started for this call (unless this
    process already joined one). Only what this call started or joined is shut down after."""
    if not _installed():
        raise RayUnavailable("--executor ray needs the [ray] extra, which is not installed (ray): "
                             "pip install 'inductor-warehouse[ray]'")
    joined = "ray" not in sys.modules or not sys.modules["ray"].is_initialized()
    local = _init(address or os.environ.get("RAY_ADDRESS"), cpus) if joined else None
    import ray

    try:
        task = ray.remote(fn)
        # a bounded number of tasks in flight: results wait in the object store only as long as
        # the writer is behind by a batch or so, however many runs the backfill has
        # Ray's function is unannotated; its docs: resource name -> the cluster's total of it
        resources = cast(Callable[[], dict[str, float]], ray.cluster_resources)()
        slots = max(2, 2 * int(resources.get("CPU", cpus)))
        todo = iter(items)
        pending: dict[ObjectRef[R], T] = {}

        def submit(n: int) -> None:
            for item in todo:
                pending[task.remote(item)] = item
                n -= 1
                if n <= 0:
                    return

        submit(slots)
        while pending:
            [ref], _ = ray.wait(list(pending), num_returns=1)
            item = pending.pop(ref)
            try:
                result, error = ray.get(ref), None
            except Exception as e:  # the task raised, or its worker or node died
                result, error = None, getattr(e, "cause", None) or e
            del ref  # its result leaves the object store once the caller drops it too
            submit(1)
            yield item, result, error
    finally:
        for ref in pending:  # the caller stopped early (a full disk): the rest is not wanted
            ray.cancel(ref)
        if joined:
            ray.shutdown()
        if local is not None:
            local.stop()


def _installed() -> bool:
    """Whether Ray can be imported, without importing it (see _init)."""
    try:
        return importlib.util.find_spec("ray") is not None
    except (ImportError, ValueError):  # refused by an import hook, or a module set to None
        return False


def _init(address: str | None, cpus: int) -> LocalRay | None:
    """Join the cluster at `address`, or a local Ray of this ingest's own (returned, to be stopped).
    Ray is imported once the local Ray's keeper said how to join it: Ray reads its auth mode from the
    environment when it is imported."""
    quiet = {"ignore_reinit_error": True, "logging_level": logging.ERROR, "log_to_driver": False}
    local = None
    try:
        if not address and sys.platform.startswith("linux"):
            from inductor_warehouse.ingest.ray_local import LocalRay

            local = LocalRay(cpus)
            _follow(local.env)
            address = local.address
        import ray

        if address:
            ray.init(address=address, **quiet)  # type: ignore[arg-type]
        else:  # no subreaper to keep it: a Ray of this process, whose head processes die with it
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            ray.init(num_cpus=cpus, include_dashboard=False, **quiet)  # type: ignore[arg-type]
    except Exception as e:  # OSError: ConnectionError, a socket path too long; RayStartFailed
        if local is not None:
            local.stop()
        where = address or "a local Ray"
        raise RayUnavailable(f"cannot start or reach {where}: {str(e).strip().splitlines()[0] if str(e).strip() else e}") from e
    return local


def _follow(env: dict[str, str]) -> None:
    """Take the local Ray's settings for joining it (its auth mode). A Ray imported before them (an
    earlier ingest of this process) reads them again."""
    os.environ.update(env)
    if "ray" in sys.modules:
        with contextlib.suppress(Exception):  # Ray's private API: without it, the join says what failed
            from ray._raylet import AuthenticationTokenLoader, Config  # type: ignore[attr-defined]

            Config.initialize("")
            AuthenticationTokenLoader.instance().reset_cache()
