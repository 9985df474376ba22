"""Partial-order reduction: one schedule per class of equivalent orderings of asynchronous units.

Why: ``n`` independent ``nowait`` kernels have ``n!`` orderings but one outcome. The schedules of a
run are the linear extensions of a partial order: a chain of host elements (what the host does, in
recorded order) plus *units* (deferred target tasks), each after the host element that launches it
and before the one that waits for it, and after the units it depends on. Two schedules that differ
only by swapping adjacent non-conflicting elements are equivalent (Mazurkiewicz traces), and a class
is fixed by the *orientation* of every conflicting pair. So instead of searching interleavings (a
sleep-set search still visits 2^n prefixes of n independent units), we choose orientations directly:
for each unit (launch order) its *slot* among the conflicting host elements of its window, then the
order against each earlier unit it conflicts with. Every choice is checked at once (earliest/latest
host gap per unit, propagated along the order; no cycles), so no branch is a dead end and every
complete choice is a distinct class. 16 kernels on disjoint data: 16 decisions, one schedule.

The first schedule is the synchronous one (every unit in its earliest slot, launch order), as in seed
000 Theorem 1. The search is deterministic and bounded (``max_schedules``, ``max_steps``); ``frozen``
units keep their synchronous slot, so independent windows of a long run can be explored one at a
time (``synchronisation_windows``).
Elements are numbered: units ``0..k-1``, host elements ``k..k+m-1`` (chain order).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PorProblem:
    n_units: int
    n_host: int
    after_host: list[int]           # unit u runs after host element after_host[u] (-1: from the start)
    before_host: list[int]          # ... and before host element before_host[u] (n_host: until the end)
    unit_preds: list[list[int]]     # units that must run before unit u
    host_conflicts: list[list[int]]  # per unit: host elements (0..m-1) it conflicts with
    unit_conflicts: list[list[int]]  # per unit: units it conflicts with
    frozen: frozenset[int] = frozenset()  # units kept in their first (synchronous) slot


@dataclass
class PorResult:
    schedules: list[list[int]]      # element sequences (each of length n_units + n_host)
    complete: bool                  # False when a bound stopped the search before it was exhaustive
    steps: int


def _topological(k: int, preds: list[list[int]]) -> list[int]:
    """Units in dependence order, launch order among the free ones (cycles broken by launch order)."""
    left = [len(set(p)) for p in preds]
    succs: list[list[int]] = [[] for _ in range(k)]
    for u, ps in enumerate(preds):
        for q in set(ps):
            succs[q].append(u)
    ready = [u for u in range(k) if left[u] == 0]
    heapq.heapify(ready)
    placed = [False] * k
    out: list[int] = []
    while len(out) < k:
        if ready:
            u = heapq.heappop(ready)
        else:                                   # a cycle: take the first unit not placed
            u = next(v for v in range(k) if not placed[v])
        if placed[u]:
            continue
        placed[u] = True
        out.append(u)
        for v in succs[u]:
            left[v] -= 1
            if left[v] == 0 and not placed[v]:
                heapq.heappush(ready, v)
    return out


class _Constraints:
    """Earliest/latest host gap per unit and the order edges between units, with an undo trail."""

    def __init__(self, k: int, m: int):
        self.early = [0] * k
        self.late = [m] * k
        self.succ: list[list[int]] = [[] for _ in range(k)]
        self.pred: list[list[int]] = [[] for _ in range(k)]
        self.trail: list[tuple] = []

    def mark(self) -> int:
        return len(self.trail)

    def undo(self, mark: int) -> None:
        while len(self.trail) > mark:
            what, a, b = self.trail.pop()
            if what == "e":
                self.early[a] = b
            elif what == "l":
                self.late[a] = b
            else:
                self.succ[a].pop()
                self.pred[b].pop()

    def raise_early(self, u: int, gap: int) -> bool:
        work = [(u, gap)]
        while work:
            x, g = work.pop()
            if g <= self.early[x]:
                continue
            if g > self.late[x]:
                return False
            self.trail.append(("e", x, self.early[x]))
            self.early[x] = g
            work.extend((y, g) for y in self.succ[x])
        return True

    def lower_late(self, u: int, gap: int) -> bool:
        work = [(u, gap)]
        while work:
            x, g = work.pop()
            if g >= self.late[x]:
                continue
            if g < self.early[x]:
                return False
            self.trail.append(("l", x, self.late[x]))
            self.late[x] = g
            work.extend((y, g) for y in self.pred[x])
        return True

    def reaches(self, a: int, b: int) -> bool:
        seen, work = {a}, [a]
        while work:
            x = work.pop()
            if x == b:
                return True
            for y in self.succ[x]:
                if y not in seen:
                    seen.add(y)
                    work.append(y)
        return False

    def add_edge(self, a: int, b: int) -> bool:
        """Unit a before unit b."""
        if b in self.succ[a]:
            return True
        if self.reaches(b, a):
            return False
        self.succ[a].append(b)
        self.pred[b].append(a)
        self.trail.append(("o", a, b))
        return self.raise_early(b, self.early[a]) and self.lower_late(a, self.late[b])


def enumerate_schedules(p: PorProblem, max_schedules: int, max_steps: int = 200_000) -> PorResult:
    """One schedule per class of equivalent orderings, synchronous first; bounded and deterministic."""
    k, m = p.n_units, p.n_host
    topo = _topological(k, p.unit_preds)
    pos = {u: i for i, u in enumerate(topo)}
    slots: list[list[tuple[int, int]]] = []
    for u in range(k):
        lo, hi = p.after_host[u] + 1, max(p.after_host[u] + 1, min(p.before_host[u], m))
        hs = sorted(h for h in set(p.host_conflicts[u]) if lo <= h < hi)
        bounds = [lo, *[h + 1 for h in hs]]
        ends = [*hs, hi]
        slots.append(list(zip(bounds, ends))[:1] if u in p.frozen else list(zip(bounds, ends)))
    # decisions: per unit (topological order) its slot, then its order with each earlier conflicting unit
    decisions: list[tuple[int, int]] = []
    for u in topo:
        decisions.append((u, -1))
        for v in sorted(set(p.unit_conflicts[u]), key=pos.__getitem__):
            if pos[v] < pos[u]:
                decisions.append((u, v))

    cons = _Constraints(k, m)
    for u in range(k):
        cons.early[u], cons.late[u] = slots[u][0][0], slots[u][-1][1]

    def options(d: tuple[int, int]) -> int:
        u, v = d
        return len(slots[u]) if v < 0 else 2

    def apply(d: tuple[int, int], i: int) -> bool:
        u, v = d
        if v < 0:
            lo, hi = slots[u][i]
            if not (cons.raise_early(u, lo) and cons.lower_late(u, hi)):
                return False
            return all(cons.add_edge(q, u) for q in set(p.unit_preds[u]) if pos[q] < pos[u])
        return cons.add_edge(v, u) if i == 0 else cons.add_edge(u, v)

    schedules: list[list[int]] = []
    steps = 0
    complete = True
    # frame: [decision index, next option, trail mark]
    stack: list[list[int]] = [[0, 0, cons.mark()]] if decisions else []
    if not decisions:
        schedules.append(_realize(k, m, cons, topo))
    while stack:
        frame = stack[-1]
        d, i, mark = frame
        cons.undo(mark)
        if i >= options(decisions[d]):
            stack.pop()
            continue
        frame[1] = i + 1
        steps += 1
        if not apply(decisions[d], i):
            continue
        if d + 1 < len(decisions):
            stack.append([d + 1, 0, cons.mark()])
            continue
        schedules.append(_realize(k, m, cons, topo))
        if len(schedules) >= max_schedules:
            complete = not any(f[1] < options(decisions[f[0]]) for f in stack)
            break
        if steps >= max_steps:
            complete = False
            break
    return PorResult(schedules, complete, steps)


def _realize(k: int, m: int, cons: _Constraints, topo: list[int]) -> list[int]:
    """A linear extension: each unit at its earliest gap, units of one gap in edge order."""
    rank = {u: i for i, u in enumerate(topo)}
    by_gap: dict[int, list[int]] = {}
    for u in range(k):
        by_gap.setdefault(cons.early[u], []).append(u)
    seq: list[int] = []
    prev = 0
    for g in sorted(by_gap):
        seq.extend(range(k + prev, k + g))
        units = by_gap[g]
        members = set(units)
        left = {u: sum(1 for q in cons.pred[u] if q in members) for u in units}
        ready = sorted((u for u in units if left[u] == 0), key=rank.__getitem__)
        while ready:
            u = ready.pop(0)
            seq.append(u)
            for w in cons.succ[u]:
                if w in members:
                    left[w] -= 1
                    if left[w] == 0:
                        ready.append(w)
                        ready.sort(key=rank.__getitem__)
        prev = g
    seq.extend(range(k + prev, k + m))
    return seq


def unit_gaps(schedule: list[int] | np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(units in schedule order, the host gap of each: how many host elements precede it)."""
    arr = np.asarray(schedule, dtype=np.int64)
    hosts_before = np.cumsum(arr >= k)
    at = np.flatnonzero(arr < k)
    return arr[at], hosts_before[at]


def restrict(p: PorProblem, units: list[int]) -> PorProblem:
    """The problem of some units only (renumbered 0..len-1 in the given order)."""
    index = {u: i for i, u in enumerate(units)}
    return PorProblem(
        n_units=len(units), n_host=p.n_host, after_host=[p.after_host[u] for u in units],
        before_host=[p.before_host[u] for u in units],
        unit_preds=[[index[q] for q in p.unit_preds[u] if q in index] for u in units],
        host_conflicts=[p.host_conflicts[u] for u in units],
        unit_conflicts=[[index[v] for v in p.unit_conflicts[u] if v in index] for u in units])


def substitute(schedule: list[int], k: int, units: list[int], sub: list[int]) -> list[int]:
    """``schedule`` (all k units) with ``units`` placed as in ``sub`` (a schedule of ``restrict``)."""
    g = len(units)
    m = len(schedule) - k
    ids, gaps = unit_gaps(schedule, k)
    keep = ~np.isin(ids, units)
    sub_ids, sub_gaps = unit_gaps(sub, g)
    all_ids = np.concatenate([ids[keep], np.asarray(units, dtype=np.int64)[sub_ids], np.arange(k, k + m)])
    all_gap = np.concatenate([gaps[keep], sub_gaps, np.arange(m)])
    host_last = np.concatenate([np.zeros(int(keep.sum()) + g, np.int64), np.ones(m, np.int64)])
    within = np.arange(len(all_ids))      # kept units, then moved units, in their own order
    return all_ids[np.lexsort((within, host_last, all_gap))].tolist()


def synchronisation_windows(lo: list[int], hi: list[int]) -> list[list[int]]:
    """Groups of units whose windows (host gaps ``lo..hi``) overlap, in order: the other groups' units
    can never be reordered with them, so each group's schedules can be explored on its own."""
    order = sorted(range(len(lo)), key=lambda u: (lo[u], u))
    groups: list[list[int]] = []
    reach = -1
    for u in order:
        if groups and lo[u] <= reach:
            groups[-1].append(u)
            reach = max(reach, hi[u])
        else:
            groups.append([u])
            reach = hi[u]
    return [sorted(g) for g in groups]
