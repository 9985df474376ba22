"""Which bytes a transfer really changed: a version per granule on the host and on every device copy.

Why: OMPDataPerf hashes transferred data to guess that a copy was a duplicate (the destination
already held those bytes) or a round trip (sent to the device and copied back unchanged). We see
every write, so we know it exactly: a write on a side gives its granules a new version (even on the
host, odd on a device), a transfer gives the destination the source's version. A transfer whose
destination already holds the source's version changes nothing (a *no-op*); a transfer to a device
of the version that device held when its copy was last released is *re-sent* (it would not be
needed had the copy stayed). The same pass notes which device allocations a kernel touched.

This sits in front of ``pending_runs.apply_ops``: it applies the slot operations of
``redundant._decode`` to the versions and hands on only the parts of transfers that are not
no-ops, so a duplicate copy neither replaces nor consumes the transfer whose bytes are pending
(the first copy stays the one that counts). Per-granule arrays, one loop in numba.
"""

from __future__ import annotations

import numpy as np
from quiver.formats.jit import kernel
from quiver.replay.transfers.pending_runs import OP_FIELDS, apply_ops

# event codes of redundant._decode
C_TO, C_FROM, C_ALLOC, C_DELETE, C_HREAD, C_HWRITE, C_DREAD, C_DWRITE, C_FREE = range(9)
NFIELDS = len(OP_FIELDS)


class Versions:
    """Version state of ``granules`` granules on the host and ``devices`` device slots, and the
    per-transfer / per-allocation counts the pass fills in."""

    def __init__(self, devices: int, granules: int, transfers: int, alloc_seq: np.ndarray) -> None:
        g = max(int(granules), 1)
        self.granules = g
        self.host = np.zeros(g, dtype=np.int64)                       # version 0: what the host held at first
        self.dev = np.full(devices * g, -1, dtype=np.int64)           # -1: no device copy
        self.last = np.full(devices * g, -1, dtype=np.int64)          # version held when last released
        self.alloc_of = np.full(devices * g, -1, dtype=np.int32)      # allocation covering the granule
        self.next = np.array([2, 1], dtype=np.int64)                  # next host (even) / device (odd) version
        self.alloc_seq = np.ascontiguousarray(alloc_seq, dtype=np.int64)
        self.touched = np.zeros(len(alloc_seq), dtype=np.int8)
        self.noop_to = np.zeros(transfers, dtype=np.int64)            # device already held these bytes
        self.resent = np.zeros(transfers, dtype=np.int64)             # the device held them before its release
        self.round_trip = np.zeros(transfers, dtype=np.int64)         # copied back unchanged (host-made bytes)
        self.noop_from = np.zeros(transfers, dtype=np.int64)          # copied back again (device-made bytes)

    def arrays(self) -> tuple:
        return (np.int64(self.granules), self.host, self.dev, self.last, self.alloc_of, self.next, self.alloc_seq,
                self.touched, self.noop_to, self.resent, self.round_trip, self.noop_from)


@kernel(nogil=True)
def _flush(out, n, g, leaf, node, level_off, level_len, levels, s_l, s_x, wasted, used, reason,
           first):  # pragma: no cover
    if n > 0:
        apply_ops(out, n, g, leaf, node, level_off, level_len, levels, s_l, s_x, wasted, used, reason, first)
    return 0


@kernel(nogil=True)
def apply_versioned(ops, nops, out, host_slot, g, ng, hver, dver, lver, alloc_of, nxt, alloc_seq, touched, noop_to,
                    resent, round_trip, noop_from, leaf, node, level_off, level_len, levels, s_l, s_x, wasted, used,
                    reason, first):  # pragma: no cover
    """Apply ``ops[:, :nops]`` to the versions and pass every operation but the no-op parts of
    transfers on to ``apply_ops`` (through ``out``, flushed when full)."""
    cap = out.shape[1]
    n = 0
    o = 0
    while o < nops:
        slot, k0, k1, code = ops[0, o], ops[1, o], ops[2, o], ops[8, o]
        if k1 <= k0:
            o += 1
            continue
        step, count = ops[10, o], ops[11, o]       # a strided op: its ranges one by one, as one op each
        if slot == host_slot:
            if code == C_HWRITE or code == C_FREE:
                for r in range(count):
                    v = nxt[0]
                    nxt[0] += 2
                    for k in range(k0 + r * step, k1 + r * step):
                        hver[k] = v
            if cap - n < 1:
                n = _flush(out, n, g, leaf, node, level_off, level_len, levels, s_l, s_x, wasted, used, reason, first)
            for f in range(NFIELDS):           # explicit loops: slices would make array views per row
                out[f, n] = ops[f, o]
            n += 1
            o += 1
            continue
        base = slot * ng
        if code == C_TO or code == C_FROM:
            twin = o + 1                       # _decode writes the host row right after the device row
            t = ops[3, o] if code == C_TO else ops[3, twin]
            k = k0
            while k < k1:
                noop = dver[base + k] == hver[k]
                j = k
                while j < k1 and (dver[base + j] == hver[j]) == noop:
                    if not noop:
                        if code == C_TO:
                            if lver[base + j] == hver[j]:
                                resent[t] += g
                            dver[base + j] = hver[j]
                        else:
                            hver[j] = dver[base + j]
                    elif code == C_FROM:
                        if hver[j] % 2 == 0:
                            round_trip[t] += g
                        else:
                            noop_from[t] += g
                    j += 1
                if noop:
                    if code == C_TO:
                        noop_to[t] += (j - k) * g
                else:
                    if cap - n < 2:
                        n = _flush(out, n, g, leaf, node, level_off, level_len, levels, s_l, s_x, wasted, used,
                                   reason, first)
                    for row in (o, twin):
                        for f in range(NFIELDS):
                            out[f, n] = ops[f, row]
                        out[1, n] = k
                        out[2, n] = j
                        n += 1
                k = j
            o += 2
            continue
        if code == C_ALLOC:
            v = nxt[1]
            nxt[1] += 2
            a = np.searchsorted(alloc_seq, ops[9, o])
            if a >= alloc_seq.shape[0] or alloc_seq[a] != ops[9, o]:
                a = -1
            for k in range(base + k0, base + k1):
                dver[k] = v
                alloc_of[k] = a
        elif code == C_DELETE:
            for k in range(base + k0, base + k1):
                lver[k] = dver[k]
                dver[k] = -1
                alloc_of[k] = -1
        elif code == C_DREAD or code == C_DWRITE:
            # a block of an access was translated through one live mapping, so one allocation holds all of it
            for r in range(count):
                a = alloc_of[base + k0 + r * step]
                if a >= 0:
                    touched[a] = 1
                if code == C_DWRITE:
                    v = nxt[1]
                    nxt[1] += 2
                    for k in range(base + k0 + r * step, base + k1 + r * step):
                        dver[k] = v
        if cap - n < 1:
            n = _flush(out, n, g, leaf, node, level_off, level_len, levels, s_l, s_x, wasted, used, reason, first)
        for f in range(NFIELDS):
            out[f, n] = ops[f, o]
        n += 1
        o += 1
    _flush(out, n, g, leaf, node, level_off, level_len, levels, s_l, s_x, wasted, used, reason, first)

