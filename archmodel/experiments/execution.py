"""Where the points of a sweep run: Dask (``dask.distributed``) worker processes on this
machine, an existing Dask scheduler (a cluster started by SLURM, Kubernetes or SSH), or this
process.

Points are submitted in order and their rows come back as they finish, in whatever order
that is. A Ctrl-C stops scheduling: the points not yet finished are cancelled and nothing is
waited for (a point already running on a remote cluster finishes there unseen; local
workers are ended with their cluster).
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import logging
import os
import signal
import sys
import threading
import uuid
from typing import Callable

from ..kernel import ArchError
from .runner import run_point


def cpu_count() -> int:
    """The processors this process may run on (the default number of workers)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class _HeldInterrupt:
    """Ctrl-C (SIGINT), and SIGTERM or SIGHUP where the sweep stops on them, held while the
    local worker processes start (or the study and the points are sent to the scheduler: a
    KeyboardInterrupt in the middle of that left Dask's send pending and printed its "Task
    exception was never retrieved" traceback), then handed on.

    A Ctrl-C in the terminal reaches the whole process group; the driver alone should act on
    it (the workers end when it closes their cluster), not every worker with a traceback. So
    while the cluster starts, this thread blocks SIGINT: the threads Dask begins meanwhile
    (its event loop, the ones that start each worker process, and restart it) inherit the
    mask, and so do the worker processes, where SIGINT stays blocked. A Ctrl-C in that time
    (seconds on a loaded machine) is noted by a handler, not lost, as it would be if SIGINT
    were ignored (the whole sweep would then run); :meth:`deliver` raises it again once the
    cluster is up and can be closed. SIGTERM and SIGHUP are only noted, not blocked: the
    workers inherit a mask, and Dask ends a worker with SIGTERM. A process started with a
    signal ignored (SIGINT in a background job of a non-interactive shell, SIGHUP under
    ``nohup``) keeps ignoring it, as Python's convention is, and so do its workers. Off the
    main thread nothing changes (no handler can be set there); without ``pthread_sigmask``
    (Windows) SIGINT is ignored while the workers start.
    """

    NOTED = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))
    """Signals noted while held when a Python handler (the sweep's) acts on them."""

    def __init__(self) -> None:
        self.came: int | None = None  # the first stop signal that came while held
        self._previous: dict = {}  # the handlers to put back
        self._blocked: set | None = None  # the mask to put back

    def _note(self, signum, frame) -> None:
        """The handler while held: a stop signal came."""
        if self.came is None:
            self.came = signum

    def __enter__(self) -> "_HeldInterrupt":
        if threading.current_thread() is not threading.main_thread():
            return self
        for number in self.NOTED:
            if callable(signal.getsignal(number)):
                self._previous[number] = signal.signal(number, self._note)
        if signal.getsignal(signal.SIGINT) in (signal.SIG_IGN, None):
            return self  # ignored already (or not set from Python): the workers inherit that
        if not hasattr(signal, "pthread_sigmask"):
            self._previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.SIG_IGN)
            return self
        # multiprocessing's resource tracker unblocks SIGINT in the thread that starts it
        # (else the one that starts the first worker); started here, it is only checked then
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()
        # the handler first: a Ctrl-C that comes to a thread begun before this one's mask
        # changed (a BLAS pool) is noted, not raised in the middle of the cluster's start
        self._previous[signal.SIGINT] = signal.signal(signal.SIGINT, self._note)
        self._blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        return self

    def __exit__(self, *exc) -> None:
        if self._blocked is not None:
            # a Ctrl-C pending on this thread is handled here, by _note
            signal.pthread_sigmask(signal.SIG_SETMASK, self._blocked)
            self._blocked = None
        for number, previous in self._previous.items():
            signal.signal(number, previous)
        self._previous = {}

    def deliver(self) -> None:
        """Raise a stop signal that came while held, to the handler in place again
        (Python's raises KeyboardInterrupt for SIGINT, the sweep's for SIGTERM and SIGHUP)."""
        if self.came is not None:
            came, self.came = self.came, None
            signal.raise_signal(came)


class _ByValue:
    """A function that any pickler (Dask tries the standard one first) carries by value."""

    def __init__(self, function: Callable):
        self.function = function
        self.__name__ = getattr(function, "__name__", "builder")

    def __call__(self, *args, **kwargs):
        return self.function(*args, **kwargs)

    def __reduce__(self):
        import cloudpickle

        return cloudpickle.loads, (cloudpickle.dumps(self.function),)


def ship_by_value(function: Callable) -> Callable:
    """``function``, or, if it comes from a module a worker cannot import by name (a ``.py``
    file loaded by its path), a wrapper that sends the module's code with it."""
    module = sys.modules.get(getattr(function, "__module__", None) or "")
    if module is None or module.__name__ == "__main__" or "." in module.__name__:
        return function  # __main__'s functions go by value already; a package's module is importable
    # Where a fresh process would find the name on sys.path (not this one's sys.modules,
    # which holds a module loaded by path under its file's stem).
    found = importlib.machinery.PathFinder.find_spec(module.__name__)
    if found is not None and found.origin == getattr(module, "__file__", None):
        return function
    import cloudpickle

    cloudpickle.register_pickle_by_value(module)
    return _ByValue(function)


class Executor:
    """Runs points and hands back their rows; a context manager that owns what it starts.

    ``workers=0`` runs the points one after another in this process (no Dask, for debugging);
    ``workers=N`` starts a Dask ``LocalCluster`` of N single-threaded worker processes (the
    simulator is single threaded and holds the GIL, so one thread per process); ``scheduler``
    connects to an existing scheduler (``tcp://host:8786`` or a scheduler file ending in
    ``.json``); ``client`` uses a ``distributed.Client`` the caller owns (a notebook's).
    """

    def __init__(self, workers: int | None = None, scheduler: str | None = None, client=None):
        if workers is not None and workers < 0:
            raise ArchError(f"--workers must be 0 (this process) or more, got {workers}")
        if sum(x is not None for x in (workers, scheduler, client)) > 1:
            raise ArchError("give one of --workers and --scheduler",
                            hint="--workers starts local worker processes; --scheduler uses an existing cluster's")
        self.workers = cpu_count() if workers is None and scheduler is None and client is None else workers
        self.scheduler = scheduler
        self.client = client
        self._owned: list = []

    @property
    def inline(self) -> bool:
        """The points run in this process."""
        return self.workers == 0

    def describe(self) -> str:
        """Where the points run, for the user."""
        if self.inline:
            return "this process"
        if self.client is not None and not self._owned:
            return f"the Dask cluster of {self.client.scheduler.address}"
        if self.scheduler is not None:
            return f"the Dask scheduler at {self.scheduler}"
        return f"{self.workers} local Dask worker process{'es' if self.workers != 1 else ''}"

    def __enter__(self) -> "Executor":
        if self.inline or self.client is not None:
            return self
        from distributed import Client, LocalCluster

        if self.scheduler is not None:
            try:
                if self.scheduler.endswith(".json"):
                    self.client = Client(scheduler_file=self.scheduler, timeout="10s")
                else:
                    self.client = Client(self.scheduler, timeout="10s")
            except (OSError, TimeoutError, ValueError) as err:
                raise ArchError(f"--scheduler {self.scheduler}: cannot reach a Dask scheduler ({err})",
                                hint="start one with 'dask scheduler' and workers with 'dask worker ADDRESS'") from None
            self._owned.append(self.client)
            return self
        with _HeldInterrupt() as held:
            # Dask's own log stays quiet: what goes wrong with a point is in its row. Without a
            # dashboard the scheduler still serves its health and metrics pages, on port 8787
            # unless told otherwise: any free local port, so a second sweep on the machine
            # does not warn "Port 8787 is already in use".
            cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None, scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                                   silence_logs=logging.CRITICAL)
        self._owned.append(cluster)
        try:
            held.deliver()  # a Ctrl-C while the workers started stops the sweep now
            self.client = Client(cluster)
            self._owned.insert(0, self.client)
        except BaseException:
            self.__exit__()  # a 'with' calls __exit__ only once __enter__ has returned
            raise
        return self

    def __exit__(self, *exc) -> None:
        for thing in self._owned:
            with contextlib.suppress(Exception):
                thing.close(timeout=5)
        self._owned = []

    def run(self, study, points: list, on_row: Callable) -> None:
        """Run every point; call ``on_row(point, row)`` as each finishes. A KeyboardInterrupt
        cancels what has not finished and propagates."""
        if self.inline:
            for point in points:
                on_row(point, run_point(study, point))
            return
        from distributed import as_completed

        with _HeldInterrupt() as held:
            shared = self.client.scatter(study, broadcast=True, hash=False)
            token = uuid.uuid4().hex[:8]
            # one message to the scheduler for all the points, not one each
            submitted = self.client.map(run_point, [shared] * len(points), points,
                                        key=[f"archmodel-point-{token}-{i}" for i in range(len(points))], pure=False)
        futures = {future.key: (future, point) for future, point in zip(submitted, points)}
        try:
            held.deliver()  # a Ctrl-C while they were sent: what was sent is cancelled below
            for future in as_completed([f for f, _ in futures.values()]):
                _, point = futures.pop(future.key)
                on_row(point, self._row(future, point, study))
                future.release()
        except BaseException:
            self.client.cancel([f for f, _ in futures.values()], force=True)
            raise

    @staticmethod
    def _row(future, point, study) -> dict:
        """The row of a finished future; a point whose worker died (or whose result could not
        come back) is a row of outcome ``lost`` with the reason."""
        if future.status == "finished":
            return future.result()
        err = future.exception()
        row = dict(point.values)
        row.update(seed=point.seed, outcome="lost", message=f"{type(err).__name__}: {err}",
                   input_sha256=study.input_sha256)
        return row
