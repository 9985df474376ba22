"""Finalize's tool processes started with the program (tracer/tools.py): the same objects and lines
as when finalize runs the tools itself, and nothing left running after `trace record`."""

from __future__ import annotations

import numpy as np
import pytest
from quiver.tracer import objects, symbolize, tools

pytestmark = pytest.mark.clang


@pytest.fixture(autouse=True)
def _nothing_left_started():
    yield
    tools.stop_all()


def test_full_dump_finds_the_stack_objects_the_name_search_finds(omp_build) -> None:
    exe = str(omp_build("omp/clauses.c"))
    wanted = {("main", "s"), ("main", "v"), ("main", "h"), ("main", "nope"), ("other", "s")}
    by_name = objects.stack_objects(exe, wanted)
    tools.prestart(exe)
    assert tools.started(tools.dwarf_all_argv(tools.dwarfdump(), exe))
    from_full_dump = objects.stack_objects(exe, wanted)
    assert not tools.started(tools.dwarf_all_argv(tools.dwarfdump(), exe))  # its output was used
    # h is a pointer (the mapped object is its pointee); nope and other.s do not exist
    assert by_name == from_full_dump == {("main", "s"): 128, ("main", "v"): 48}


def _symbol(exe: str, name: str) -> int:
    """Address of a symbol in the file (readelf, independent of the tools under test)."""
    import subprocess

    out = subprocess.run(["readelf", "-sW", exe], capture_output=True, text=True, check=True).stdout
    return next(int(f[1], 16) for f in (line.split() for line in out.splitlines()) if len(f) >= 8 and f[7] == name)


def test_prestarted_symbolizer_gives_the_same_lines_and_globals(omp_build) -> None:
    exe = str(omp_build("omp/clauses.c"))
    g, main = _symbol(exe, "g"), _symbol(exe, "main")
    module = objects.Module(0, 0, 1 << 40, exe)
    pcs = np.array([main + 4], dtype=np.uint64)
    # inside g (double g[16]) three times, its last byte; one past its end and one before its start (the
    # symbolizer answers with the symbol below, which ends before them: _end, completed.0)
    data = [(module, np.array([g + 8, g + 127, g + 128, g, g + 8, g - 1], dtype=np.uint64))]
    plain = symbolize.symbolize_with_objects(pcs, [module], data)
    tools.prestart(exe)
    early = symbolize.symbolize_with_objects(pcs, [module], data)
    assert not tools.started(tools.symbolizer_argv(tools.symbolizer()))  # its output was used
    assert plain == early
    assert early[1] == [[(g, 128, "g")]]
    assert early[0][0][0].endswith("clauses.c") and early[0][0][3] == "main"
    assert objects.global_objects(module, data[0][1][:2]) == [(g, 128, "g")]


def test_globals_come_at_the_run_time_address(omp_build) -> None:
    exe = str(omp_build("omp/clauses.c"))
    g = _symbol(exe, "g")
    bias = 0x555555554000
    module = objects.Module(bias, bias, bias + (1 << 30), exe)
    assert objects.global_objects(module, np.array([bias + g + 16], dtype=np.uint64)) == [(bias + g, 128, "g")]
    assert objects.global_objects(module, np.array([bias - 8], dtype=np.uint64)) == []


def test_record_leaves_no_tool_process(record_c) -> None:
    run = record_c("omp/clauses.c")
    assert run.returncode == 0
    # `trace record` ran in its own process: none of its children may still exist
    import subprocess

    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True).stdout
    assert not [line for line in ps.splitlines() if str(run.exe) in line and "llvm-" in line]


def test_symbol_and_debug_readers_start_only_for_offloading_programs(omp_build) -> None:
    from quiver.tracer.record import calls_offload_runtime

    offloading, host_only = omp_build("omp/clauses.c"), omp_build("omp/host_sync.c")
    assert calls_offload_runtime(offloading) and not calls_offload_runtime(host_only)
    tools.prestart(host_only, objects=False)
    assert tools.started(tools.symbolizer_argv(tools.symbolizer()))
    assert not tools.started(tools.dwarf_all_argv(tools.dwarfdump(), str(host_only)))


def test_prestarted_symbolizer_answers_a_long_input_and_is_reaped(omp_build) -> None:
    """tools.answers reads the answers as they come while a thread writes the input (more than a pipe
    holds, both ways: no deadlock), kills the tool once all are in and leaves it to stop_all to reap."""
    exe = str(omp_build("omp/clauses.c"))
    main = _symbol(exe, "main")
    module = objects.Module(0, 0, 1 << 40, exe)
    pcs = np.arange(main, main + 6000, dtype=np.uint64)     # ~200 KB of queries, ~1 MB of answers
    plain = symbolize.symbolize(pcs, [module])
    tools.prestart(exe, objects=False)
    early = symbolize.symbolize(pcs, [module])
    assert early == plain and early[0][3] == "main"
    answered = list(tools._answered)
    assert len(answered) == 1
    tools.stop_all()
    assert answered[0].returncode is not None and not tools._answered
