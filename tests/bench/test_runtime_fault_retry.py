"""A run that dies of libomp's known task_team assertion is run again; any other failure is not."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

from qvbench.runner import RUNTIME_FAULT_RETRIES, run_retrying

FLAKY = """
n=$(cat {count} 2>/dev/null || echo 0); echo $((n + 1)) > {count}
if [ "$n" -lt {fails} ]; then
  echo "Assertion failure at kmp_tasking.cpp(4368): task_team != __null." >&2
  echo "OMP: Error #13: Assertion failure at kmp_tasking.cpp(4368)." >&2
  exit 134
fi
echo ok
"""


def _script(tmp_path: Path, fails: int, message: str = "") -> list[str]:
    body = FLAKY.format(count=tmp_path / "count", fails=fails)
    if message:
        body = f"echo '{message}' >&2; exit 3\n"
    script = tmp_path / "flaky.sh"
    script.write_text(body)
    return ["sh", str(script)]


def _attempts(tmp_path: Path) -> int:
    return int((tmp_path / "count").read_text())


def test_runtime_fault_is_run_again_and_counted(tmp_path: Path) -> None:
    cleared = []
    m = run_retrying(_script(tmp_path, fails=1), cwd=tmp_path, log=tmp_path / "out.log",
                     before=lambda: cleared.append(1))
    assert m.ok and m.retries == 1
    assert _attempts(tmp_path) == 2 and len(cleared) == 2


def test_gives_up_after_the_retry_budget(tmp_path: Path) -> None:
    m = run_retrying(_script(tmp_path, fails=10), cwd=tmp_path, log=tmp_path / "out.log")
    assert not m.ok and m.returncode == 134
    assert m.retries == RUNTIME_FAULT_RETRIES and _attempts(tmp_path) == RUNTIME_FAULT_RETRIES + 1


def test_other_failures_are_not_retried(tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    log.write_text("OMP: Error #13: Assertion failure at kmp_tasking.cpp(4368).\n")  # an earlier run's output
    m = run_retrying(_script(tmp_path, fails=0, message="segfault in the tracer"), cwd=tmp_path, log=log)
    assert not m.ok and m.returncode == 3 and m.retries == 0
