"""Where a build's per-item work runs: the local process pool or Ray tasks, behind one interface.

`Executor.map(fn, items, count, chunk)` runs a module-level `fn` over `items` in chunks of `chunk` and yields the
results in input order, with a bounded number of chunks in flight, so memory stays flat in n. The builder keeps
the one writer (order, atomic writes, resume) and never learns which executor ran the work: a Ray build is
byte-identical to a local one. Closing the generator early (an error or Ctrl-C in the consumer) stops the work.
"""
from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from collections import deque
from itertools import chain, islice

from grip import GripError

PR_SET_PDEATHSIG = 1   # <linux/prctl.h>
ProcessPoolExecutor = None   # concurrent.futures' pool, imported on first use: a one-worker build starts without it
EXECUTORS = ("local", "ray")
RAY_EXTRA = "pip install 'grip-bench[ray]' (pip install -e '.[ray]' in a checkout)"


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def max_workers() -> int:
    """The most worker processes a build starts: four per CPU this process may run on."""
    return 4 * cpu_count()


MAX_RAY_WORKERS = 4096   # Ray tasks at a time: the cluster, not this machine, sets what runs


def check_workers(workers: int, executor: str = "local") -> None:
    if executor == "ray":
        if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= MAX_RAY_WORKERS:
            raise GripError(f"--workers must be from 1 to {MAX_RAY_WORKERS} with --executor ray, got {workers}")
        return
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= max_workers():
        raise GripError(f"--workers must be from 1 to {max_workers()} (four per CPU here), got {workers}")


def _chunks(items, chunk: int, singles: int):
    """Lists of `chunk` items, the first `singles` items one per list (costly items, such as those with grain
    copies, come back one by one, so progress moves from the start)."""
    it = iter(items)
    head = ([x] for x in islice(it, singles))
    return chain(head, iter(lambda: list(islice(it, chunk)), []))


def _map_chunk(fn, chunk: list) -> list:
    return [fn(x) for x in chunk]


class Executor:
    """Runs `fn` over items, results in order (see the module docstring)."""
    name = ""
    workers = 1
    lock_fd: int | None = None   # the store lock's descriptor, which worker processes must not keep

    def map(self, fn, items, count: int, chunk: int, singles: int = 0):
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# --- local: a process pool ------------------------------------------------------------------------------------

def _watch_parent(parent_pid: int) -> None:
    while True:
        time.sleep(1.0)
        if os.getppid() != parent_pid:
            os._exit(1)


def _worker_init(parent_pid: int, lock_fd: int | None) -> None:
    """First thing in every worker (a child of the build). A worker must never outlive the build: one left behind
    by a killed build blocks on a pipe no one reads, and a worker holding the store lock would refuse every rerun."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)    # Ctrl-C reaches the whole process group; the parent stops us
    signal.signal(signal.SIGTERM, signal.SIG_DFL)   # not the parent's handler, which fork copied
    if lock_fd is not None:
        # The lock belongs to the open file, shared by every copy of the descriptor: dropping the worker's copy
        # leaves the parent holding it, and the lock goes when the parent does, whatever happens to us.
        try:
            os.close(lock_fd)
        except OSError:
            pass
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent_pid:   # the parent died before the line above took effect
        os._exit(1)
    # Where there is no death signal (or the pool was made by another thread that has since ended): poll.
    threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True, name="grip-parent-watch").start()


def _pool_class():
    global ProcessPoolExecutor
    if ProcessPoolExecutor is None:
        from concurrent.futures import ProcessPoolExecutor as pool
        ProcessPoolExecutor = pool
    return ProcessPoolExecutor


def _mp_context():
    """fork where there is one (Linux; the default there before Python 3.14): workers start at once, inherit what
    the parent loaded (domains registered at run time included), and are the build's own children, which
    `_worker_init` relies on. Elsewhere spawn, whose workers are direct children too."""
    import multiprocessing
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods and sys.platform.startswith("linux")
                                       else "spawn")


def _stop_pool(ex) -> None:
    """Stop a pool at once: queued work cancelled, busy workers killed (they write nothing; the parent does)."""
    kill = getattr(ex, "kill_workers", None)   # Python 3.14+
    if kill is not None:
        kill()
        ex.shutdown(wait=True, cancel_futures=True)
        return
    procs = list((getattr(ex, "_processes", None) or {}).values())
    manager = getattr(ex, "_executor_manager_thread", None)   # before shutdown, which sets it to None
    ex.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        p.kill()
    for p in procs:
        p.join(timeout=10)
    # Before 3.14 the pool's manager thread notices the dead workers and closes its wake-up pipe, and the module's
    # exit hook may then write to that closed pipe ("Exception ignored ... Bad file descriptor" after our one-line
    # error): take the pipe off the hook's list (the thread still ends on its own and is joined at exit).
    import concurrent.futures.process as cfp
    if manager is not None:
        getattr(cfp, "_threads_wakeups", {}).pop(manager, None)


class LocalExecutor(Executor):
    """In this process with one worker; otherwise a pool of at most one process per chunk, four chunks per process
    in flight. `lock_fd`, the store lock, is closed in forked workers so only the build holds it."""
    name = "local"

    def __init__(self, workers: int = 1, lock_fd: int | None = None):
        self.workers, self.lock_fd = workers, lock_fd

    def map(self, fn, items, count: int, chunk: int, singles: int = 0):
        singles = min(singles, count)
        procs = min(self.workers, singles + -(-(count - singles) // chunk))
        if procs <= 1:
            yield from map(fn, items)
            return
        ctx = _mp_context()
        inherited_lock = self.lock_fd if ctx.get_start_method() == "fork" else None   # spawn passes none on
        ex = _pool_class()(max_workers=procs, mp_context=ctx, initializer=_worker_init,
                           initargs=(os.getpid(), inherited_lock))
        from concurrent.futures.process import BrokenProcessPool
        finished = False
        try:
            chunks = _chunks(items, chunk, singles)
            pending = deque(ex.submit(_map_chunk, fn, c) for c in islice(chunks, 4 * procs))
            while pending:
                try:
                    batch = pending.popleft().result()
                except BrokenProcessPool:
                    raise GripError("a worker process died (out of memory, or killed); rerun the same command to "
                                    "resume") from None
                for c in islice(chunks, 1):
                    pending.append(ex.submit(_map_chunk, fn, c))
                yield from batch
            finished = True
        finally:
            if finished:
                ex.shutdown(wait=True)
            else:
                _stop_pool(ex)


def side_process():
    """A pool of one process for work beside a build (a release build's closing audits), a child like the build's
    workers: it ignores Ctrl-C (the parent stops it: `stop_pool`) and dies with the parent. Make it while no store
    lock is held: a forked child would keep a copy of the lock's descriptor."""
    return _pool_class()(max_workers=1, mp_context=_mp_context(), initializer=_worker_init,
                         initargs=(os.getpid(), None))


stop_pool = _stop_pool


def pool_map(fn, items, count: int, workers: int, chunk: int, lock_fd: int | None = None):
    """`LocalExecutor(workers, lock_fd).map(...)` (for callers outside a build, such as the export's row check)."""
    return LocalExecutor(workers, lock_fd).map(fn, items, count, chunk)


# --- Ray --------------------------------------------------------------------------------------------------------

def _import_ray():
    try:
        import ray
    except ImportError:
        raise GripError(f"--executor ray needs Ray, which is not installed: {RAY_EXTRA}") from None
    return ray


class RayExecutor(Executor):
    """The same chunks as Ray tasks, `workers` running and as many queued, results fetched in order. Joins the
    cluster at `address` (a running `ray start --head`, every node with this grip installed), or, without one,
    uses the Ray this process already started or starts a local one of `workers` CPUs and stops it on close."""
    name = "ray"

    def __init__(self, workers: int = 1, address: str | None = None):
        self.ray = _import_ray()
        self.workers, self.address = workers, address
        self._started = False
        self._task = None

    def start(self) -> None:
        """Join or start Ray now (a release build keeps one session for all its domains)."""
        self._ensure()

    def _ensure(self):
        ray = self.ray
        if not ray.is_initialized():
            kw = {"address": self.address} if self.address else {"num_cpus": self.workers}
            try:
                ray.init(include_dashboard=False, log_to_driver=False, logging_level="ERROR", **kw)
            except (ConnectionError, ValueError, RuntimeError) as e:
                where = f"the Ray cluster at {self.address}" if self.address else "a local Ray"
                raise GripError(f"could not start {where}: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
                                ) from None
            self._started = True
        if self._task is None:
            self._task = ray.remote(num_cpus=1, max_retries=2)(_map_chunk)
        return self._task

    def map(self, fn, items, count: int, chunk: int, singles: int = 0):
        if count == 0:
            return
        ray = self.ray
        task = self._ensure()
        chunks = _chunks(items, chunk, min(singles, count))
        pending: deque = deque()
        finished = False
        try:
            for c in islice(chunks, 2 * self.workers):   # as many queued as running: no worker waits on the driver
                pending.append(task.remote(fn, c))
            while pending:
                batch = self._get(pending.popleft())
                for c in islice(chunks, 1):
                    pending.append(task.remote(fn, c))
                yield from batch
            finished = True
        finally:
            if not finished:
                for ref in pending:
                    try:
                        ray.cancel(ref, force=True)
                    except Exception:   # already finished, or the cluster is gone: nothing left to stop
                        pass

    def _get(self, ref):
        ex = self.ray.exceptions
        try:
            return self.ray.get(ref)
        except ex.RayTaskError as e:
            cause = getattr(e, "cause", None)
            if isinstance(cause, Exception):   # the task's own error (a GenerationError, a DomainDefect...)
                raise cause from None
            raise GripError(f"a Ray task failed: {str(e).splitlines()[0]}") from None
        except ex.RayError as e:   # a worker or node died, memory ran out, the cluster went away
            raise GripError(f"a Ray worker failed ({type(e).__name__}); rerun the same command to resume") from None

    def close(self) -> None:
        if self._started:
            self._started = False
            self.ray.shutdown()


def make_executor(name: str = "local", workers: int = 1, address: str | None = None,
                  lock_fd: int | None = None) -> Executor:
    if name not in EXECUTORS:
        raise GripError(f"--executor must be one of {', '.join(EXECUTORS)}, got {name!r}")
    if address is not None and name != "ray":
        raise GripError("--address names a Ray cluster; it goes with --executor ray")
    if name == "ray":
        return RayExecutor(workers, address)
    return LocalExecutor(workers, lock_fd)
