"""quiver: record OpenMP-offloading and MPI-RMA programs, replay the log through checkers.

``quiver.open("run.arrow")`` opens a log for exploration (polars frames per event family).
"""

from __future__ import annotations

__all__ = ["LogBuilder", "LogFormatError", "Trace", "__version__", "open"]

TYPE_CHECKING = False   # typing's import (~2 ms) is not on `trace record`'s path before the program starts
if TYPE_CHECKING:
    from typing import Any

    from quiver.formats import LogBuilder, LogFormatError
    from quiver.trace import Trace, open


def __getattr__(name: str) -> Any:
    """Load the API on first use: `trace record` and `trace cc` import the package but need neither
    polars nor pyarrow up front (each costs ~0.2 s of start-up)."""
    if name in ("LogBuilder", "LogFormatError"):
        from quiver import formats
        return getattr(formats, name)
    if name == "__version__":
        from quiver.formats.version import __version__
        return __version__
    if name in ("Trace", "open"):
        from quiver import trace
        return getattr(trace, name)
    raise AttributeError(f"module 'quiver' has no attribute {name!r}")
