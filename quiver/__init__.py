"""quiver: record OpenMP-offloading and MPI-RMA programs, replay the log through checkers.

``quiver.open("run.arrow")`` opens a log for exploration (polars frames per event family).
"""

from quiver.formats import LogBuilder, LogFormatError
from quiver.trace import Trace, open

__version__ = "0.1.0"
__all__ = ["LogBuilder", "LogFormatError", "Trace", "__version__", "open"]
