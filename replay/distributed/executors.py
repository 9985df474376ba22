"""Where shard tasks run: in this process, in local worker processes, or on a Dask cluster.

Why one small interface: the sharded analysis only needs "run this pure function on these items,
tell me as each finishes, give me the results in item order". Results are always returned in
item order, so the report never depends on which worker finished first.

Task functions must be importable module-level functions with picklable arguments: worker
processes are started with ``spawn`` (safe with threads, numba and pyarrow in the parent).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any

INSTALL_HINT = "Dask is not installed: pip install 'quiver[distributed]' (or: pip install 'dask[distributed]')"
OnDone = Callable[[int], None]


class ExecutorUnavailable(RuntimeError):
    """The requested backend cannot start (message: one line for the user)."""


class SerialExecutor:
    """Tasks one after the other in this process (the default)."""

    name = "serial"
    workers = 1
    shared_filesystem_needed = False

    def run(self, fn: Callable[..., Any], items: Sequence[tuple], on_done: OnDone | None = None) -> list[Any]:
        out = []
        for i, args in enumerate(items):
            out.append(fn(*args))
            if on_done is not None:
                on_done(i)
        return out

    def close(self) -> None:
        pass


class ProcessExecutor:
    """``--workers N``: a pool of N spawned local processes, reused for every phase."""

    name = "processes"
    shared_filesystem_needed = False

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))

    def run(self, fn: Callable[..., Any], items: Sequence[tuple], on_done: OnDone | None = None) -> list[Any]:
        futures = {self._pool.submit(fn, *args): i for i, args in enumerate(items)}
        out: list[Any] = [None] * len(items)
        pending = set(futures)
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in sorted(done, key=futures.__getitem__):
                    out[futures[f]] = f.result()
                    if on_done is not None:
                        on_done(futures[f])
        except BaseException:
            for f in pending:
                f.cancel()
            raise
        return out

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor:
    """``--dask ADDRESS``: tasks on a Dask distributed cluster; ``local`` starts a LocalCluster."""

    name = "dask"

    def __init__(self, address: str, workers: int | None = None) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise ExecutorUnavailable(INSTALL_HINT) from None
        self._cluster = None
        try:
            if address == "local":
                n = workers or min(os.cpu_count() or 1, 4)
                self._cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                             dashboard_address=None, silence_logs=40)
                self._client = Client(self._cluster)
            else:
                self._client = Client(address)   # timeout: distributed.comm.timeouts.connect (30 s)
        except (OSError, TimeoutError) as e:
            self.close()
            raise ExecutorUnavailable(f"cannot reach the Dask scheduler at {address} ({e})") from None
        except (ValueError, TypeError) as e:   # an address Dask cannot parse ('garbage', 'tcp://:x')
            self.close()
            raise ExecutorUnavailable(f"--dask {address!r}: not a scheduler address such as tcp://host:8786 "
                                      f"or 'local' ({e})") from None
        self.shared_filesystem_needed = address != "local"
        self.workers = max(len(self._client.scheduler_info().get("workers", {})), 1)

    def run(self, fn: Callable[..., Any], items: Sequence[tuple], on_done: OnDone | None = None) -> list[Any]:
        from distributed import as_completed

        futures = [self._client.submit(fn, *args, pure=False) for args in items]
        index = {f.key: i for i, f in enumerate(futures)}
        out: list[Any] = [None] * len(items)
        try:
            for f in as_completed(futures):
                out[index[f.key]] = f.result()
                if on_done is not None:
                    on_done(index[f.key])
        except BaseException:
            self._client.cancel(futures)
            raise
        return out

    def close(self) -> None:
        client = getattr(self, "_client", None)
        if client is not None:
            client.close()
        if self._cluster is not None:
            self._cluster.close()


Executor = SerialExecutor | ProcessExecutor | DaskExecutor


def make_executor(workers: int | None = None, dask: str | None = None) -> Executor:
    """``--dask`` wins over ``--workers`` (which then sizes a ``local`` cluster); default serial."""
    if dask:
        return DaskExecutor(dask, workers)
    if workers and workers > 1:
        return ProcessExecutor(workers)
    return SerialExecutor()
