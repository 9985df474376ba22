"""The kernels of finalize_kernels as whole-column numpy passes, for runs too small to pay numba's start-up
when the C library (finalize_c) cannot be loaded.

Why: numba costs ~0.4-0.5 s before its first compiled call (its import, then loading the cached
machine code); on runs of up to a few million events these passes finish sooner, so a typical
`trace record` never imports numba. Same signatures and results as the compiled kernels (the
reference test runs finalize with both); rows are handled in chunks, so the temporary arrays stay
a few MiB whatever the run's size.

Why a second copy when formats/jit.py can run the kernels themselves interpreted: interpreted, they
cost ~13 us per raw event (~0.36 s for 25 k events, ~1.3 s for 100 k), these passes ~0.5-1 us
(0.05 s, 0.08-0.18 s); only tiny runs (a few hundred events) cost the same both ways (docs/bench.md).
"""

from __future__ import annotations

import numpy as np
from quiver.formats.blocks import mask_bits, row_blocks
from quiver.formats.sets import sorted_unique
from quiver.tracer.finalize_kernels import (
    ACCESS,
    ALLOC,
    CONSTRUCT_BEGIN,
    CONSTRUCT_END,
    CONTROL_KINDS,
    KINDS,
    TASK_CREATE,
    TASK_DEPEND,
    W_ADDR,
    W_ADDR2,
    W_AUX,
    W_AUX2,
    W_ID,
    W_ID2,
    W_LOCSTR_OP,
    W_NAME_DEVICE,
    W_PC,
    W_SIZE,
    W_THREAD_KIND_FLAGS,
    W_TIME,
    WIN_CREATE,
    Kernels,
)
from quiver.tracer.rawread import F_AUX2_STR, F_AUX_STR, F_ID2_STR, F_NAME_INT, F_PC_RET

CHUNK = 1 << 16  # rows per pass: 6 MiB of raw words gathered at a time


def _lo32(w: np.ndarray) -> np.ndarray:
    return (w << 32) >> 32


def _kind(w: np.ndarray) -> np.ndarray:
    return (w << 16) >> 48


def _adjusted_pcs(w: np.ndarray) -> np.ndarray:
    """Code address of each row, minus 1 for a return address; 0 = none (finalize_kernels._adjusted_pc)."""
    pc = w[:, W_PC].view(np.uint64)
    ret = (((w[:, W_THREAD_KIND_FLAGS] >> 48) & F_PC_RET) != 0) & (pc != 0)
    return pc - ret.astype(np.uint64)


def _lookup(keys: np.ndarray, values: np.ndarray, q: np.ndarray, default: np.ndarray) -> np.ndarray:
    """values[j] where keys[j] == q (keys sorted unique), else default."""
    if not len(keys):
        return default
    j = np.minimum(np.searchsorted(keys, q), len(keys) - 1)
    return np.where(keys[j] == q, values[j], default)


def scan_stream(words, n_strings, late, clock):
    """finalize_kernels.scan_stream as numpy passes (PCs, threads and devices come back sorted)."""
    n = words.shape[0]
    used_src = np.zeros(n_strings, np.bool_)
    pcs, control, late_rows = [np.zeros(0, np.uint64)], [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    threads, devices = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    counts = np.zeros(KINDS, np.int64)
    n_access, top_alloc, blocks = 0, -1, 0
    for a in range(0, n, CHUNK):
        w = words[a:a + CHUNK]
        t = w[:, W_TIME]
        seen = np.maximum(np.maximum.accumulate(t), clock)      # the thread's clock after each row
        late_rows.append(np.flatnonzero(t < seen - late) + a)
        clock = int(seen[-1])
        kind = _kind(w[:, W_THREAD_KIND_FLAGS])
        counts += np.bincount(kind[(kind >= 0) & (kind < KINDS)], minlength=KINDS)
        threads.append(sorted_unique(_lo32(w[:, W_THREAD_KIND_FLAGS])))
        device = w[kind < WIN_CREATE, W_NAME_DEVICE] >> 32
        devices.append(sorted_unique(device[device >= 0]))
        is_access = kind == ACCESS
        n_access += int(np.count_nonzero(is_access))
        b = np.maximum(w[is_access, W_AUX2], 1)
        planes = _lo32(w[is_access, W_NAME_DEVICE])
        named = ((w[is_access, W_THREAD_KIND_FLAGS] >> 48) & F_NAME_INT) != 0
        planes = np.where(named & (b > 1) & (planes > 1), planes, 1)
        b = row_blocks(b, masks=mask_bits(w[is_access, W_LOCSTR_OP] >> 32, w[is_access, W_ID2]))
        blocks += int((b * planes).sum())
        allocs = w[kind == ALLOC, W_ID]
        if len(allocs):
            top_alloc = max(top_alloc, int(allocs.max()))
        control.append(np.flatnonzero(np.isin(kind, CONTROL_KINDS)) + a)
        src = _lo32(w[:, W_LOCSTR_OP])
        has_src = (src >= 0) & (src < n_strings)
        used_src[src[has_src]] = True
        pc = _adjusted_pcs(w)[~has_src]
        pcs.append(sorted_unique(pc[pc != 0]))
    t_min, t_max = (int(words[:, W_TIME].min()), int(words[:, W_TIME].max())) if n else (0, -1)
    return (used_src, sorted_unique(np.concatenate(pcs)), np.concatenate(control), n_access, top_alloc, counts,
            t_min, t_max, sorted_unique(np.concatenate(threads)), sorted_unique(np.concatenate(devices)),
            np.concatenate(late_rows), clock, blocks)


def group_by_stream(rows, starts, pos):
    """finalize_kernels.group_by_stream as numpy passes."""
    stream = np.searchsorted(starts, rows, side="right") - 1
    # a stable sort of 16-bit keys is a radix sort: linear in the rows
    pos[:len(rows)] = np.argsort(stream.astype(np.uint16) if len(starts) <= 1 << 16 else stream, kind="stable")
    bounds = np.zeros(len(starts) + 1, np.int64)
    np.cumsum(np.bincount(stream, minlength=len(starts)), out=bounds[1:])
    return bounds


def _strings(v: np.ndarray, use: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Rank-local string ids -> the log's ids where `use` and the id is in the table."""
    if not use.any():  # e.g. accesses: no string fields
        return v
    use &= (v >= 0) & (v < len(table) - 1)
    return np.where(use, table[np.where(use, v, len(table) - 1)], v)


BLOCK = 1 << 12  # rows transposed at a time: 12 words x 4096 rows (384 KiB) stay in the cache


def _consecutive(a: np.ndarray) -> bool:
    """Whether ``a`` is k, k+1, ..., k+n-1 (n > 0): equal ends are not enough, a thread's rows
    interleave with other threads' across a chunk."""
    return len(a) > 0 and int(a[-1]) - int(a[0]) == len(a) - 1 and bool((np.diff(a) == 1).all())


def _fields(words: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Rows `at` of the raw file as one contiguous column per word (RAW_WORDS x len(at)).

    Why: every log column read straight from the 96-byte rows is a strided pass over all of them,
    and its scatter into the batch takes numpy's slow path; a whole-chunk transpose costs as much as
    those passes (numpy walks the rows by column). Block by block it stays in the cache, and a
    thread's rows in file order (the usual case) are sliced, not gathered."""
    c = np.empty((words.shape[1], len(at)), np.int64)
    run = _consecutive(at)
    for a in range(0, len(at), BLOCK):
        b = min(a + BLOCK, len(at))
        c[:, a:b] = (words[int(at[a]):int(at[a]) + b - a] if run else words[at[a:b]]).T
    return c


def fill_rows(words, rows, out_pos, start, rank, table, t0, by_string, pcs, by_pc,
              task_keys, task_locs, fix_pos, fix_op, out64, out32, out16):
    """finalize_kernels.fill_rows as numpy passes."""
    for a in range(0, len(out_pos), CHUNK):
        o = out_pos[a:a + CHUNK]
        if _consecutive(o):  # a single thread's rows: slices, not scatters
            o = slice(int(o[0]), int(o[-1]) + 1)
        g = rows[o]
        c = _fields(words, g - start)
        w9, w10, w11 = c[W_LOCSTR_OP], c[W_NAME_DEVICE], c[W_THREAD_KIND_FLAGS]
        flags, kind = w11 >> 48, _kind(w11)
        src = _lo32(w9)
        has_src = (src >= 0) & (src < len(table) - 1)
        src = np.where(has_src, table[np.where(has_src, src, len(table) - 1)], -1)
        loc = np.full(len(g), -1, np.int64)
        known = has_src & (src < len(by_string))
        loc[known] = by_string[src[known]]
        by_code = np.flatnonzero(loc < 0)
        pc = c[W_PC][by_code].view(np.uint64)    # minus 1 for a return address (_adjusted_pcs)
        pc = pc - (((flags[by_code] & F_PC_RET) != 0) & (pc != 0)).astype(np.uint64)
        loc[by_code] = np.where(pc != 0, _lookup(pcs, by_pc, pc, np.int64(-1)), -1)
        if len(task_keys):
            tasks = np.flatnonzero((kind == TASK_CREATE) | (kind == TASK_DEPEND))
            key = (np.int64(rank) << 40) | c[W_ID][tasks]
            loc[tasks] = _lookup(task_keys, task_locs, key, loc[tasks])
        op = w9 >> 32
        if len(fix_pos):
            cons = np.flatnonzero((kind == CONSTRUCT_BEGIN) | (kind == CONSTRUCT_END))
            op[cons] = _lookup(fix_pos, fix_op, g[cons], op[cons])
        cols64 = (np.maximum(c[W_TIME] - t0, 0), c[W_ADDR], c[W_ADDR2], c[W_SIZE], c[W_ID],
                  _strings(c[W_ID2], (flags & F_ID2_STR) != 0, table),
                  _strings(c[W_AUX], (flags & F_AUX_STR) != 0, table),
                  _strings(c[W_AUX2], (flags & F_AUX2_STR) != 0, table))
        cols32 = (rank, _lo32(w11), w10 >> 32, loc, op, _strings(_lo32(w10), (flags & F_NAME_INT) == 0, table), src)
        for block, cols in ((out64, cols64), (out32, cols32)):
            for i, v in enumerate(cols):
                block[i][o] = v   # one row of the block: numpy's fast path for a 1-d index
        out16[o] = kind


def read_window(words, cursor, clock, late, until, start, out_g, out_t):
    """finalize_kernels.read_window as numpy passes."""
    k, n = 0, words.shape[0]
    while cursor < n and clock - late <= until and k < len(out_g):
        t = words[cursor:min(n, cursor + CHUNK, cursor + len(out_g) - k), W_TIME]
        seen = np.maximum(np.maximum.accumulate(t), clock)     # the clock after each row
        before = np.concatenate(([clock], seen[:-1]))          # ... and before it: row i is read while
        past = np.flatnonzero(before - late > until)           # that minus `late` is not past `until`
        e = int(past[0]) if len(past) else len(t)
        keep = np.flatnonzero(t[:e] >= seen[:e] - late)
        out_g[k:k + len(keep)] = keep + (start + cursor)
        out_t[k:k + len(keep)] = t[keep]
        k += len(keep)
        cursor += e
        clock = int(seen[e - 1])
    return cursor, clock, k


NUMPY = Kernels(scan_stream, group_by_stream, fill_rows, read_window)
