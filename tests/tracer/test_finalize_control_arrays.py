"""The array forms of finalize's control-row passes (finalize_control_arrays, used by the numpy
finalize of big runs) give what the list forms (finalize_control, used by the small-run finalize)
give, on control rows drawn at random: `target data` pairs among other enter/exit constructs of two
ranks, target tasks with and without locations, map clauses with ties in time and repeated
(source, variable) pairs. The end-to-end check on a real run is test_finalize_reference.py."""

from __future__ import annotations

import random

import numpy as np
import pytest
from quiver.formats.schema import ConstructKind, EventKind
from quiver.tracer import finalize_control as lists
from quiver.tracer import finalize_control_arrays as arrays

KINDS = (EventKind.CONSTRUCT_BEGIN, EventKind.CONSTRUCT_END, EventKind.MAP_CLAUSE, EventKind.TASK_CREATE)
OPS = (ConstructKind.TARGET_ENTER_DATA, ConstructKind.TARGET_EXIT_DATA, ConstructKind.TARGET_DATA_END,
       ConstructKind.TARGET, ConstructKind.TARGET_UPDATE)


def control_rows(seed: int, n: int) -> dict[str, list[int]]:
    rnd = random.Random(seed)
    cols: dict[str, list[int]] = {c: [] for c in ("kind", "op", "rank", "id", "id2", "aux2", "loc", "row",
                                                 "time_ns", "thread", "addr", "addr2", "name", "src")}
    for i in range(n):
        cols["kind"].append(int(rnd.choice(KINDS)))
        cols["op"].append(int(rnd.choice(OPS)))
        cols["rank"].append(rnd.randrange(2))
        cols["id"].append(rnd.randrange(12))
        cols["id2"].append(rnd.randrange(-1, 6))
        cols["aux2"].append(rnd.randrange(12))
        cols["loc"].append(rnd.randrange(-1, 4))
        cols["row"].append(3 * i + rnd.randrange(3))
        cols["time_ns"].append(rnd.randrange(n // 2 + 1))     # ties
        cols["thread"].append(rnd.randrange(3))
        cols["addr"].append(rnd.randrange(1 << 20))
        cols["addr2"].append(rnd.randrange(1 << 20))
        cols["name"].append(rnd.randrange(-1, 4))
        cols["src"].append(rnd.randrange(-1, 3))
    return cols


class _Rank:
    def __init__(self, rank: int) -> None:
        self.rank, self.info = rank, {}


@pytest.mark.parametrize("seed", range(40))
def test_array_passes_agree_with_the_list_passes(seed):
    cols = control_rows(seed, 1 + seed * 7)
    as_arrays = {c: np.array(v, np.int64) for c, v in cols.items()}
    pos, ops = lists.construct_fixes(cols)
    apos, aops = arrays.construct_fixes(as_arrays)
    assert apos.tolist() == pos and aops.tolist() == ops
    keys, locs = lists.task_locations(cols)
    akeys, alocs = arrays.task_locations(as_arrays)
    assert akeys.tolist() == keys and alocs.tolist() == locs
    raws = [_Rank(0), _Rank(1)]
    want = lists.map_clauses(raws, cols, {})
    got = arrays.map_clauses(raws, as_arrays, {})
    assert [r for r, _, _ in got] == [r for r, _, _ in want]
    for (_, _, g), (_, _, w) in zip(got, want, strict=True):
        assert {c: v.tolist() for c, v in g.items()} == w
        assert arrays.first_clauses(g) == lists.first_clauses(w)


def test_the_random_rows_exercise_every_answer():
    """The draws above reach fixes of both kinds, located tasks and repeated clause pairs."""
    cols = control_rows(39, 274)
    _, ops = lists.construct_fixes(cols)
    assert {int(ConstructKind.TARGET_DATA), int(ConstructKind.TARGET_DATA_END)} <= set(ops)
    assert len(lists.task_locations(cols)[0]) > 3
    maps = lists.map_clauses([_Rank(0)], cols, {})[0][2]
    assert len(lists.first_clauses(maps)) < len(maps["time_ns"])
