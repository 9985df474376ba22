"""Maps from granule index to the transfer whose bytes are still unread there, with uniform ranges cached.

Why: the unused-transfer replay assigns whole ranges (a copy sets a range to its transfer, a
read or write clears it) and accounts the old value of every granule of the range. A plain
per-granule array makes each event cost as many steps as granules it touches (a 64 MB matrix read
100 times is 800 million steps). Here each slot (a device, or the host) is a 64-ary tree over the
granule array: a node of level ``l`` covers 64**l granules and records either one value for all of
them (uniform) or MIXED (look at its children). An assignment stops at the highest nodes it covers
whole, so it costs O(64 x levels) node visits whatever its byte count, plus the mixed nodes it
makes uniform again (each was made mixed by an earlier event); a small access is a few direct
lookups. Granule values are dense but zero-filled lazily by the OS, so untouched memory costs
nothing.

Values are stored as transfer + 1 (0 = nothing pending); MIXED is -1.
"""

from __future__ import annotations

import numpy as np
from quiver.formats.jit import kernel
from quiver.formats.memory_limit import check_fits

ACT_NONE, ACT_USED, ACT_WASTED = 0, 1, 2
FAN_BITS = 6                       # 64 children per node
FAN = 1 << FAN_BITS
MIXED = -1
STACK = FAN * 24


class RunMaps:
    """``slots`` maps over granules [0, ``granules``), nothing pending anywhere at first."""

    def __init__(self, slots: int, granules: int) -> None:
        n = max(int(granules), 1)
        sizes = []
        while not sizes or sizes[-1] > 1:
            n = -(-n // FAN)
            sizes.append(n)
        self.granules = max(int(granules), 1)
        self.levels = len(sizes)                                     # summary levels 1 .. levels
        self.level_off = np.concatenate([[0, 0], np.cumsum(sizes)]).astype(np.int64)  # level l at [off[l], off[l+1])
        self.level_len = np.array([self.granules, *sizes], dtype=np.int64)
        # slot after slot, flat (numba indexes them directly); np.zeros: pages appear when written
        check_fits(4 * slots * (self.granules + int(self.level_off[-1])), "the pending-transfer maps")
        self.leaf = np.zeros(slots * self.granules, dtype=np.int32)
        self.node = np.zeros(slots * int(self.level_off[-1]), dtype=np.int32)
        self.stack = np.zeros(STACK, dtype=np.int64), np.zeros(STACK, dtype=np.int64)

    def arrays(self) -> tuple:
        return self.leaf, self.node, self.level_off, self.level_len, np.int64(self.levels), *self.stack

    def runs(self, slot: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(first granule, end granule, transfer) of every range of ``slot`` where a transfer is pending."""
        return _runs(slot, self.leaf, self.node, self.level_off, self.level_len, self.levels)


@kernel(nogil=True, inline="always")
def _account(v, count, k, act, why, kbase, abase, g, wasted, used, reason, first):  # pragma: no cover
    """Granules [k, k + count) held transfer ``v``: they were read (ACT_USED) or wasted (ACT_WASTED)."""
    if act == ACT_USED:
        used[v] += count * g
    elif act == ACT_WASTED:
        wasted[v] += count * g
        reason[v] |= why
        addr = abase + (k - kbase) * g
        if first[v] < 0 or addr < first[v]:
            first[v] = addr


# One operation on a slot: set granules [k0, k1) to transfer ``new`` (-1: nothing pending) and
# account the transfers they held (``act``, reason ``why``); granule k is at host address
# abase + (k - kbase) * g; ``code`` is the event code of the row that made it (see redundant.py) and
# ``seq`` its position in the log. A strided one (``count`` > 1) does the same to ``count`` ranges,
# range i being [k0, k1) moved by i x ``step`` granules (step > k1 - k0: disjoint, in order): the
# blocks of a strided access in one op instead of one op each. ``Ops`` holds them column by column.
OP_FIELDS = ("slot", "k0", "k1", "new", "act", "why", "kbase", "abase", "code", "seq", "step", "count")


class Ops:
    """A buffer of slot operations (one int64 row per field of OP_FIELDS)."""

    def __init__(self, capacity: int = 1 << 16) -> None:
        self.rows = np.zeros((len(OP_FIELDS), capacity), dtype=np.int64)
        self.rows[OP_FIELDS.index("count")] = 1

    @property
    def capacity(self) -> int:
        return self.rows.shape[1]


@kernel(nogil=True, inline="always")
def first_range(lo, k0, k1, step, count):  # pragma: no cover
    """Index of the first range of a (strided) op that ends after granule ``lo`` (``count`` if none)."""
    if lo < k1 or count == 1:
        return 0 if lo < k1 else count
    return min((lo - k1) // step + 1, count)


@kernel(nogil=True)
def apply_ops(ops, nops, g, leaf, node, level_off, level_len, levels, s_l, s_x, wasted, used, reason,
              first):  # pragma: no cover
    """Apply ``ops[:, :nops]`` in order, accounting every pending transfer they overwrite.

    One loop without calls taking arrays: numba reference-counts the arrays a called function
    receives, which costs more than the tree walk itself (``_account`` is inlined)."""
    for o in range(nops):
        slot, k0, k1, new, act, why, kbase, abase = (ops[0, o], ops[1, o], ops[2, o], ops[3, o], ops[4, o],
                                                     ops[5, o], ops[6, o], ops[7, o])
        step, count = ops[10, o], ops[11, o]
        if k1 <= k0 or count < 1:
            continue
        width = k1 - k0
        span_end = k1 + (count - 1) * step        # end of the last range
        stored = new + 1
        lbase = slot * level_len[0]
        nbase = slot * level_off[levels + 1]
        s_l[0], s_x[0] = levels, 0
        sp = 1
        while sp > 0:
            sp -= 1
            lvl, x = s_l[sp], s_x[sp]
            shift = FAN_BITS * lvl
            lo = x << shift
            hi = lo + (np.int64(1) << shift)
            if hi <= k0 or span_end <= lo:
                continue
            r = first_range(lo, k0, k1, step, count)   # the range that holds lo or comes first after it
            r_lo = k0 + r * step
            if r == count or hi <= r_lo:
                continue                              # in a gap between ranges
            i = nbase + level_off[lvl] + x
            s = node[i]
            c0 = x << FAN_BITS
            c1 = min(c0 + FAN, level_len[lvl - 1])
            if r_lo <= lo and hi <= r_lo + width:  # covered whole: one value for all, the old ones accounted
                node[i] = stored
                if s != MIXED:
                    if s > 0 and act != ACT_NONE:
                        _account(s - 1, hi - lo, lo, act, why, kbase, abase, g, wasted, used, reason, first)
                    continue
                if lvl > 1:
                    for c in range(c0, c1):
                        s_l[sp], s_x[sp] = lvl - 1, c
                        sp += 1
                    continue
                g0, g1, keep = c0, c1, False          # bottom node: its granules, left stale
            else:                                 # covered in part: a uniform node splits first
                if s >= 0:
                    if s == stored and (s == 0 or act == ACT_NONE):
                        continue                      # nothing to account and nothing changes
                    if lvl == 1:
                        leaf[lbase + c0:lbase + c1] = s
                    else:
                        b = nbase + level_off[lvl - 1]
                        node[b + c0:b + c1] = s
                    node[i] = MIXED
                cshift = shift - FAN_BITS
                j0 = max(c0, r_lo >> cshift)
                j1 = min(c1, ((span_end - 1) >> cshift) + 1)
                if lvl > 1:
                    for c in range(j0, j1):
                        s_l[sp], s_x[sp] = lvl - 1, c
                        sp += 1
                    continue
                g0, g1, keep = j0, j1, True
            while r < count:                      # the ranges meeting granules [g0, g1), one after another
                b = k0 + r * step
                if b >= g1:
                    break
                for k in range(max(g0, b), min(g1, b + width)):
                    v = leaf[lbase + k]
                    if keep:
                        leaf[lbase + k] = stored
                    if v > 0 and act != ACT_NONE:
                        _account(v - 1, 1, k, act, why, kbase, abase, g, wasted, used, reason, first)
                r += 1


@kernel(nogil=True)
def _runs(slot, leaf, node, level_off, level_len, levels):  # pragma: no cover
    lbase = slot * level_len[0]
    nbase = slot * level_off[levels + 1]
    n = 0
    cap = 1024
    lo_out = np.empty(cap, dtype=np.int64)
    hi_out = np.empty(cap, dtype=np.int64)
    v_out = np.empty(cap, dtype=np.int64)
    s_l = np.empty(STACK, dtype=np.int64)
    s_x = np.empty(STACK, dtype=np.int64)
    s_l[0], s_x[0] = levels, 0
    sp = 1
    while sp > 0:
        sp -= 1
        lvl, x = s_l[sp], s_x[sp]
        s = node[nbase + level_off[lvl] + x]
        c0 = x << FAN_BITS
        c1 = min(c0 + FAN, level_len[lvl - 1])
        if s == MIXED and lvl > 1:
            for c in range(c0, c1):
                s_l[sp], s_x[sp] = lvl - 1, c
                sp += 1
            continue
        # a uniform node is one run; a mixed bottom node is one run per granule
        lo = x << (FAN_BITS * lvl)
        k0, k1 = (c0, c1) if s == MIXED else (lo, min(lo + (np.int64(1) << (FAN_BITS * lvl)), level_len[0]))
        for k in range(k0, k1):
            v = leaf[lbase + k] if s == MIXED else s
            if v <= 0:
                if s != MIXED:
                    break
                continue
            if n == cap:
                lo_out = np.concatenate((lo_out, np.empty(cap, dtype=np.int64)))
                hi_out = np.concatenate((hi_out, np.empty(cap, dtype=np.int64)))
                v_out = np.concatenate((v_out, np.empty(cap, dtype=np.int64)))
                cap *= 2
            lo_out[n], hi_out[n], v_out[n] = k, (k + 1 if s == MIXED else k1), v - 1
            n += 1
            if s != MIXED:
                break
    return lo_out[:n], hi_out[:n], v_out[:n]
