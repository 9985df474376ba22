"""finalize's kernels (finalize_kernels.Kernels) as the C library built with the tracer (native/qv_finalize.c).

Why: the numpy passes cost ~0.5-1 us per raw record, numba ~0.4 s to start; the tracer's libraries are
compiled on the recording machine anyway (tracer/native), so this one is there whenever a run was
recorded here, and does each record in a few ns from the first. Where it cannot be loaded (no
compiler, a raw directory finalized elsewhere) finalize_kernels.kernels falls back to numpy or numba.
ctypes releases the GIL during each call, so the scans of two thread files still run in parallel.
"""

from __future__ import annotations

import ctypes

import numpy as np
from quiver.formats.stats import KINDS
from quiver.tracer.finalize_clib import CONSTS, Maps, library
from quiver.tracer.finalize_kernels import RAW_WORDS, Kernels

_I64 = np.dtype(np.int64)


def _arg(a: np.ndarray, dtype) -> np.ndarray:
    """``a`` as a C-contiguous array of ``dtype`` (a copy only when it is not one already)."""
    return np.ascontiguousarray(a, dtype=dtype)


def _out(a: np.ndarray, dtype) -> int:
    """Address of an output array the C code writes in place."""
    if a.dtype != np.dtype(dtype) or not a.flags.c_contiguous:
        raise ValueError("finalize_c: output arrays must be C-contiguous of the kernel's type")
    return a.ctypes.data


def _words(words: np.ndarray) -> np.ndarray:
    if words.dtype != _I64 or words.ndim != 2 or words.shape[1] != RAW_WORDS or not words.flags.c_contiguous:
        raise ValueError("finalize_c: raw words must be C-contiguous rows of RAW_WORDS int64")
    return words


def scan_stream(words, n_strings, late, clock):
    """finalize_kernels.scan_stream (PCs in no particular order, as there)."""
    words = _words(words)
    n = words.shape[0]
    io = np.zeros(11, np.int64)
    io[0] = clock
    used_src = np.zeros(n_strings, np.bool_)
    cap = 1 << max(6, int(2 * n + 2).bit_length())
    keys = np.zeros(cap, np.uint64)     # calloc'd: the pages of unused slots are never touched
    pcs = np.empty(n, np.uint64)
    control, late_rows = np.empty(n, np.int64), np.empty(n, np.int64)
    threads, devices = np.empty(n, np.int64), np.empty(n, np.int64)
    counts = np.zeros(KINDS, np.int64)
    library().qv_fin_scan(words.ctypes.data, n, n_strings, late, ctypes.byref(CONSTS), io.ctypes.data,
                          used_src.ctypes.data, keys.ctypes.data, cap, pcs.ctypes.data, control.ctypes.data,
                          late_rows.ctypes.data,
                          counts.ctypes.data, threads.ctypes.data, devices.ctypes.data)
    clock, n_access, top_alloc, t_min, t_max, n_pcs, n_control, n_late, n_threads, n_devices, blocks = io.tolist()
    return (used_src, pcs[:n_pcs].copy(), control[:n_control].copy(), n_access, top_alloc, counts, t_min, t_max,
            threads[:n_threads].copy(), devices[:n_devices].copy(), late_rows[:n_late].copy(), clock, blocks)


def group_by_stream(rows, starts, pos):
    """finalize_kernels.group_by_stream."""
    rows, starts = _arg(rows, np.int64), _arg(starts, np.int64)
    bounds = np.empty(len(starts) + 1, np.int64)
    fill = np.empty(len(starts), np.int64)
    library().qv_fin_group(rows.ctypes.data, len(rows), starts.ctypes.data, len(starts), _out(pos, np.int64),
                           bounds.ctypes.data, fill.ctypes.data)
    return bounds


def fill_rows(words, rows, out_pos, start, rank, table, t0, by_string, pcs, by_pc,
              task_keys, task_locs, fix_pos, fix_op, out64, out32, out16):
    """finalize_kernels.fill_rows."""
    words = _words(words)
    held = [_arg(a, t) for a, t in ((rows, np.int64), (out_pos, np.int64), (table, np.int64),
                                    (by_string, np.int64), (pcs, np.uint64), (by_pc, np.int64),
                                    (task_keys, np.int64), (task_locs, np.int64), (fix_pos, np.int64),
                                    (fix_op, np.int64))]
    rows, out_pos, table, by_string, pcs, by_pc, task_keys, task_locs, fix_pos, fix_op = held
    maps = Maps(table.ctypes.data, len(table), by_string.ctypes.data, len(by_string), pcs.ctypes.data,
                 by_pc.ctypes.data, len(pcs), task_keys.ctypes.data, task_locs.ctypes.data, len(task_keys),
                 fix_pos.ctypes.data, fix_op.ctypes.data, len(fix_pos))
    batch = out64.shape[1]
    if out32.shape[1] != batch or len(out16) != batch or len(out_pos) and int(out_pos.max()) >= batch:
        raise ValueError("finalize_c: output blocks smaller than the batch")
    library().qv_fin_fill(words.ctypes.data, rows.ctypes.data, out_pos.ctypes.data, len(out_pos), start, rank, t0,
                          ctypes.byref(maps), ctypes.byref(CONSTS), _out(out64, np.int64), _out(out32, np.int32),
                          _out(out16, np.int16), batch)


def read_window(words, cursor, clock, late, until, start, out_g, out_t):
    """finalize_kernels.read_window."""
    words = _words(words)
    io = np.array([cursor, clock], np.int64)
    cap = min(len(out_g), len(out_t))
    k = library().qv_fin_window(words.ctypes.data, words.shape[0], io.ctypes.data, late, until, start,
                                _out(out_g, np.int64), _out(out_t, np.int64), cap)
    return int(io[0]), int(io[1]), int(k)


C = Kernels(scan_stream, group_by_stream, fill_rows, read_window)


def kernels() -> Kernels | None:
    """The C kernels, or None when the library cannot be loaded."""
    return C if library() is not None else None
