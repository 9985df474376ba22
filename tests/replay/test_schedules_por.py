"""Partial-order reduction: one schedule per class of orderings, checked against brute force."""

from __future__ import annotations

import itertools
import random

import pytest
from quiver.replay.nowait.por import PorProblem, enumerate_schedules


def problem(k, m, after=None, before=None, preds=None, host=None, units=None) -> PorProblem:
    units = units or [[] for _ in range(k)]
    sym = [set(x) for x in units]
    for a in range(k):
        for b in units[a]:
            sym[b].add(a)
    return PorProblem(n_units=k, n_host=m, after_host=after or [-1] * k, before_host=before or [m] * k,
                      unit_preds=preds or [[] for _ in range(k)], host_conflicts=host or [[] for _ in range(k)],
                      unit_conflicts=[sorted(s) for s in sym])


def valid(p: PorProblem, seq: list[int]) -> bool:
    k = p.n_units
    pos = {e: i for i, e in enumerate(seq)}
    if sorted(seq) != list(range(k + p.n_host)):
        return False
    if [e for e in seq if e >= k] != list(range(k, k + p.n_host)):
        return False
    for u in range(k):
        if p.after_host[u] >= 0 and pos[u] < pos[k + p.after_host[u]]:
            return False
        if p.before_host[u] < p.n_host and pos[u] > pos[k + p.before_host[u]]:
            return False
        if any(pos[q] > pos[u] for q in p.unit_preds[u]):
            return False
    return True


def signature(p: PorProblem, seq: list[int]) -> tuple:
    k = p.n_units
    pos = {e: i for i, e in enumerate(seq)}
    pairs = sorted({(min(u, v), max(u, v)) for u in range(k) for v in p.unit_conflicts[u]}
                   | {(u, k + h) for u in range(k) for h in p.host_conflicts[u]})
    return tuple(pos[a] < pos[b] for a, b in pairs)


def brute_force_classes(p: PorProblem) -> set[tuple]:
    k, m = p.n_units, p.n_host
    out = set()
    for perm in itertools.permutations(range(k + m)):
        if valid(p, list(perm)):
            out.add(signature(p, list(perm)))
    return out


def test_sixteen_independent_units_are_one_schedule():
    r = enumerate_schedules(problem(16, 3), 64)
    assert len(r.schedules) == 1 and r.complete
    assert r.steps == 16


def test_first_schedule_is_synchronous():
    # unit 0 launched after host 0, waited for before host 3, conflicts with hosts 1 and 2
    p = problem(1, 4, after=[0], before=[3], host=[[1, 2]])
    r = enumerate_schedules(p, 64)
    assert r.schedules[0] == [1, 0, 2, 3, 4]
    assert len(r.schedules) == 3 and r.complete
    assert all(valid(p, s) for s in r.schedules)


def test_dependence_chain_leaves_one_order():
    p = problem(3, 0, preds=[[], [0], [1]], units=[[1, 2], [2], []])
    r = enumerate_schedules(p, 64)
    assert r.schedules == [[0, 1, 2]]


def test_mutually_conflicting_units_give_every_order():
    p = problem(3, 0, units=[[1, 2], [2], []])
    r = enumerate_schedules(p, 64)
    assert sorted(map(tuple, r.schedules)) == sorted(itertools.permutations(range(3)))


def test_bounded_and_deterministic():
    p = problem(8, 0, units=[list(range(8)) for _ in range(8)])
    a = enumerate_schedules(p, 10)
    b = enumerate_schedules(p, 10)
    assert a.schedules == b.schedules and len(a.schedules) == 10 and not a.complete


@pytest.mark.parametrize("seed", range(40))
def test_one_schedule_per_class_against_brute_force(seed):
    rnd = random.Random(seed)
    k, m = rnd.randint(1, 4), rnd.randint(0, 3)
    after, before = [], []
    for _ in range(k):
        a = rnd.randint(-1, m - 1) if m else -1
        b = rnd.randint(a + 1, m) if m else 0
        after.append(a)
        before.append(b)
    preds = [[q for q in range(u) if rnd.random() < 0.25] for u in range(k)]
    host = [[h for h in range(m) if rnd.random() < 0.5] for _ in range(k)]
    units = [[v for v in range(u + 1, k) if rnd.random() < 0.5] for u in range(k)]
    p = problem(k, m, after, before, preds, host, units)
    r = enumerate_schedules(p, 1000)
    assert r.complete
    assert all(valid(p, s) for s in r.schedules)
    sigs = [signature(p, s) for s in r.schedules]
    assert len(set(sigs)) == len(sigs)                  # no two equivalent schedules
    assert set(sigs) == brute_force_classes(p)          # and every class is there
