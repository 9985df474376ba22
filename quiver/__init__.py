"""quiver: record OpenMP-offloading and MPI-RMA programs, replay the log through checkers.

``quiver.open("run.arrow")`` opens a log for exploration (polars frames per event family).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["LogBuilder", "LogFormatError", "Trace", "__version__", "open"]

if TYPE_CHECKING:
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
