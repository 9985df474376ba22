"""`@kernel`: the one decorator of the numba kernels; they run interpreted on small logs, compiled on large ones.

Why: numba costs ~0.3 s to import plus the load of every cached kernel before its first compiled call,
far more than interpreting a kernel over a log of a few thousand events. So a kernel is plain Python
(one source, no second copy) until a log large enough to pay for numba comes along; then numba is
imported and the kernel compiled (or loaded from its on-disk cache) on first call. The mode is chosen
once per analysis of one log (`sized`, by replay/driver.py) from its number of events, for the whole
process (two analyses in two threads share it: only their speed depends on it);
``QUIVER_JIT=always|never|auto`` overrides it (tests run every checker both ways and compare reports).
finalize (tracer/finalize_kernels.py) picks between its compiled kernels and its numpy passes itself.

Kernels must therefore mean the same thing to numba and to Python: no ``numba.typed`` (a dict seeded
with a typed entry and cleared instead), no ``prange``, explicit numpy integer types where numba's
promotion (int32 arithmetic widens to int64) or wrap-around would differ from numpy scalars'.
Standard library only (it is imported by every layer).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

MODE_ENV = "QUIVER_JIT"
MODES = ("auto", "always", "never")
# events: up to here one run interprets its kernels. Interpreted kernels cost ~2-20 us per event of
# the loops they run; numba's import and the load of a checker's cached kernels ~0.3-0.6 s (docs/bench.md).
# 10,000 since kernels no longer log their SYNC rows (a region's 28 rows became 15): a `nowait` pipeline
# of 17 k events took 3.2 s interpreted against 1.0 s compiled; RMA logs cross over near 20 k
SMALL_LOG = 10_000

_lock = threading.Lock()
# inside `sized`: (compiled wanted, an already compiled kernel may be used); outside (a checker called
# directly, a test): None, and QUIVER_JIT decides, compiled unless it says never
_choice: tuple[bool, bool] | None = None


def mode() -> str:
    """QUIVER_JIT, checked: one of MODES (an unknown value counts as auto)."""
    value = os.environ.get(MODE_ENV, "auto").strip().lower()
    return value if value in MODES else "auto"


def compiled_for(events: int | None) -> bool:
    """Whether a run over a log of ``events`` events (None: unknown) should call compiled kernels."""
    m = mode()
    return m == "always" or (m == "auto" and (events is None or events > SMALL_LOG))


def _choose(events: int | None) -> tuple[bool, bool]:
    return compiled_for(events), mode() == "auto"


@contextmanager
def sized(events: int) -> Iterator[bool]:
    """Kernels called inside run compiled or interpreted as a log of ``events`` events calls for;
    yields which."""
    global _choice
    before = _choice
    _choice = _choose(events)
    try:
        yield _choice[0]
    finally:
        _choice = before


@contextmanager
def sized_for_work(work: int) -> Iterator[bool]:
    """Inside a checker whose loops run over more than the log's events (every block of its strided
    ACCESS rows, e.g. the transfers replay): kernels run compiled when ``work`` calls for it, else as
    the enclosing choice says. Why: a log of a few hundred strided rows can stand for millions of
    blocks, which interpreted kernels take minutes over."""
    if not compiled_for(work):
        yield (_choice if _choice is not None else _choose(None))[0]
        return
    with sized(work) as chosen:
        yield chosen


class Kernel:
    """A function numba can compile, called interpreted or compiled (see the module doc).

    ``py_func`` is the function itself. Inside compiled code, calls to another Kernel are numba calls
    (``_numba_type_`` is its dispatcher's type), so kernels may call kernels either way."""

    def __init__(self, func: Callable[..., Any], options: dict[str, Any]) -> None:
        self.py_func = func
        self.options = options
        self._dispatcher: Any = None
        self.__name__ = func.__name__
        self.__qualname__ = func.__qualname__
        self.__doc__ = func.__doc__
        self.__module__ = func.__module__
        self.__wrapped__ = func

    def dispatcher(self) -> Any:
        """numba's dispatcher of the function (numba imported on first use; machine code cached on disk)."""
        if self._dispatcher is None:
            with _lock:
                if self._dispatcher is None:
                    from numba import njit

                    self._dispatcher = njit(cache=True, **self.options)(self.py_func)
        return self._dispatcher

    @property
    def loaded(self) -> bool:
        """Whether numba has this kernel already (imported, compiled or loaded from its cache)."""
        return self._dispatcher is not None

    @property
    def compiled(self) -> bool:
        """Whether calls from Python run the compiled kernel now. In auto mode a kernel already
        compiled in this process stays compiled (same results, and it is the faster one)."""
        wanted, reuse = _choice if _choice is not None else _choose(None)
        return wanted or (reuse and self.loaded)

    @property
    def _numba_type_(self) -> Any:
        return self.dispatcher()._numba_type_

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.compiled:
            return self.dispatcher()(*args, **kwargs)
        return self.py_func(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<kernel {self.__module__}.{self.__qualname__}>"


def kernel(func: Callable[..., Any] | None = None, **options: Any) -> Any:
    """``@kernel`` or ``@kernel(nogil=True, inline="always")``: numba.njit's options, always cached."""
    if func is None:
        return lambda f: Kernel(f, options)
    return Kernel(func, options)
