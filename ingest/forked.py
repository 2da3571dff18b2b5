"""Parsing fanned out to worker processes of this machine (`iwh ingest --jobs N`): the local
counterpart of `ingest/ray_tasks.py`, with the same contract. The writer stays the calling process.

Not multiprocessing.Pool, which costs the writer on every result: its worker-handler thread wakes
on each one and takes the GIL from the writer, and a thread of the writer's process reads and
unpickles every result from one pipe, which a worker waits on when it is full. Here a worker
writes its result to a file of a temporary folder and sends the file's number; the writer reads
it when it wants it, and no worker waits for the writer. A worker that dies (the OOM killer, a
signal) fails its item alone, and another takes its place: a Pool waits for it forever. A worker
dies with its writer, however the writer ends (`_die_with`).
"""

from __future__ import annotations

import ctypes
import os
import pickle
import queue
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Generic, TypeVar, cast
from multiprocessing import get_context
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess

T = TypeVar("T")  # a work item
R = TypeVar("R")  # what `fn` makes of one


class WorkerDied(Exception):
    """The worker process parsing an item ended without a result."""


def imap_unordered(fn: Callable[[T], R], items: Sequence[T], *, jobs: int,
                   initializer: Callable[[], None] | None = None) -> Iterator[tuple[T, R | None, BaseException | None]]:
    """(item, fn(item), None) or (item, None, the exception) for each item, in the order they end,
    `fn` run in `jobs` worker processes (forked where the platform can), items handed out in order.
    `initializer` runs once in each worker. A caller that stops early stops the workers."""
    folder = tempfile.mkdtemp(prefix="iwh-parse-")
    ended: queue.SimpleQueue[tuple[int | None, BaseException | None]] = queue.SimpleQueue()
    crew = _Crew(fn, initializer, folder, min(jobs, len(items)))
    thread = threading.Thread(target=crew.hand_out, args=(items, ended),
                              name="iwh-parse-dispatch", daemon=True)
    thread.start()
    try:
        for _ in range(len(items)):
            i, error = ended.get()
            if i is None:  # the dispatching thread itself failed (no process could be started)
                raise cast(BaseException, error)  # the dispatcher's failure always comes with its exception
            if error is not None:
                yield items[i], None, error
                continue
            path = f"{folder}/{i}"
            with open(path, "rb") as fh:
                ok, value = pickle.load(fh)
            os.unlink(path)
            if ok:
                yield items[i], value, None
            else:
                error, trace = value
                error.__cause__ = _Traceback(trace)
                yield items[i], None, error
    finally:
        crew.stop()
        thread.join()
        shutil.rmtree(folder, ignore_errors=True)


class _Crew(Generic[T]):
    """The worker processes, and the thread that hands each the next item as it ends one."""

    def __init__(self, fn: Callable[[T], object], initializer: Callable[[], None] | None, folder: str,
                 size: int) -> None:
        self.fn, self.initializer, self.folder, self.size = fn, initializer, folder, size
        self.ctx = get_context("fork") if sys.platform != "win32" else get_context("spawn")
        self.lock = threading.Lock()
        self.stopping = False
        self.procs: list[BaseProcess] = []
        self.proc_of: dict[Connection, BaseProcess] = {}

    def start(self) -> Connection | None:
        parent, child = self.ctx.Pipe()
        with self.lock:
            if self.stopping:
                return None
            proc = self.ctx.Process(target=_serve, args=(child, self.fn, self.initializer, self.folder, os.getpid()),
                                    daemon=True)
            proc.start()
            self.procs.append(proc)
        child.close()
        self.proc_of[parent] = proc
        return parent

    def hand_out(self, items: Sequence[T], ended: queue.SimpleQueue[tuple[int | None, BaseException | None]]) -> None:
        try:
            self._hand_out(items, ended)
        except BaseException as e:
            ended.put((None, e))

    def _hand_out(self, items: Sequence[T], ended: queue.SimpleQueue[tuple[int | None, BaseException | None]]) -> None:
        todo = deque(range(len(items)))
        busy: dict[Connection, int] = {}
        idle = [c for c in (self.start() for _ in range(self.size)) if c is not None]
        while (todo or busy) and not self.stopping:
            while idle and todo:
                conn, i = idle.pop(), todo.popleft()
                try:
                    conn.send_bytes(pickle.dumps((i, items[i]), protocol=pickle.HIGHEST_PROTOCOL))
                except OSError:  # it died between items: the item goes to another
                    todo.appendleft(i)
                    self._replace(conn, idle)
                    continue
                busy[conn] = i
            if not busy:
                break
            for conn in wait(list(busy)):  # type: ignore[assignment]
                i = busy.pop(conn)
                try:
                    conn.recv_bytes()
                except (EOFError, OSError):
                    proc = self.proc_of[conn]
                    proc.join()
                    ended.put((i, WorkerDied(f"the parse worker (pid {proc.pid}) ended without a result, "
                                             f"{_how(proc.exitcode)}")))
                    self._replace(conn, idle)
                    continue
                ended.put((i, None))
                idle.append(conn)
        for conn in idle + list(busy):
            conn.close()

    def _replace(self, conn: Connection, idle: list[Connection]) -> None:
        conn.close()
        fresh = self.start()
        if fresh is not None:
            idle.append(fresh)

    def stop(self) -> None:
        """Every worker ends. One still alive is killed: when the caller stopped early it may be
        mid-item, whose result nobody will read; otherwise it only waits for an item."""
        with self.lock:
            self.stopping = True
            procs = list(self.procs)
        for p in procs:
            if p.is_alive():
                p.kill()
            p.join()


def _how(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        return f"killed by {signal.Signals(-exitcode).name}"
    return f"exit status {exitcode}"


def _serve(conn: Connection, fn: Callable[[T], object], initializer: Callable[[], None] | None, folder: str,
           writer: int) -> None:
    _die_with(writer)
    # Ctrl-C is the writer's to handle: it stops the workers
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if initializer is not None:
        initializer()
    while True:
        try:
            i, item = pickle.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return
        try:
            out = (True, fn(item))
        except BaseException as e:
            out = (False, (_portable(e), "".join(traceback.format_exception(type(e), e, e.__traceback__))))
        path = f"{folder}/{i}"
        try:
            with open(path, "wb") as fh:
                pickle.dump(out, fh, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as e:  # a result that cannot be pickled
            with open(path, "wb") as fh:
                pickle.dump((False, (RuntimeError(f"the parse worker could not hand over its result: "
                                                  f"{type(e).__name__}: {e}"), "")), fh)
        conn.send_bytes(b"")


_PR_SET_PDEATHSIG = 1


def _die_with(writer: int) -> None:
    """End this worker when its writer ends, whatever ends it (SIGKILL included). A forked worker
    holds copies of the writer's descriptors: a file warehouse's writer lock, a lake's catalog
    session with its advisory lock. Left alive (blocked on a pipe that a sibling also holds open),
    it would keep the lock from every later writer. Linux signals it (PR_SET_PDEATHSIG: when the thread
    that forked it ends, which lives as long as the workers are wanted); elsewhere a thread of its
    own watches for being handed to another parent."""
    linux = sys.platform.startswith("linux")
    if not linux or ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        threading.Thread(target=_watch_parent, args=(writer,), name="iwh-parse-orphan", daemon=True).start()
    if os.getppid() != writer:  # it ended before this worker could ask
        os._exit(1)


def _watch_parent(writer: int) -> None:
    while os.getppid() == writer:
        time.sleep(0.5)
    os._exit(1)


def _portable(e: BaseException) -> BaseException:
    """The exception, or its text where it cannot be pickled."""
    try:
        pickle.loads(pickle.dumps(e))
        return e
    except Exception:
        return RuntimeError(f"{type(e).__name__}: {e}")


class _Traceback(Exception):
    """The worker's traceback, as the cause of the exception it handed over (as Pool does)."""

    def __str__(self) -> str:
        trace: str = self.args[0]
        return "\n" + trace
