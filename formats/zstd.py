"""zstd compression of Arrow IPC buffers without pyarrow: the system's libzstd through ctypes.

Why: a recorded run of more than PLAIN_MAX_ROWS events is written zstd-compressed; through pyarrow that
costs its import (~0.16 s of CPU, ~0.03 s of the finalize's wall time after the program ended), more
than compressing a 180,000-row log takes. The plain writer (formats/ipc_file.py) compresses each
buffer with this module instead, as Arrow's IPC writer does (one zstd frame per buffer, behind its
uncompressed length). ctypes releases the GIL during each call, so two threads compress two columns
at once.

``available()`` is False where libzstd.so.1 cannot be loaded (LogWriter then uses pyarrow).
"""

from __future__ import annotations

import ctypes
import functools

LEVEL = 3   # formats/writer.py ZSTD_LEVEL: the same level pyarrow is asked for


def _names():
    yield "libzstd.so.1"
    import ctypes.util  # imports tempfile (~2 ms): only when the usual name is missing

    yield ctypes.util.find_library("zstd")


@functools.cache
def _library() -> ctypes.CDLL | None:
    for name in _names():
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        lib.ZSTD_compressBound.argtypes = [ctypes.c_size_t]
        lib.ZSTD_compressBound.restype = ctypes.c_size_t
        lib.ZSTD_compress.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        lib.ZSTD_compress.restype = ctypes.c_size_t
        lib.ZSTD_isError.argtypes = [ctypes.c_size_t]
        lib.ZSTD_isError.restype = ctypes.c_uint
        return lib
    return None


def available() -> bool:
    """libzstd can be loaded."""
    return _library() is not None


def compress(data: memoryview | bytes, level: int = LEVEL) -> bytes:
    """One zstd frame of ``data`` (a C-contiguous buffer; read in place when writable or bytes, else
    copied first). Raises RuntimeError when libzstd is missing or fails."""
    lib = _library()
    if lib is None:
        raise RuntimeError("libzstd.so.1 cannot be loaded")
    if isinstance(data, bytes):
        n, src = len(data), ctypes.c_char_p(data)
    else:
        view = memoryview(data).cast("B")
        n = view.nbytes
        if view.readonly:
            src = ctypes.c_char_p(view.tobytes())
        else:
            src = (ctypes.c_char * n).from_buffer(view) if n else None
    cap = lib.ZSTD_compressBound(n)
    dst = ctypes.create_string_buffer(cap)
    size = lib.ZSTD_compress(dst, cap, src, n, level)
    if lib.ZSTD_isError(size):
        raise RuntimeError("zstd compression failed")
    return ctypes.string_at(dst, size)
