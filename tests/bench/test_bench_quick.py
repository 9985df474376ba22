"""`bench/run.py --quick --repeat 1` end to end: every kernel measured, every number positive.

Never asserts on timings (the machine is shared); only that each measurement exists and is sane.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

from qvbench.build import trace_available
from qvbench.kernels import KERNELS

pytestmark = [pytest.mark.slow, pytest.mark.clang]


def run_bench(d: Path, *args: str) -> dict:
    out = d / "results.json"
    r = subprocess.run([sys.executable, str(BENCH / "run.py"), "--quick", "--repeat", "1", "--json", str(out),
                        "--workdir", str(d / "work"), *args],
                       capture_output=True, text=True, check=False, timeout=1800)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "quiver bench" in r.stdout and "stencil" in r.stdout
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict:
    """Every kernel natively and recorded (the sanitizers and valgrind: tool_results)."""
    return run_bench(tmp_path_factory.mktemp("bench"), "--no-tools", "--synthetic", "200000")


@pytest.fixture(scope="module")
def tool_results(tmp_path_factory) -> dict:
    """The reduced-size comparison with valgrind and the sanitizers, on two kernels (one with MPI
    ranks): the tools are most of the quick run's time."""
    return run_bench(tmp_path_factory.mktemp("bench-tools"), "--no-full", "--kernels", "stencil,halo",
                     "--synthetic", "0")


def _positive(x) -> bool:
    return isinstance(x, (int, float)) and x > 0


def test_every_kernel_has_native_numbers(results: dict) -> None:
    assert [k["name"] for k in results["kernels"]] == [k.name for k in KERNELS]
    for k in results["kernels"]:
        assert _positive(k["native"]["seconds"]), k["name"]
        assert _positive(k["native"]["peak_rss_mib"]), k["name"]
        assert k["native"]["failed"] == 0


def test_recorded_runs_and_logs(results: dict) -> None:
    for k in results["kernels"]:
        wrapper = "mpicc" if k["ranks"] else "cc"
        if not (trace_available(wrapper) and trace_available("record")):
            assert k["recorded"] is None and "not available" in k["recorded_error"]
            continue
        assert _positive(k["recorded"]["seconds"]) and _positive(k["ratio"]), k["name"]
        assert _positive(k["recorded"]["peak_rss_mib"])
        assert _positive(k["log"]["bytes"]) and _positive(k["log"]["events"]), k["name"]
        if not k["ranks"]:  # OpenMP kernels are built with access instrumentation
            assert _positive(k["log"]["accesses"]) and _positive(k["log"]["bytes_per_access"]), k["name"]
        assert k["recorded"]["tmpfiles_left"] == 0, "trace record left device images in /tmp"


def test_analysis_numbers(results: dict) -> None:
    syn = results["synthetic"]
    assert syn["log"]["accesses"] >= 200_000
    if not trace_available("analyze"):
        assert syn["analyze"] is None
        return
    for k in [syn, *[k for k in results["kernels"] if k.get("recorded")]]:
        a = k["analyze"]
        assert _positive(a["seconds"]) and _positive(a["events_per_s"]) and _positive(a["peak_rss_mib"]), k["name"]
    c = syn["checker"]   # the VSM alone, and split into decoding the log and the kernel
    assert c["findings"] == 0 and c["events"] == syn["log"]["events"]
    assert _positive(c["decode_s"]) and _positive(c["kernel_s"]) and _positive(c["kernel_events_per_s"])
    assert set(c["decoded_columns"]) >= {"kind", "addr", "size", "device", "op"}
    assert results["summary"]["vsm_kernel_events_per_s"] == c["kernel_events_per_s"]


def test_tools_measured_or_explained(tool_results: dict) -> None:
    assert [k["name"] for k in tool_results["kernels"]] == ["stencil", "halo"]
    for k in tool_results["kernels"]:
        tools = k["tools"]
        if not next(x for x in KERNELS if x.name == k["name"]).has_tools:
            assert tools is None, k["name"]   # the untuned shapes are compared with native only
            continue
        assert tools["size"] == "quick" and _positive(tools["native"]["seconds"])
        for tool in ("memcheck", "asan", "tsan", "msan"):
            t = tools[tool]
            assert _positive(t.get("ratio")) or t.get("error"), (k["name"], tool)


def test_summary_and_machine(results: dict) -> None:
    assert results["machine"]["cpus"] >= 1
    if any(k.get("ratio") for k in results["kernels"]):
        assert _positive(results["summary"]["record_ratio_median"])
        assert results["summary"]["record_ratio_worst"] >= results["summary"]["record_ratio_median"]
