"""A local Ray of one ingest's own (`iwh ingest --executor ray` with no cluster named): started by a
keeper process that goes with the ingest's writer, without the writer's secrets.

Ray's processes outlived a writer that started them itself and was `kill -9`ed: its head processes die
with their parent (Linux's parent-death signal), but the agents the raylet starts (DashboardAgent,
RuntimeEnvAgent) noticed only a minute later. So the writer starts a keeper, a child that makes itself
a subreaper (every process below it that loses its parent becomes its child, never init's), starts
Ray as a driver of its own, hands the writer the address, and waits on a pipe from the writer. When
the pipe closes, because the writer is done or was killed, the keeper kills every process below it
and then ends.

The keeper's environment is the writer's less every secret (`secret_free`): Ray's processes inherit
it, and Ray logs parts of what it hands its workers. Tasks get the S3 settings they need as
arguments (ingest/executors.py), which Ray neither logs nor puts on a command line.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import logging
import os
import re
import select
import signal
import subprocess
import sys
import time

from inductor_warehouse.store.location import redact

KEEPER = "inductor_warehouse.ingest.ray_local"
STOP_S = 30.0  # how long a graceful stop may take before the keeper is killed
WATCH_S = 0.2  # how often the keeper looks whether its writer is still there
PR_SET_CHILD_SUBREAPER = 36
# variables no Ray process needs and that may hold a secret: keys, passwords, tokens, and the cloud and
# database settings the writer alone uses (a task gets its S3 settings as arguments)
_SECRET_NAME = re.compile(r"(?i)secret|passw|token|credential|api_?key|private|^aws_|^pg|^iwh_db$")


class RayStartFailed(Exception):
    """The keeper could not start a local Ray; the message says why."""


def secret_free(environ: dict[str, str]) -> dict[str, str]:
    """`environ` without the variables that hold, or may hold, a secret: by name, or a value that
    holds a password (a location or URL with one)."""
    return {k: v for k, v in environ.items() if not _SECRET_NAME.search(k) and redact(v) == v}


class LocalRay:
    """A local Ray of `cpus` CPUs, kept by a process of its own (`keep`) for as long as this object
    is not stopped and this process lives."""

    def __init__(self, cpus: int):
        env = secret_free(os.environ) | {"RAY_USAGE_STATS_ENABLED": "0"}  # type: ignore[arg-type]
        self.proc = subprocess.Popen([sys.executable, "-m", KEEPER, str(cpus)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env, text=True)
        line = self.proc.stdout.readline()  # type: ignore[union-attr]
        said = json.loads(line) if line.startswith("{") else {"error": f"the keeper ended ({self.proc.wait()})"}
        if "error" in said:
            self.stop()
            raise RayStartFailed(said["error"])
        self.address: str = said["address"]
        # what a driver joining it needs (its auth mode): Ray's own settings, no secret of ours
        self.env: dict[str, str] = said["env"]  # type: ignore[assignment]

    def stop(self) -> None:
        """Stop Ray gracefully and wait for the keeper; kill it if it takes longer than STOP_S."""
        with contextlib.suppress(OSError):
            self.proc.stdin.write("stop\n")  # type: ignore[union-attr]
            self.proc.stdin.close()  # type: ignore[union-attr]
        try:
            self.proc.wait(STOP_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()  # its Ray processes still go: they are its own, and their head processes die with it
            self.proc.wait()


# ---- the keeper ----------------------------------------------------------------------------------

def keep(cpus: int) -> None:
    """The keeper's life: subreaper, Ray, the address on stdout, then wait for the writer."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the writer's whole group: the writer decides
    signal.signal(signal.SIGTERM, lambda *_: _end(graceful=False))
    writer = os.getppid()
    control = os.dup(0)  # the pipe from the writer, out of reach of what Ray starts
    answer = os.fdopen(os.dup(1), "w")
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)  # what Ray prints goes where the writer's errors go, never into the answer
    try:
        _subreaper()
        before = dict(os.environ)
        import ray

        ray.init(num_cpus=cpus, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
        changed = {k: v for k, v in os.environ.items() if k.startswith("RAY_") and before.get(k) != v}
        answer.write(json.dumps({"address": ray.get_runtime_context().gcs_address, "env": changed}) + "\n")
    except Exception as e:  # Ray not installed, no room for its sockets, a start that failed
        answer.write(json.dumps({"error": str(e).strip().splitlines()[0] if str(e).strip() else repr(e)}) + "\n")
        answer.flush()
        _end(graceful=False)
    answer.flush()
    _end(graceful=_stop_asked(control, writer))


def _stop_asked(control: int, writer: int) -> bool:
    """Wait for the writer: True when it asks to stop, False once it is gone (its pipe closed, or this
    keeper given another parent: whichever the kernel shows first)."""
    said = b""
    while True:
        ready, _, _ = select.select([control], [], [], WATCH_S)
        if ready:
            data = os.read(control, 64)
            if not data:
                return False
            said += data
            if b"stop\n" in said:
                return True
        if os.getppid() != writer:
            return False


def _subreaper() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")


def _end(graceful: bool) -> None:
    """Stop Ray (gracefully when the writer asked, at once when it is gone), kill every process left
    below the keeper, and end."""
    if graceful:
        with contextlib.suppress(Exception):
            import ray

            ray.shutdown()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        below = descendants(os.getpid())
        if not below:
            break
        for pid in below:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        _reap()
        time.sleep(0.02)
    os._exit(0)  # not Ray's exit hooks: the cluster they would talk to is gone


def _reap() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


def descendants(root: int) -> list[int]:
    """Every process below `root`, from /proc (zombies included: the keeper reaps what it inherits)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))  # zombies too: ours to reap
    found, todo = [], [root]
    while todo:
        for kid in children.get(todo.pop(), []):
            found.append(kid)
            todo.append(kid)
    return found


if __name__ == "__main__":
    keep(int(sys.argv[1]))
