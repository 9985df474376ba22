"""`schedules` checker: mapping issues of every `nowait` schedule, not only the one that ran.

Why: the VSM on the recorded run sees one interleaving. Seed 000 Theorem 1 says a program is free
of mapping issues in every schedule iff it is race-free (``races.py``) and VSM-clean when every
asynchronous kernel runs synchronously. We go further and replay the VSM (``vsm.VsmSession``, the
mapping checker's own engine) on each distinct schedule of the deferred target tasks between their
launch and their synchronisation (``schedule_model`` + ``por``), the synchronous one first, and
report the issues that only some schedules show ("in k of n schedules"), each with one witness
schedule in source terms and whether the recorded run showed it. Issues every schedule shows are
the mapping checker's; they are repeated here only when the recorded run did not show them.

Cost: one VSM replay per schedule over the events after the first launch (the common prefix is
replayed once and forked); at most ``CheckOptions.max_schedules`` schedules (default 64).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from quiver.formats import EventKind, EventLog
from quiver.replay.mapping.events import Detection, control_events_from_columns
from quiver.replay.mapping.vsm import VsmSession, run_vsm
from quiver.replay.nowait.async_text import RowText
from quiver.replay.nowait.happens_before import build_happens_before
from quiver.replay.nowait.por import enumerate_schedules, restrict, substitute, synchronisation_windows
from quiver.replay.nowait.schedule_model import ScheduleModel, build_schedule_model
from quiver.replay.nowait.tasks import build_task_model, has_async_target_work
from quiver.replay.registry import CheckOptions
from quiver.replay.report.findings import Finding, Related


def detection_key(d: Detection) -> tuple:
    """The same problem in two schedules: same kind, place, device, variable and clause."""
    return (d.kind, d.rank, d.device, d.loc, d.name, d.clause_event)


# at most max_schedules times this many schedules in all, whatever the number of windows
TOTAL_BOUND_FACTOR = 16


@dataclass
class Exploration:
    """The schedules explored and the VSM's detections in each (schedule 0 is the synchronous one)."""

    model: ScheduleModel
    schedules: list[list[int]]       # element sequences (``ScheduleModel.order`` gives the rows)
    found: list[set[tuple]]          # detection keys per schedule
    recorded: set[tuple]             # detection keys of the recorded run
    complete: bool                   # every distinct schedule was explored
    windows: int = 1                 # synchronisation windows explored one at a time

    @property
    def n(self) -> int:
        return len(self.schedules)


def _first_difference(a: np.ndarray, b: np.ndarray) -> int:
    diff = np.flatnonzero(a != b)
    return int(diff[0]) if len(diff) else len(a)


def explore(columns: dict[str, np.ndarray], model: ScheduleModel, max_schedules: int) -> Exploration:
    """Enumerate the schedules window by window and replay the VSM on each.

    Units of one synchronisation window (``por.synchronisation_windows``) are reordered while every
    other unit keeps its synchronous slot; up to ``max_schedules`` schedules per window, and at most
    16 times that in all. One VSM session follows the synchronous schedule and is forked where a
    window's schedules (or the recorded run) first differ from it, so shared prefixes run once.
    """
    max_schedules = max(1, max_schedules)
    problem = model.problem()
    k = model.n_units
    lo = [a + 1 for a in problem.after_host]
    windows = synchronisation_windows(lo, problem.before_host) if k else []
    first = enumerate_schedules(problem, 1)
    schedules: list[list[int]] = [first.schedules[0]]
    complete = True
    budget = max_schedules * TOTAL_BOUND_FACTOR
    per_window: list[list[int]] = []      # schedule indices of each window (the synchronous one is 0)
    for group in windows:
        if len(group) == 1 and not problem.host_conflicts[group[0]]:
            continue                      # one unit that conflicts with nothing: one schedule
        por = enumerate_schedules(restrict(problem, group), max_schedules)
        complete &= por.complete
        mine = []
        for sub in por.schedules[1:]:
            if len(schedules) >= budget:
                complete = False
                break
            mine.append(len(schedules))
            schedules.append(substitute(schedules[0], k, group, sub))
        per_window.append(mine)

    control = control_events_from_columns(columns)
    sync = model.order(schedules[0])
    identity = np.arange(model.n_rows, dtype=np.int64)
    # fork points along the synchronous schedule, in order
    # (fork point along the synchronous schedule, schedule index; -1 = the recorded run), in order;
    # orders are recomputed rather than kept: one is as long as the log
    forks = [(_first_difference(identity, sync), -1)]
    forks += [(_first_difference(model.order(schedules[i]), sync), i) for mine in per_window for i in mine]
    forks.sort()
    found: list[set[tuple]] = [set() for _ in schedules]
    recorded: set[tuple] = set()
    base = VsmSession.for_control(control)
    at = 0
    for start, i in forks:
        base.apply(columns, rows=sync[at:start])
        at = start
        o = identity if i < 0 else model.order(schedules[i])
        fork = base.copy()
        fork.apply(columns, rows=o[start:])
        keys = {detection_key(d) for d in fork.detections()}
        if i < 0:
            recorded = keys
        else:
            found[i] = keys
    base.apply(columns, rows=sync[at:])
    found[0] = {detection_key(d) for d in base.detections()}
    return Exploration(model, schedules, found, recorded, complete, len(windows))


class WitnessText:
    """Tells a schedule in source terms, relative to the synchronous one."""

    def __init__(self, text: RowText, model: ScheduleModel):
        self.text = text
        self.model = model

    def element(self, e: int) -> str:
        m = self.model
        k = m.n_units
        if e < k:
            return self.text.unit_name(int(m.unit_ctx[e]))
        row = int(m.block_first_row[m.elem_first_block[e - k]])
        return self.host_row(row, run=m.elem_last_block[e - k] > m.elem_first_block[e - k])

    def host_row(self, row: int, run: bool = False) -> str:
        c = self.text.cols
        kind = int(c["kind"][row])
        if kind == int(EventKind.ACCESS):
            verb = "accesses" if run else ("write" if int(c["op"][row]) & 1 else "read")
            return f"the host {verb} at line {self.text.site(row).line}"
        ci = self.text.construct_of_row(row)
        if ci >= 0:
            name = self.text.construct_name(ci)
            return name if name.startswith("the end of") else "the " + name
        if kind == int(EventKind.SYNC):
            return f"the synchronisation at line {self.text.site(row).line}"
        return f"the host at line {self.text.site(row).line}"

    def neighbours(self, schedule: list[int], u: int) -> tuple[int, int]:
        """Last conflicting element before unit u and first one after it (-1 when none)."""
        pos = schedule.index(u)
        prev = next((e for e in reversed(schedule[:pos]) if self.model.conflict(u, e)), -1)
        nxt = next((e for e in schedule[pos + 1:] if self.model.conflict(u, e)), -1)
        return prev, nxt

    def moved_units(self, schedule: list[int], sync: list[int]) -> list[int]:
        return [u for u in range(self.model.n_units) if self.neighbours(schedule, u) != self.neighbours(sync, u)]

    def describe(self, schedule: list[int], sync: list[int]) -> str:
        moved = self.moved_units(schedule, sync)
        if not moved:
            return "the synchronous schedule: every `nowait` task runs to completion as soon as it is launched"
        parts = []
        for u in moved:
            prev, nxt = self.neighbours(schedule, u)
            name = self.element(u)
            if prev >= 0:
                s = f"{name} ends after {self.element(prev)}"
                if nxt >= 0:
                    s += f" (and before {self.element(nxt)})"
            else:
                s = f"{name} ends before {self.element(nxt)}" if nxt >= 0 else f"{name} runs at the end"
            parts.append(s)
        return "; ".join(parts)

    def fix(self, schedule: list[int], sync: list[int]) -> str | None:
        """Order the unit that moved with what it passed; None for the synchronous schedule."""
        moved = self.moved_units(schedule, sync)
        if not moved:
            return None
        u = moved[0]
        prev, nxt = self.neighbours(schedule, u)
        other = prev if prev >= 0 else nxt
        k = self.model.n_units
        name = self.element(u)
        if other >= k:
            row = int(self.model.block_first_row[self.model.elem_first_block[other - k]])
            return (f"make {name} end before {self.element(other)}: add `#pragma omp taskwait` before line "
                    f"{self.text.site(row).line}, or `depend` clauses that order them")
        if other >= 0:
            return (f"order {name} and {self.element(other)} with `depend` clauses (out on the first, in or "
                    f"inout on the second)")
        return f"order {name} with a `depend` clause or a `#pragma omp taskwait`"


def schedule_findings(log: EventLog, columns: dict[str, np.ndarray], ex: Exploration, text: RowText) -> list[Finding]:
    from quiver.replay.mapping.diagnosis import diagnose

    n = ex.n
    counts: dict[tuple, int] = {}
    first_seen: dict[tuple, int] = {}
    for i, keys in enumerate(ex.found):
        for key in keys:
            counts[key] = counts.get(key, 0) + 1
            first_seen.setdefault(key, i)
    control = control_events_from_columns(columns)
    words = WitnessText(text, ex.model)
    sync = ex.schedules[0]
    out: list[Finding] = []
    for key in sorted(counts, key=lambda k: (first_seen[k], k)):
        k = counts[key]
        recorded = key in ex.recorded
        if k == n and recorded:
            continue    # every schedule and the recorded run: the mapping checker reports it
        w = first_seen[key]
        dets = [d for d in run_vsm(columns, order=ex.model.order(ex.schedules[w]), control=control).detections
                if detection_key(d) == key]
        if not dets:
            continue
        witness = words.describe(ex.schedules[w], sync)
        order_fix = words.fix(ex.schedules[w], sync)
        of = f"{n}" if ex.complete else f"the first {n} explored"
        tail = f" — in {k} of {of} schedules ({'also' if recorded else 'not'} in the recorded run)"
        moved = words.moved_units(ex.schedules[w], sync) or list(range(ex.model.n_units))
        witness_site = text.unit_site(int(ex.model.unit_ctx[moved[0]])) if moved else None
        for f in diagnose(log, control, dets, dropped=0):
            details = dict(f.details)
            details["schedules"] = {"k": k, "n": n, "complete": ex.complete, "recorded": recorded,
                                    "witness": witness}
            if f.fix:
                details["mapping_fix"] = f.fix
            # shown by the synchronous schedule: a mapping issue (Theorem 1, condition 2), fixed by its clause
            fix = order_fix if order_fix is not None else f.fix
            out.append(replace(
                f, message=f.message + tail, details=details, fix=fix,
                related=[*f.related, Related("witness-schedule", witness_site or f.access, witness)]))
    return out


def check_schedules(log: EventLog, options: CheckOptions) -> list[Finding]:
    """Mapping issues that only some schedules of the `nowait` target tasks show."""
    if not has_async_target_work(log):
        return []
    columns = log.columns()
    tm = build_task_model(log, columns)
    if not tm.target_ctx.any():
        return []
    hb = build_happens_before(log, columns, tm)
    model = build_schedule_model(columns, hb)
    ex = explore(columns, model, options.max_schedules)
    return schedule_findings(log, columns, ex, RowText(log, columns, tm))
