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


def test_prestarted_symbolizer_and_nm_give_the_same_answers(omp_build) -> None:
    exe = str(omp_build("omp/clauses.c"))
    syms = tools.output(tools.nm_argv(tools.nm(), exe)).splitlines()
    g = next(line.split() for line in syms if line.endswith(" g"))
    main = next(line.split() for line in syms if line.endswith(" main"))
    module = objects.Module(0, 0, 1 << 40, exe)
    addrs = np.array([int(g[0], 16) + 8], dtype=np.uint64)
    pcs = np.array([int(main[0], 16) + 4], dtype=np.uint64)
    plain = objects.global_objects(module, addrs), symbolize.symbolize(pcs, [module])
    tools.prestart(exe)
    assert tools.started(tools.nm_argv(tools.nm(), exe))
    early = objects.global_objects(module, addrs), symbolize.symbolize(pcs, [module])
    assert not tools.started(tools.nm_argv(tools.nm(), exe))
    assert not tools.started(tools.symbolizer_argv(tools.symbolizer()))
    assert plain == early and plain[0] == [(int(g[0], 16), 128, "g")]
    assert early[1][0][0].endswith("clauses.c") and early[1][0][3] == "main"


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
    assert not tools.started(tools.nm_argv(tools.nm(), str(host_only)))
    assert not tools.started(tools.dwarf_all_argv(tools.dwarfdump(), str(host_only)))
