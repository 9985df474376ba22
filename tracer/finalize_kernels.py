"""The kernels of finalize (numba, formats/jit.py): one pass over each raw thread file, one pass per log batch.

Why: a run has 10^7..10^9 raw records of 96 bytes. numpy passes over whole columns read every
record once per field (and once more per remap or mask), so finalize ran at ~3 M events/s; here each
record is read once while scanning and once while writing its log row, and every log column of a
batch is written in that same pass. These are the specification; what runs is finalize_c's C library
(built with the tracer, no start-up cost) when it loads, else numba above NUMPY_RUN events and
finalize_numpy's whole-column numpy passes below (numba's start-up would cost more than the work,
and these kernels interpreted cost ~13 us per event: docs/bench.md).

A raw record is read as a row of RAW_WORDS int64 words (rawread.RAW_DTYPE); the 32- and 16-bit
fields are unpacked from their word (the word/shift constants below are checked against RAW_DTYPE
at import, so a layout change cannot silently use a stale numba cache).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from quiver.formats import AccessFlag, EventKind
from quiver.formats.jit import kernel
from quiver.tracer.rawread import F_AUX2_STR, F_AUX_STR, F_ID2_STR, F_NAME_INT, F_PC_RET, RAW_DTYPE, RAW_WORDS

# word index (and bit shift inside the word) of each field of a raw record
W_TIME, W_ADDR, W_ADDR2, W_SIZE, W_ID, W_ID2, W_AUX, W_AUX2, W_PC = range(9)
W_LOCSTR_OP = 9          # loc_str: bits 0..31, op: 32..63
W_NAME_DEVICE = 10       # name: 0..31, device: 32..63
W_THREAD_KIND_FLAGS = 11  # thread: 0..31, kind: 32..47, flags: 48..63

_LAYOUT = {
    "time_ns": (W_TIME, 0), "addr": (W_ADDR, 0), "addr2": (W_ADDR2, 0), "size": (W_SIZE, 0), "id": (W_ID, 0),
    "id2": (W_ID2, 0), "aux": (W_AUX, 0), "aux2": (W_AUX2, 0), "pc": (W_PC, 0), "loc_str": (W_LOCSTR_OP, 0),
    "op": (W_LOCSTR_OP, 32), "name": (W_NAME_DEVICE, 0), "device": (W_NAME_DEVICE, 32),
    "thread": (W_THREAD_KIND_FLAGS, 0), "kind": (W_THREAD_KIND_FLAGS, 32), "flags": (W_THREAD_KIND_FLAGS, 48),
}
if RAW_WORDS != 12 or {f: (o // 8, o % 8 * 8) for f, (_, o) in RAW_DTYPE.fields.items()} != _LAYOUT:
    raise ImportError("finalize_kernels: word layout differs from rawread.RAW_DTYPE; update the W_* constants")

ACCESS = int(EventKind.ACCESS)
MASKED = int(AccessFlag.MASKED)
ALLOC = int(EventKind.ALLOC)
CONSTRUCT_BEGIN = int(EventKind.CONSTRUCT_BEGIN)
CONSTRUCT_END = int(EventKind.CONSTRUCT_END)
MAP_CLAUSE = int(EventKind.MAP_CLAUSE)
TASK_CREATE = int(EventKind.TASK_CREATE)
TASK_DEPEND = int(EventKind.TASK_DEPEND)

# rows of these kinds are "control rows": finalize reads them again to pair `target data` constructs,
# locate tasks and find the objects behind map clauses
CONTROL_KINDS = (CONSTRUCT_BEGIN, CONSTRUCT_END, MAP_CLAUSE, TASK_CREATE)

# rows of the int64 / int32 output blocks of `fill_rows` (each row is one log column of the batch)
COLS64 = ("time_ns", "addr", "addr2", "size", "id", "id2", "aux", "aux2")
COLS32 = ("rank", "thread", "device", "loc", "op", "name", "src")  # src: psource string id (not a log column)


@kernel(inline="always")
def _popcount(x):
    """Set bits of an int64 (its 64-bit pattern)."""
    x = np.uint64(x)
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@kernel(inline="always")
def _lo32(w):
    return (w << 32) >> 32


@kernel(inline="always")
def _kind(w):
    return (w << 16) >> 48


@kernel(inline="always")
def _adjusted_pc(row):
    """The row's code address, minus 1 for a return address (its call is the byte before); 0 = none."""
    pc = np.uint64(row[W_PC])
    if (row[W_THREAD_KIND_FLAGS] >> 48) & F_PC_RET and pc != 0:
        pc -= np.uint64(1)
    return pc


@kernel(inline="always")
def _local_src(row, n_strings):
    """The rank-local psource string id of the row, -1 when it has none (or one the string file lacks)."""
    s = _lo32(row[W_LOCSTR_OP])
    return s if 0 <= s < n_strings else -1


PC_CACHE = 256


@kernel(inline="always")
def _slot(pc, size):
    """Hash slot of a PC in a power-of-two table of `size` entries (shifts and xors only: no
    overflow, which numpy scalars warn about when the kernels run as plain Python)."""
    return (pc ^ (pc >> np.uint64(9)) ^ (pc >> np.uint64(21))) & np.uint64(size - 1)


@kernel(inline="always")
def _set_insert(keys, pc):
    """Insert pc (!= 0) into the open-addressing set `keys` (0 = empty, power-of-two size, never
    full); True when it was not there."""
    mask = np.uint64(len(keys) - 1)
    i = _slot(pc, len(keys))
    while keys[i] != 0:
        if keys[i] == pc:
            return False
        i = (i + np.uint64(1)) & mask
    keys[i] = pc
    return True


@kernel
def _set_grown(keys):
    bigger = np.zeros(2 * len(keys), np.uint64)
    for k in keys:
        if k != 0:
            _set_insert(bigger, k)
    return bigger


# acc slots of scan_stream's loop
A_PCS, A_CONTROL, A_ACCESS, A_TOP_ALLOC, A_LAST_PC, A_T_MIN, A_T_MAX, A_CLOCK, A_LATE, A_THREADS, A_DEVICES, A_BLOCKS = range(12)
KINDS = 256             # kind values counted (formats/stats.py)
WIN_CREATE = int(EventKind.WIN_CREATE)   # kinds below are OpenMP's: their `device` is a device number


@kernel(inline="always")
def _add_distinct(values, n, v):
    """Append v to values[:n] unless it is there; returns the new n (values has room)."""
    for j in range(n):
        if values[j] == v:
            return n
    values[n] = v
    return n + 1


@kernel
def _scan_rows(words, i, n_strings, used_src, keys, control, counts, late_rows, threads, devices, late, acc):
    """scan_stream's loop from row i until the end, or until an output array must grow first; returns
    the next row. acc: see the A_* slots."""
    count, n_control, n_access, top_alloc = acc[A_PCS], acc[A_CONTROL], acc[A_ACCESS], acc[A_TOP_ALLOC]
    last_pc = np.uint64(acc[A_LAST_PC])
    t_min, t_max, clock, n_late = acc[A_T_MIN], acc[A_T_MAX], acc[A_CLOCK], acc[A_LATE]
    n_threads, n_devices = acc[A_THREADS], acc[A_DEVICES]
    last_thread, last_device = -(1 << 40), -(1 << 40)
    n = words.shape[0]
    while (i < n and 2 * (count + 1) <= len(keys) and n_control < len(control) and n_late < len(late_rows)
           and n_threads < len(threads) and n_devices < len(devices)):
        row = words[i]
        t = row[W_TIME]
        t_min = min(t_min, t)
        t_max = max(t_max, t)
        clock = max(clock, t)
        if t < clock - late:
            late_rows[n_late] = i
            n_late += 1
        w11 = row[W_THREAD_KIND_FLAGS]
        kind = _kind(w11)
        if 0 <= kind < KINDS:
            counts[kind] += 1
        thread = _lo32(w11)
        if thread != last_thread:
            last_thread = thread
            n_threads = _add_distinct(threads, n_threads, thread)
        if kind < WIN_CREATE:
            device = row[W_NAME_DEVICE] >> 32
            if device >= 0 and device != last_device:
                last_device = device
                n_devices = _add_distinct(devices, n_devices, device)
        if kind == ACCESS:
            n_access += 1
            b = max(row[W_AUX2], 1)
            planes = _lo32(row[W_NAME_DEVICE])
            if (row[W_LOCSTR_OP] >> 32) & MASKED:  # a masked run (format 6): its present slots
                b = _popcount(row[W_ID2])
            acc[A_BLOCKS] += b * planes if (w11 >> 48) & F_NAME_INT and b > 1 and planes > 1 else b
        elif kind == ALLOC:
            top_alloc = max(top_alloc, row[W_ID])
        elif kind == CONSTRUCT_BEGIN or kind == CONSTRUCT_END or kind == MAP_CLAUSE or kind == TASK_CREATE:
            control[n_control] = i
            n_control += 1
        i += 1
        s = _local_src(row, n_strings)
        if s >= 0:
            used_src[s] = True
            continue
        pc = _adjusted_pc(row)
        if pc != 0 and pc != last_pc:
            last_pc = pc
            count += _set_insert(keys, pc)
    acc[A_PCS], acc[A_CONTROL], acc[A_ACCESS], acc[A_TOP_ALLOC] = count, n_control, n_access, top_alloc
    acc[A_LAST_PC] = np.int64(last_pc)
    acc[A_T_MIN], acc[A_T_MAX], acc[A_CLOCK], acc[A_LATE] = t_min, t_max, clock, n_late
    acc[A_THREADS], acc[A_DEVICES] = n_threads, n_devices
    return i


@kernel
def _doubled(a):
    return np.concatenate((a, np.empty_like(a)))


@kernel(nogil=True)
def scan_stream(words, n_strings, late, clock):
    """One pass over (a part of) a thread file whose thread's clock (largest time so far) is `clock`.

    Returns (psource ids used (bool by local string id), unique adjusted PCs of the rows without
    psource, positions of the control rows, number of ACCESS rows, largest ALLOC id or -1, counts
    by kind value (KINDS), smallest and largest time (0, -1 without rows), distinct threads,
    distinct OpenMP devices, positions of the rows more than `late` behind the clock, the clock)."""
    used_src = np.zeros(n_strings, np.bool_)
    keys = np.zeros(64, np.uint64)
    control = np.empty(64, np.int64)
    counts = np.zeros(KINDS, np.int64)
    late_rows = np.empty(64, np.int64)
    threads = np.empty(8, np.int64)
    devices = np.empty(8, np.int64)
    big = np.iinfo(np.int64).max
    acc = np.array([0, 0, 0, -1, 0, big, -big, clock, 0, 0, 0, 0], np.int64)
    i = 0
    while True:
        i = _scan_rows(words, i, n_strings, used_src, keys, control, counts, late_rows, threads, devices, late, acc)
        if i == words.shape[0]:
            break
        if 2 * (acc[A_PCS] + 1) > len(keys):
            keys = _set_grown(keys)
        if acc[A_CONTROL] == len(control):
            control = _doubled(control)
        if acc[A_LATE] == len(late_rows):
            late_rows = _doubled(late_rows)
        if acc[A_THREADS] == len(threads):
            threads = _doubled(threads)
        if acc[A_DEVICES] == len(devices):
            devices = _doubled(devices)
    t_min, t_max = (acc[A_T_MIN], acc[A_T_MAX]) if words.shape[0] else (0, -1)
    return (used_src, keys[keys != 0], control[:acc[A_CONTROL]].copy(), acc[A_ACCESS], acc[A_TOP_ALLOC], counts,
            t_min, t_max, threads[:acc[A_THREADS]].copy(), devices[:acc[A_DEVICES]].copy(),
            late_rows[:acc[A_LATE]].copy(), acc[A_CLOCK], acc[A_BLOCKS])


@kernel(inline="always")
def _stream_of(r, s, starts):
    """Stream holding global row r; s: a guess (the previous row's stream)."""
    if starts[s] <= r and (s + 1 == len(starts) or r < starts[s + 1]):
        return s
    return np.searchsorted(starts, r, side="right") - 1


@kernel(nogil=True)
def group_by_stream(rows, starts, pos):
    """Fill pos[:len(rows)] with the positions of `rows` (global row ids) grouped by the stream
    holding them, in their order within a stream; returns where each stream's group begins
    (len(starts) + 1 bounds). `starts`: first global row of each stream, ascending (equal for
    empty streams)."""
    bounds = np.zeros(len(starts) + 1, np.int64)
    s = 0
    for k in range(len(rows)):
        s = _stream_of(rows[k], s, starts)
        bounds[s + 1] += 1
    for s in range(len(starts)):
        bounds[s + 1] += bounds[s]
    fill = bounds[:-1].copy()
    s = 0
    for k in range(len(rows)):
        s = _stream_of(rows[k], s, starts)
        pos[fill[s]] = k
        fill[s] += 1
    return bounds


@kernel(nogil=True)
def fill_rows(words, rows, out_pos, start, rank, table, t0, by_string, pcs, by_pc,
              task_keys, task_locs, fix_pos, fix_op, out64, out32, out16):
    """Write the log row of global row `rows[out_pos[k]]`, which is in this stream (its first
    global row: `start`), at `out_pos[k]` of the batch.

    Per row: time - t0 (>= 0); rank-local string ids -> the log's ids (name unless F_NAME_INT,
    id2/aux/aux2 when their flag is set); loc from the psource string, else from the (adjusted)
    PC, then overridden by the task's location for TASK_CREATE/TASK_DEPEND (`task_keys`: sorted
    rank << 40 | task id); the op of constructs at global rows `fix_pos` (sorted) becomes `fix_op`.
    `table`: the rank's global id of each local string id."""
    n_strings = len(table) - 1
    seen_pc = np.zeros(PC_CACHE, np.uint64)  # direct-mapped cache of PC -> location lookups
    seen_loc = np.empty(PC_CACHE, np.int64)
    for k in range(len(out_pos)):
        o = out_pos[k]
        g = rows[o]
        row = words[g - start]
        w9 = row[W_LOCSTR_OP]
        w10 = row[W_NAME_DEVICE]
        w11 = row[W_THREAD_KIND_FLAGS]
        flags = w11 >> 48
        kind = _kind(w11)
        op = w9 >> 32
        name = _lo32(w10)
        id2 = row[W_ID2]
        aux = row[W_AUX]
        aux2 = row[W_AUX2]
        # rank-local string ids -> the log's ids (plain ifs: numba's code for a conditional
        # expression here was twice as slow)
        if not flags & F_NAME_INT and 0 <= name and name < n_strings:
            name = table[name]
        if flags & F_ID2_STR and 0 <= id2 and id2 < n_strings:
            id2 = table[id2]
        if flags & F_AUX_STR and 0 <= aux and aux < n_strings:
            aux = table[aux]
        if flags & F_AUX2_STR and 0 <= aux2 and aux2 < n_strings:
            aux2 = table[aux2]
        src = _lo32(w9)
        loc = -1
        if 0 <= src < n_strings:
            src = table[src]
            if src < len(by_string):
                loc = by_string[src]
        else:
            src = -1
        if loc < 0:
            pc = _adjusted_pc(row)
            c = _slot(pc, PC_CACHE)
            if pc == 0:
                loc = -1
            elif seen_pc[c] == pc:
                loc = seen_loc[c]
            else:
                j = np.searchsorted(pcs, pc)
                loc = by_pc[j] if j < len(pcs) and pcs[j] == pc else -1
                seen_pc[c], seen_loc[c] = pc, loc
        if (kind == TASK_CREATE or kind == TASK_DEPEND) and len(task_keys):
            key = (np.int64(rank) << 40) | row[W_ID]
            j = np.searchsorted(task_keys, key)
            if j < len(task_keys) and task_keys[j] == key:
                loc = task_locs[j]
        if (kind == CONSTRUCT_BEGIN or kind == CONSTRUCT_END) and len(fix_pos):
            j = np.searchsorted(fix_pos, g)
            if j < len(fix_pos) and fix_pos[j] == g:
                op = fix_op[j]
        out64[0, o] = max(row[W_TIME] - t0, 0)
        out64[1, o] = row[W_ADDR]
        out64[2, o] = row[W_ADDR2]
        out64[3, o] = row[W_SIZE]
        out64[4, o] = row[W_ID]
        out64[5, o] = id2
        out64[6, o] = aux
        out64[7, o] = aux2
        out32[0, o] = rank
        out32[1, o] = _lo32(w11)
        out32[2, o] = w10 >> 32
        out32[3, o] = loc
        out32[4, o] = op
        out32[5, o] = name
        out32[6, o] = src
        out16[o] = kind


@kernel(nogil=True)
def read_window(words, cursor, clock, late, until, start, out_g, out_t):
    """The next rows of a thread file for the log order (finalize._log_order): from row `cursor`, while
    the thread's clock (`clock`: the largest time read so far) minus `late` is not past `until` and
    `out_g` has room. Rows more than `late` behind the clock (stragglers, ordered apart) are passed
    over; the others go to out_g (global row: `start` + position) and out_t (time).
    Returns (next row, clock, rows written)."""
    k = 0
    n = words.shape[0]
    while cursor < n and clock - late <= until and k < len(out_g):
        t = words[cursor, W_TIME]
        clock = max(clock, t)
        if t >= clock - late:
            out_g[k] = start + cursor
            out_t[k] = t
            k += 1
        cursor += 1
    return cursor, clock, k


class Kernels(NamedTuple):
    scan_stream: Any
    group_by_stream: Any
    fill_rows: Any
    read_window: Any


KERNELS = Kernels(scan_stream, group_by_stream, fill_rows, read_window)  # interpreted or compiled (formats/jit.py)
# events: up to here the numpy passes of finalize_numpy finish sooner than numba's import and the
# load of its cached machine code (~0.3-0.6 s on a 2-core machine; numpy ~0.2-1 us per event more)
NUMPY_RUN = 1_000_000


def compiled() -> Kernels:
    """The kernels compiled by numba (machine code cached on disk next to this file)."""
    return Kernels(*(k.dispatcher() for k in KERNELS))


def kernels(events: int) -> Kernels:
    """The kernels to use for a run of `events` raw records: the C library built with the tracer
    (finalize_c); without it, numpy passes up to NUMPY_RUN unless numba's are loaded already."""
    from quiver.tracer.finalize_c import kernels as c_kernels

    if (c := c_kernels()) is not None:
        return c
    if events <= NUMPY_RUN and not scan_stream.loaded:
        from quiver.tracer.finalize_numpy import NUMPY

        return NUMPY
    return compiled()
