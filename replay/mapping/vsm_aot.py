"""The VSM kernel compiled ahead of time (``make setup``), so `trace analyze` need not load numba.

Why: numba costs ~0.6 s of CPU before the first compiled call of a process (its import, then the
set-up of its CPU target while the cached kernel loads); on a log of a few thousand events that is
most of `trace analyze`. ``numba.pycc`` compiles the very functions of ``vsm_kernel`` into a plain
extension module (``_vsm_aot``) that imports in milliseconds. It is used only while it matches the
kernel's source (a hash compiled into it); otherwise, or for arrays it was not built for, the
numba kernel runs. Built for this machine's CPU, like numba's own cache.

Why still ``numba.pycc`` (pending deprecation for several releases, still shipped in 0.68, no successor named):
no supported mechanism starts as fast. `trace analyze` of a one-finding log costs 0.20 s CPU with this
module against 0.50 s with the numba kernel from numba's warm on-disk cache (``cache=True``; a 10 M-event
log: 1.14 s against 1.47 s; same reports, alternated runs). Where the 0.3 s goes, measured in-process:
``import numba`` 0.13 s, the set-up of its CPU target (which imports every lowering registry before a
cached function can be loaded) 0.12 s, loading the two cached entry points 0.08 s; the inner functions
are compiled into them and never loaded on their own. No log that reaches the kernel can skip that, and
running the kernel's source without numba for small logs is slow wherever it loops over bytes (1.7 ms
a 4 KiB block). A C kernel built on first use, like the tracer's libraries, would be as fast but must
replace the numba kernel (one copy of the rules) and needs a compiler where logs are analysed. When pycc
goes, ``make aot`` says the module was not built and the cached numba kernel runs; nothing else changes.

    python -m quiver.replay.mapping.vsm_aot        # build (make setup does it); prints where it went
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path
from types import ModuleType

import numpy as np

MODULE = "_vsm_aot"
SOURCES = ("vsm_kernel.py", "vsm_layout.py")
# shadow element types compiled ahead of time: uint8 holds the host and up to 3 devices (the shadow
# type follows the device count, vsm._SHADOW_TYPES); more devices use the numba kernel
SHADOW_TYPES = {np.dtype(np.uint8): "u8"}

I64, I64_2, I64_3 = "int64[::1]", "int64[:,::1]", "int64[:,:,::1]"
# the types of apply_events' records (vsm_layout.Columns, Selection, Tables, State, Watch), field by field
RECORD_TYPES = {
    "Columns": ("int16[::1]", "int32[::1]", "int32[::1]", "int32[::1]", "uint64[::1]", "uint64[::1]", I64,
                "int32[::1]", I64, "uint64[::1]", I64),
    "Selection": (I64, "int64", "int64", "int64"),
    "Tables": (I64, I64_2, I64, I64, I64, "int64", "int64", I64, I64, I64),
    "State": (I64_2, "{shadow}[::1]", I64, I64, I64, "int64", I64_2, I64, I64, I64, I64, I64, I64_2, I64_2, I64),
    "Watch": (I64, I64, I64, I64_3, I64, I64, I64),
}


def record_types(shadow: str) -> list:
    """numba types of apply_events' arguments for this shadow element type (e.g. "uint8")."""
    from numba import types
    from numba.core import sigutils
    from quiver.replay.mapping import vsm_layout

    out = []
    for name, fields in RECORD_TYPES.items():
        cls = getattr(vsm_layout, name)
        assert len(fields) == len(cls._fields), name
        out.append(types.NamedTuple([sigutils._parse_signature_string(f.format(shadow=shadow)) for f in fields],
                                    cls))
    return out


def source_hash() -> int:
    """A 63-bit hash of the kernel's source files: the AOT module is current only if it holds this."""
    h = hashlib.sha256()
    here = Path(__file__).parent
    for name in SOURCES:
        h.update((here / name).read_bytes())
    return int.from_bytes(h.digest()[:8], "little") >> 1


def load() -> ModuleType | None:
    """The compiled module if it is built and current, else None (the numba kernel is used)."""
    try:
        from quiver.replay.mapping import _vsm_aot as aot  # type: ignore[attr-defined]
    except ImportError:
        return None
    return aot if aot.source_hash() == source_hash() else None


def kernel_names(shadow: np.dtype) -> tuple[str, str] | None:
    """Names of (apply_events, copy_split_blocks) compiled for this shadow type, if any."""
    suffix = SHADOW_TYPES.get(np.dtype(shadow))
    return (f"apply_events_{suffix}", f"copy_split_blocks_{suffix}") if suffix else None


def build(output_dir: Path | None = None) -> Path:
    """Compile the kernel for each type of SHADOW_TYPES into ``_vsm_aot`` next to this file."""
    from numba import types
    from numba.pycc import CC
    from quiver.replay.mapping import vsm_kernel as K

    cc = CC(MODULE)
    cc.output_dir = str(output_dir or Path(__file__).parent)
    cc.target_cpu = "host"
    cc.verbose = False
    digest = source_hash()
    cc.export("source_hash", "int64()")(lambda: digest)
    for dtype, suffix in SHADOW_TYPES.items():
        shadow = np.dtype(dtype).name
        cc.export(f"apply_events_{suffix}", types.void(*record_types(shadow)))(K.apply_events.py_func)
        cc.export(f"copy_split_blocks_{suffix}", f"void({shadow}[::1], {shadow}[::1], {I64}, {I64}, int64)")(
            K.copy_split_blocks.py_func)
    cc.compile()
    return Path(cc.output_dir) / cc.output_file


def main() -> int:
    # numba.pycc and distutils leave their build directories (temp.c, *_kernels) in the temp dir:
    # give them a private one and remove it
    scratch = tempfile.mkdtemp(prefix="quiver-aot-")
    os.environ["TMPDIR"] = tempfile.tempdir = scratch
    try:
        path = build()
    except Exception as e:  # noqa: BLE001 -- the numba kernel still works: say why and go on
        print(f"vsm_aot: not built ({type(e).__name__}: {e}); `trace analyze` will use numba", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"vsm_aot: built {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
