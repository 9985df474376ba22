"""Write event logs of small OpenMP programs with `nowait`, shaped like the tracer's.

Why a helper: race and schedule tests describe a program line by line; this turns each construct
into the events the OpenMP tracer records for it (TASK_CREATE on the host thread, the target task
running on a hidden-helper thread, data ops after reference counting, device accesses).
``Program.nowait_target`` returns the launched task; ``.run()`` puts its events in the log where the
test wants the recorded schedule to have run it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from quiver.formats import (
    ConstructKind,
    DataOpKind,
    DependKind,
    EventKind,
    LogBuilder,
    MapType,
    SyncKind,
    TaskFlag,
)

MAP_BITS = {"to": MapType.TO, "from": MapType.FROM, "tofrom": MapType.TO | MapType.FROM, "alloc": 0,
            "release": 0, "delete": MapType.DELETE}
DEPEND = {"in": DependKind.IN, "out": DependKind.OUT, "inout": DependKind.INOUT}


@dataclass
class Var:
    name: str
    host: int
    size: int
    elem: int = 4


@dataclass
class Launched:
    """A deferred target task whose events are emitted when ``run`` is called."""

    program: Program
    task: int
    emit: list = field(default_factory=list)
    done: bool = False

    def run(self, thread: int = 1) -> None:
        assert not self.done
        self.done = True
        for f in self.emit:
            f(thread)


class Program:
    HELPER = 1

    def __init__(self, file: str = "prog.c"):
        self.file = file
        self.b = LogBuilder(program=file.removesuffix(".c"))
        self.present: dict[str, list[int]] = {}   # name -> [device address, refcount]
        self.next_dev = 0x7F0000000000
        self.next_task = 1
        self.open_data: list[tuple[int, int, list]] = []

    def site(self, line: int) -> tuple[str, int, str]:
        return (self.file, line, "main")

    def var(self, name: str, host: int, n: int = 1, elem: int = 4, line: int = 1) -> Var:
        self.b.alloc(host, n * elem, site=self.site(line))
        return Var(name, host, n * elem, elem)

    # host side ---------------------------------------------------------------------------
    def write(self, v: Var, line: int, lo: int = 0, n: int | None = None, thread: int = 0) -> None:
        n = v.size // v.elem - lo if n is None else n
        self.b.access(v.host + lo * v.elem, n * v.elem, write=True, site=self.site(line), thread=thread)

    def read(self, v: Var, line: int, lo: int = 0, n: int | None = None, thread: int = 0) -> None:
        n = v.size // v.elem - lo if n is None else n
        self.b.access(v.host + lo * v.elem, n * v.elem, write=False, site=self.site(line), thread=thread)

    def taskwait(self, line: int, thread: int = 0) -> None:
        self.b.sync(SyncKind.TASKWAIT, site=self.site(line), thread=thread)

    def barrier(self, line: int, region: int, thread: int, departure: bool | None = None) -> None:
        """A barrier of parallel region ``region``: arrival, departure, or (None) one row for both."""
        self.b.event(EventKind.SYNC, op=int(SyncKind.BARRIER), id=region, aux=-1, aux2=int(bool(departure)),
                     loc=self.b._loc(self.site(line)), thread=thread)

    def fork(self, line: int, region: int, thread: int = 0) -> None:
        self.b.event(EventKind.SYNC, op=int(SyncKind.PARALLEL_BEGIN), id=region, loc=self.b._loc(self.site(line)),
                     thread=thread)

    def implicit_task(self, region: int, thread: int) -> None:
        self.b.event(EventKind.SYNC, op=int(SyncKind.IMPLICIT_TASK_BEGIN), id=region, thread=thread)

    def taskgroup_begin(self, line: int, thread: int = 0) -> None:
        self.b.sync(SyncKind.TASKGROUP_BEGIN, site=self.site(line), thread=thread)

    def taskgroup_end(self, line: int, thread: int = 0) -> None:
        self.b.sync(SyncKind.TASKGROUP_END, site=self.site(line), thread=thread)

    # mapping -----------------------------------------------------------------------------
    def _enter(self, c: int, maps, line: int, task: int, thread: int) -> None:
        for i, (v, how) in enumerate(maps):
            self.b.map_clause(c, v.name, v.host, v.size, MAP_BITS[how], site=self.site(line), index=i,
                              thread=thread)
            if v.name in self.present:
                self.present[v.name][1] += 1
                continue
            dev = self.next_dev
            self.next_dev += 0x10000
            self.present[v.name] = [dev, 1]
            self.b.data_op(DataOpKind.ALLOC, v.host, dev, v.size, construct=c, var=v.name, site=self.site(line),
                           task=task, thread=thread)
            if how in ("to", "tofrom"):
                self.b.data_op(DataOpKind.TRANSFER_TO, v.host, dev, v.size, construct=c, var=v.name,
                               site=self.site(line), task=task, thread=thread)

    def _exit(self, c: int, maps, line: int, task: int, thread: int) -> None:
        for v, how in maps:
            entry = self.present[v.name]
            entry[1] = 0 if how == "delete" else entry[1] - 1
            if entry[1] > 0:
                continue
            if how in ("from", "tofrom"):
                self.b.data_op(DataOpKind.TRANSFER_FROM, v.host, entry[0], v.size, construct=c, var=v.name,
                               site=self.site(line), task=task, thread=thread)
            self.b.data_op(DataOpKind.DELETE, v.host, entry[0], v.size, construct=c, var=v.name,
                           site=self.site(line), task=task, thread=thread)
            del self.present[v.name]

    def dev(self, v: Var) -> int:
        return self.present[v.name][0]

    def _kernel(self, c: int, body, task: int, thread: int) -> None:
        self.b.kernel(c, task=task, thread=thread)
        for v, rw, line, *rng in body:   # rng: first element, elements, [stride in elements, blocks]
            if rng and isinstance(rng[0], dict):   # a masked run: {"mask": bits, "lo": first element, "stride": elements}
                m = rng[0]
                self.b.access(self.dev(v) + m.get("lo", 0) * v.elem, v.elem, write=(rw == "w"), device=0, construct=c,
                              site=self.site(line), thread=thread, stride=m.get("stride", 1) * v.elem, mask=m["mask"],
                              width=v.elem)
                continue
            lo = rng[0] if rng else 0
            n = rng[1] if len(rng) > 1 else v.size // v.elem - lo
            stride, blocks = (rng[2] * v.elem, rng[3]) if len(rng) > 3 else (0, 1)
            self.b.access(self.dev(v) + lo * v.elem, n * v.elem, write=(rw == "w"), device=0, construct=c,
                          site=self.site(line), thread=thread, stride=stride, blocks=blocks)

    # constructs --------------------------------------------------------------------------
    def target(self, line: int, maps, body, thread: int = 0) -> None:
        c = self.b.construct_begin(ConstructKind.TARGET, site=self.site(line), thread=thread)
        self._enter(c, maps, line, -1, thread)
        self._kernel(c, body, -1, thread)
        self._exit(c, maps, line, -1, thread)
        self.b.construct_end(c, thread=thread)

    def target_data(self, line: int, maps, thread: int = 0) -> None:
        c = self.b.construct_begin(ConstructKind.TARGET_DATA, site=self.site(line), thread=thread)
        self._enter(c, maps, line, -1, thread)
        self.b.construct_end(c, ConstructKind.TARGET_DATA, thread=thread)
        self.open_data.append((line, c, maps))

    def end_target_data(self, thread: int = 0) -> None:
        line, _c, maps = self.open_data.pop()
        c = self.b.construct_begin(ConstructKind.TARGET_DATA_END, site=self.site(line), thread=thread)
        self._exit(c, maps, line, -1, thread)
        self.b.construct_end(c, ConstructKind.TARGET_DATA_END, thread=thread)

    def update(self, line: int, to=(), from_=(), thread: int = 0) -> None:
        c = self.b.construct_begin(ConstructKind.TARGET_UPDATE, site=self.site(line), thread=thread)
        self._update_ops(c, line, to, from_, -1, thread)
        self.b.construct_end(c, ConstructKind.TARGET_UPDATE, thread=thread)

    def _update_ops(self, c, line, to, from_, task, thread) -> None:
        for v in to:
            self.b.data_op(DataOpKind.TRANSFER_TO, v.host, self.dev(v), v.size, construct=c, var=v.name,
                           site=self.site(line), task=task, thread=thread)
        for v in from_:
            self.b.data_op(DataOpKind.TRANSFER_FROM, v.host, self.dev(v), v.size, construct=c, var=v.name,
                           site=self.site(line), task=task, thread=thread)

    def _launch(self, line: int, depend, thread: int) -> Launched:
        t = self.next_task
        self.next_task += 1
        self.b.task_create(t, parent=0, flags=TaskFlag.TARGET | TaskFlag.EXPLICIT, site=self.site(line),
                           thread=thread)
        for how, v in depend:
            self.b.task_depend(t, v.host, DEPEND[how], thread=thread)
        return Launched(self, t)

    def nowait_target(self, line: int, maps, body, depend=(), thread: int = 0) -> Launched:
        """`#pragma omp target nowait map(...) depend(...)`: call ``.run()`` where the task ran."""
        lt = self._launch(line, depend, thread)
        t = lt.task

        def emit(th: int) -> None:
            self.b.task_begin(t, thread=th)
            c = self.b.construct_begin(ConstructKind.TARGET, site=self.site(line), nowait=True,
                                       depend=bool(depend), task=t, thread=th)
            self._enter(c, maps, line, t, th)
            self._kernel(c, body, t, th)
            self._exit(c, maps, line, t, th)
            self.b.construct_end(c, task=t, thread=th)
            self.b.task_end(t, thread=th)
        lt.emit.append(emit)
        return lt

    def nowait_update(self, line: int, to=(), from_=(), depend=(), thread: int = 0) -> Launched:
        lt = self._launch(line, depend, thread)
        t = lt.task

        def emit(th: int) -> None:
            self.b.task_begin(t, thread=th)
            c = self.b.construct_begin(ConstructKind.TARGET_UPDATE, site=self.site(line), nowait=True,
                                       depend=bool(depend), task=t, thread=th)
            self._update_ops(c, line, to, from_, t, th)
            self.b.construct_end(c, ConstructKind.TARGET_UPDATE, task=t, thread=th)
            self.b.task_end(t, thread=th)
        lt.emit.append(emit)
        return lt

    def nowait_enter(self, line: int, maps, depend=(), thread: int = 0) -> Launched:
        lt = self._launch(line, depend, thread)
        t = lt.task

        def emit(th: int) -> None:
            self.b.task_begin(t, thread=th)
            c = self.b.construct_begin(ConstructKind.TARGET_ENTER_DATA, site=self.site(line), nowait=True,
                                       depend=bool(depend), task=t, thread=th)
            self._enter(c, maps, line, t, th)
            self.b.construct_end(c, ConstructKind.TARGET_ENTER_DATA, task=t, thread=th)
            self.b.task_end(t, thread=th)
        lt.emit.append(emit)
        return lt

    def write_log(self, path) -> str:
        self.b.write(path)
        return str(path)


def fig2(task_runs_at: str, taskwait: bool = False) -> Program:
    """Seed 000 Fig. 2 (paper line numbers), the nowait task recorded at one of several points:
    ``launch``, ``before-end`` (of the data region) or ``late`` (after it); ``taskwait`` adds one at line 17."""
    p = Program("fig2.c")
    a = p.var("a", 0x1000, 1, line=1)
    p.write(a, 1)
    p.target(2, [(a, "to")], [(a, "r", 3), (a, "w", 3)])
    p.read(a, 5)
    p.target_data(7, [(a, "tofrom")])
    t = p.nowait_target(9, [(a, "tofrom")], [(a, "w", 11)])
    if task_runs_at == "launch":
        t.run()
    p.read(a, 13)
    p.write(a, 13)
    if task_runs_at == "before-end":
        t.run()
    p.end_target_data()
    if task_runs_at == "late":
        t.run()
    p.read(a, 16)
    if taskwait:
        p.taskwait(17)
    return p
