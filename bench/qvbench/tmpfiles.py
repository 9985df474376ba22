"""Remove the device images our runs leave in /tmp/tmpfile_* (libomptarget never deletes them).

Other programs on the machine leave such files too, so a file is removed only if it appeared
during one of our runs and its bytes occur verbatim inside one of the executables we built
(the host binary embeds the device image that the runtime writes out).
"""

from __future__ import annotations

from pathlib import Path

TMP_DIR = Path("/tmp")
PATTERN = "tmpfile_*"


class TmpfileSweeper:
    def __init__(self) -> None:
        self._executables: dict[Path, bytes] = {}
        self.removed = 0

    def register(self, executable: Path) -> None:
        """An executable we built: images its runs write out are ours to delete."""
        self._executables[executable] = executable.read_bytes()

    def snapshot(self) -> set[str]:
        return {p.name for p in TMP_DIR.glob(PATTERN)}

    def sweep(self, before: set[str]) -> int:
        """Delete the files that appeared since ``before`` and came from our executables."""
        removed = 0
        for p in TMP_DIR.glob(PATTERN):
            if p.name in before:
                continue
            try:
                data = p.read_bytes()
            except OSError:
                continue
            if data and any(data in exe for exe in self._executables.values()):
                p.unlink(missing_ok=True)
                removed += 1
        self.removed += removed
        return removed
