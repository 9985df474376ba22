"""finalize_order's merge of thread files gives the order of one global sort by (time, global row),
for every kernel set, whatever the batch size: rows a little late (carried between windows), rows far
behind their thread's clock (stragglers), equal times across and within threads, empty and
one-row files. Thread files are built in memory as raw words (the layout of tracer/rawread.py)."""

from __future__ import annotations

import numpy as np
import pytest
from quiver.formats import EventKind
from quiver.tracer import finalize_kernels, finalize_numpy
from quiver.tracer.finalize_kernels import RAW_WORDS, W_THREAD_KIND_FLAGS, W_TIME
from quiver.tracer.finalize_order import LATE_NS, Stream, log_order, scan

# python: the kernels interpreted (QUIVER_JIT=never, set by the test)
KERNELS = {"python": lambda: finalize_kernels.KERNELS, "numpy": lambda: finalize_numpy.NUMPY,
           "compiled": finalize_kernels.compiled}


def thread_file(rng: np.random.Generator, n: int, thread: int, t0: int) -> np.ndarray:
    """n rows stamped in order (steps of 0..3 ns: ties), a quarter of them late by up to 2 us, a few
    by up to 5 ms (stragglers), as access rows of thread `thread`."""
    t = t0 + np.cumsum(rng.integers(0, 4, n))
    late = rng.random(n) < 0.25
    t[late] -= rng.integers(0, 2000, int(late.sum()))
    far = rng.random(n) < 0.01
    t[far] -= rng.integers(LATE_NS, 5 * LATE_NS, int(far.sum()))
    words = np.zeros((n, RAW_WORDS), np.int64)
    words[:, W_TIME] = t
    words[:, W_THREAD_KIND_FLAGS] = (int(EventKind.ACCESS) << 32) | thread
    words.flags.writeable = False
    return words


@pytest.mark.parametrize("kernels", list(KERNELS))
@pytest.mark.parametrize("batch", [1, 7, 1000, 1 << 20])
def test_merge_is_the_global_sort(kernels, batch, monkeypatch):
    if kernels == "python" and batch == 1:
        pytest.skip("plain-Python kernels, one row per batch: slow and covered by the others")
    if kernels == "python":
        monkeypatch.setenv("QUIVER_JIT", "never")
    rng = np.random.default_rng(batch)
    sizes = [3000, 0, 1, 2500, 40]
    streams, start = [], 0
    for i, n in enumerate(sizes):
        streams.append(Stream(rank=i % 2, words=thread_file(rng, n, i, LATE_NS * 6 + 1000 * i),
                              table=np.array([-1]), start=start))
        start += n
    kern = KERNELS[kernels]()
    scans = [scan(kern, st) for st in streams]
    assert sum(len(sc.late_rows) for sc in scans) > 20            # stragglers are exercised
    got = list(log_order(kern, streams, scans, batch))
    assert all(len(b) == batch for b in got[:-1]) and 0 < len(got[-1]) <= batch
    times = np.concatenate([st.words[:, W_TIME] for st in streams])
    want = np.argsort(times, kind="stable")      # rows are numbered in file order: ties keep it
    assert np.array_equal(np.concatenate(got), want)


def test_scan_counts_what_the_log_rows_hold():
    rng = np.random.default_rng(0)
    st = Stream(rank=3, words=thread_file(rng, 5000, 7, LATE_NS * 6), table=np.array([-1]), start=0)
    sc = scan(finalize_kernels.compiled(), st)
    assert sc.stats.kinds[int(EventKind.ACCESS)] == 5000 and sc.stats.threads == {(3, 7)}
    assert sc.stats.t_min == int(st.words[:, W_TIME].min()) and sc.stats.t_max == int(st.words[:, W_TIME].max())
    clock = np.maximum.accumulate(st.words[:, W_TIME])
    assert np.array_equal(sc.late_rows, np.flatnonzero(st.words[:, W_TIME] < clock - LATE_NS))
