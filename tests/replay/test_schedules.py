"""Schedules checker on synthetic logs shaped like the OpenMP tracer's (LogBuilder via nowait_logs)."""

from __future__ import annotations

import random

import pytest
from nowait_logs import Program, fig2
from quiver.formats import LogBuilder, read_log
from quiver.replay.mapping.vsm import check_mapping
from quiver.replay.nowait.happens_before import build_happens_before
from quiver.replay.nowait.races import check_races
from quiver.replay.nowait.schedules import build_schedule_model, check_schedules, explore
from quiver.replay.nowait.tasks import build_task_model
from quiver.replay.registry import CheckOptions
from quiver.replay.report.findings import FindingKind, merge_findings


def open_log(p: Program, tmp_path, name="run.arrow"):
    return read_log(p.write_log(tmp_path / name))


def exploration(log):
    cols = log.columns()
    hb = build_happens_before(log, cols, build_task_model(log, cols))
    return explore(cols, build_schedule_model(cols, hb), 64)


def summary(findings):
    """(kind, variable, line, k, n, recorded) of each finding."""
    return sorted((f.kind, f.variable, f.access.line, f.details["schedules"]["k"], f.details["schedules"]["n"],
                   f.details["schedules"]["recorded"]) for f in findings)


def update_before_kernel_ends(kernel_runs: str) -> Program:
    """enter data; target nowait writes a; target update from(a) (no depend); host read; taskwait."""
    p = Program("upd.c")
    a = p.var("a", 0x3000, 64)
    p.write(a, 2)
    p.target_data(4, [(a, "to")])
    t = p.nowait_target(6, [(a, "tofrom")], [(a, "w", 8)])
    if kernel_runs == "at-launch":
        t.run(thread=0)
    p.update(11, from_=[a])
    if kernel_runs == "after-update":
        t.run()
    p.read(a, 12)
    p.taskwait(13)
    p.end_target_data()
    return p


def test_issue_hidden_in_the_recorded_run_is_found_in_another_schedule(tmp_path):
    log = open_log(update_before_kernel_ends("at-launch"), tmp_path)
    assert check_mapping(log, CheckOptions()) == []          # the recorded run is clean
    found = check_schedules(log, CheckOptions())
    assert summary(found) == [(FindingKind.USE_OF_STALE_DATA, "a", 12, 1, 3, False)]
    f = found[0]
    assert "in 1 of 3 schedules (not in the recorded run)" in f.message
    witness = f.details["schedules"]["witness"]
    assert witness == ("the kernel at line 6 ends after the `target update` (line 11) "
                       "(and before the host read at line 12)")
    assert f.fix.startswith("make the kernel at line 6 end before the `target update` (line 11): "
                            "add `#pragma omp taskwait` before line 11")
    assert any(r.role == "witness-schedule" and r.message == witness for r in f.related)


def test_issue_of_the_recorded_run_is_one_finding_with_its_schedules(tmp_path):
    log = open_log(update_before_kernel_ends("after-update"), tmp_path)
    mapping = check_mapping(log, CheckOptions())
    assert [(f.kind, f.access.line) for f in mapping] == [(FindingKind.USE_OF_STALE_DATA, 12)]
    scheduled = check_schedules(log, CheckOptions())
    assert summary(scheduled) == [(FindingKind.USE_OF_STALE_DATA, "a", 12, 1, 3, True)]
    merged = merge_findings(mapping + scheduled)
    assert len(merged) == 1
    assert merged[0].details["schedules"]["recorded"] is True
    assert merged[0].occurrences == mapping[0].occurrences
    assert merge_findings(scheduled + mapping)[0].message == merged[0].message


def test_fig2_line_16_is_nondeterministic(tmp_path):
    log = open_log(fig2("launch", taskwait=True), tmp_path)
    mapping = {(f.kind, f.access.line) for f in check_mapping(log, CheckOptions())}
    assert (FindingKind.USE_OF_STALE_DATA, 5) in mapping        # every schedule: the mapping checker's
    found = check_schedules(log, CheckOptions())
    assert summary(found) == [(FindingKind.USE_OF_STALE_DATA, "a", 16, 1, 2, True)]
    assert found[0].details["schedules"]["witness"].startswith("the synchronous schedule")

    log = open_log(fig2("before-end", taskwait=True), tmp_path, "late.arrow")
    assert summary(check_schedules(log, CheckOptions())) == [(FindingKind.USE_OF_STALE_DATA, "a", 16, 1, 2, False)]


def test_depend_chain_has_one_clean_schedule(tmp_path):
    p = Program("chain.c")
    a = p.var("a", 0x4000, 32)
    b = p.var("b", 0x5000, 32)
    p.write(a, 2)
    p.target_data(3, [(a, "to"), (b, "alloc")])
    t1 = p.nowait_target(5, [(a, "tofrom")], [(a, "r", 6), (a, "w", 6)], depend=[("inout", a)])
    t2 = p.nowait_target(8, [(a, "tofrom"), (b, "tofrom")], [(a, "r", 9), (b, "w", 9)],
                         depend=[("in", a), ("out", b)])
    t3 = p.nowait_update(11, from_=[b], depend=[("in", b)])
    t1.run(thread=1)
    t2.run(thread=2)
    t3.run(thread=1)
    p.taskwait(12)
    p.read(b, 13)
    p.end_target_data()
    log = open_log(p, tmp_path)
    assert exploration(log).n == 1
    assert check_schedules(log, CheckOptions()) == []


def test_sixteen_independent_kernels_are_one_schedule(tmp_path):
    p = Program("many.c")
    vs = [p.var(f"x{i}", 0x10000 + i * 0x1000, 256) for i in range(16)]
    for v in vs:
        p.write(v, 3)
    ts = [p.nowait_target(10 + i, [(v, "tofrom")], [(v, "r", 30), (v, "w", 30)]) for i, v in enumerate(vs)]
    for i, t in enumerate(ts):
        t.run(thread=1 + i % 4)
    p.taskwait(40)
    for v in vs:
        p.read(v, 41)
    log = open_log(p, tmp_path)
    ex = exploration(log)
    assert ex.n == 1 and ex.complete
    assert check_schedules(log, CheckOptions()) == []


def test_bounded_exploration_says_so(tmp_path):
    p = Program("bound.c")
    a = p.var("a", 0x3000, 64)
    p.target_data(4, [(a, "to")])
    ts = [p.nowait_target(6 + i, [(a, "tofrom")], [(a, "r", 20), (a, "w", 20)]) for i in range(5)]
    for t in ts:
        t.run()
    p.update(30, from_=[a])
    p.read(a, 31)
    p.taskwait(32)
    p.end_target_data()
    log = open_log(p, tmp_path)
    found = check_schedules(log, CheckOptions(max_schedules=8))
    assert [(f.kind, f.access.line) for f in found] == [(FindingKind.USE_OF_STALE_DATA, 31)]
    s = found[0].details["schedules"]
    assert s["n"] == 8 and s["complete"] is False
    assert "of the first 8 explored schedules" in found[0].message


def test_no_nowait_no_work(tmp_path):
    p = Program("sync.c")
    a = p.var("a", 0x3000, 4)
    p.target(3, [(a, "to")], [(a, "w", 4)])
    p.read(a, 5)
    assert check_schedules(open_log(p, tmp_path), CheckOptions()) == []
    empty = LogBuilder(program="empty").write(tmp_path / "empty.arrow")
    assert check_schedules(read_log(empty), CheckOptions()) == []


def test_report_is_deterministic(tmp_path):
    log = open_log(update_before_kernel_ends("at-launch"), tmp_path)
    one = [f.to_dict() for f in check_schedules(log, CheckOptions())]
    two = [f.to_dict() for f in check_schedules(read_log(tmp_path / "run.arrow"), CheckOptions())]
    assert one == two


def test_each_synchronisation_window_is_explored(tmp_path):
    """A bug in the first window is found although 30 later windows each have two schedules."""
    p = Program("windows.c")
    a = p.var("a", 0x3000, 64)
    b = p.var("b", 0x8000, 64)
    p.target_data(4, [(a, "to"), (b, "alloc")])
    t = p.nowait_target(6, [(a, "tofrom")], [(a, "w", 8)])
    t.run(thread=0)
    p.update(11, from_=[a])
    p.read(a, 12)
    p.taskwait(13)
    for _ in range(30):
        t = p.nowait_target(20, [(b, "tofrom")], [(b, "w", 21)])
        t.run()
        p.write(b, 22)                       # unordered with the kernel, but never read
        p.taskwait(23)
    p.end_target_data()
    log = open_log(p, tmp_path)
    ex = exploration(log)
    assert ex.windows == 31 and ex.complete
    assert ex.n == 1 + 2 + 30
    found = check_schedules(log, CheckOptions())
    assert summary(found) == [(FindingKind.USE_OF_STALE_DATA, "a", 12, 1, 33, False)]


def random_program(seed: int, waited: bool) -> Program:
    """Random host accesses, nowait kernels/updates with random depend, taskwaits; ``waited``: every
    nowait construct is followed at once by a taskwait (then nothing can race or reorder)."""
    rnd = random.Random(seed)
    p = Program(f"rand{seed}.c")
    vs = [p.var(f"v{i}", 0x10000 * (i + 1), 16) for i in range(3)]
    p.target_data(2, [(v, "to") for v in vs])
    pending = []
    line = 10
    for _ in range(rnd.randint(3, 10)):
        line += 1
        v = rnd.choice(vs)
        r = rnd.random()
        if r < 0.3:
            (p.write if rnd.random() < 0.5 else p.read)(v, line)
        elif r < 0.6:
            dep = [(rnd.choice(["in", "out", "inout"]), v)] if rnd.random() < 0.5 else []
            pending.append(p.nowait_target(line, [(v, "tofrom")], [(v, rnd.choice("rw"), line + 1)], depend=dep))
        elif r < 0.8:
            pending.append(p.nowait_update(line, **{rnd.choice(["to", "from_"]): [v]}))
        else:
            p.update(line, from_=[v])
        if pending and (waited or rnd.random() < 0.4):
            for t in pending:
                t.run(thread=rnd.randint(0, 2))
            pending = []
            p.taskwait(line)
    for t in pending:
        t.run(thread=1)
    p.taskwait(line + 5)
    p.end_target_data()
    return p


@pytest.mark.parametrize("seed", range(12))
def test_random_programs(tmp_path, seed):
    log = open_log(random_program(seed, waited=False), tmp_path)
    a = [f.to_dict() for f in check_schedules(log, CheckOptions())]
    assert a == [f.to_dict() for f in check_schedules(log, CheckOptions())]
    for f in check_schedules(log, CheckOptions()):
        s = f.details["schedules"]
        assert 0 < s["k"] <= s["n"] and (s["k"] < s["n"] or not s["recorded"])
    check_races(log, CheckOptions())

    log = open_log(random_program(seed, waited=True), tmp_path, "waited.arrow")
    assert check_races(log, CheckOptions()) == []
    assert exploration(log).n == 1
    assert check_schedules(log, CheckOptions()) == []
