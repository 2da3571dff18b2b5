"""Parsing fanned out to Ray tasks (`iwh ingest --executor ray`): a local Ray started for the
ingest, or an existing cluster. The writer stays the calling process; this module only maps a
function over work items and hands back each result, or the exception its task ended with.

Ray is imported here only when called: `iwh` starts without it.
"""

from __future__ import annotations

from typing import Any

import logging
import os
from collections.abc import Callable, Iterable, Iterator


class RayUnavailable(Exception):
    """Ray is not installed, or the cluster cannot be reached."""


def imap_unordered(fn: Callable, items: Iterable, *, address: str | None, cpus: int,
                   env: dict[str, str] | None = None) -> Iterator[tuple[Any, Any, BaseException | None]]:
    """(item, fn(item), None) or (item, None, the exception) for each item, in the order tasks end.

    `address` names a cluster (`host:port` of its head, or `ray://host:port` through Ray Client);
    None means $RAY_ADDRESS, else a local Ray of `cpus` CPUs started for this call (unless this
    process already joined one).
    `env` is set in the tasks' environment (Ray's runtime_env): workers do not inherit this
    process's. Only what this call started or joined is shut down after."""
    try:
        import ray
    except ImportError as e:
        raise RayUnavailable("--executor ray needs the [ray] extra, which is not installed (ray): "
                             "pip install 'inductor-warehouse[ray]'") from e
    joined = not ray.is_initialized()
    if joined:
        _init(ray, address or os.environ.get("RAY_ADDRESS"), cpus)
    try:
        task = ray.remote(fn).options(runtime_env={"env_vars": env} if env else None)
        # a bounded number of tasks in flight: results wait in the object store only as long as
        # the writer is behind by a batch or so, however many runs the backfill has
        slots = max(2, 2 * int(ray.cluster_resources().get("CPU", cpus)))
        todo = iter(items)
        pending: dict = {}

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


def _init(ray, address: str | None, cpus: int) -> None:
    quiet = {"ignore_reinit_error": True, "logging_level": logging.ERROR, "log_to_driver": False}
    try:
        if address:
            ray.init(address=address, **quiet)
        else:
            # a Ray of this ingest's own: no dashboard, and no usage report leaves the machine
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            ray.init(num_cpus=cpus, include_dashboard=False, **quiet)
    except (OSError, RuntimeError, ValueError) as e:  # OSError: ConnectionError, a socket path too long
        where = address or "a local Ray"
        raise RayUnavailable(f"cannot start or reach {where}: {str(e).strip().splitlines()[0] if str(e).strip() else e}") from e
