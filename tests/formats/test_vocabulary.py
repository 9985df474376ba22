"""One vocabulary: the codes the native tracers write are the codes formats/schema.py declares, the
raw record layout of qv_raw.h is the one finalize reads (tracer/rawread.RAW_DTYPE), and the entry
points the pass plugin calls are listed once (qv_entry_points.inc) for both tracers and the pass.

The C headers are parsed (enums, #defines, the qv_event_t struct) and every constant is compared
with its declaration in Python, so a code changed or added on one side only fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from quiver.formats import (
    AccessFlag,
    AllocKind,
    ConstructKind,
    EventKind,
    MessageKind,
    MpiSyncKind,
    RmaOp,
    SyncKind,
    WinFlavor,
)
from quiver.formats.names import ALLOC_NAMES, CONSTRUCT_NAMES, CONSTRUCT_NAMES_BY_KEY
from quiver.tracer import rawread
from quiver.tracer.record import INSTRUMENTED_MARKERS

NATIVE = Path(__file__).resolve().parents[2] / "tracer" / "native"


def c_constants(*files: str) -> dict[str, int]:
    """Every enumerator (implicit values counted on) and every integer #define of the files."""
    out: dict[str, int] = {}
    for name in files:
        text = re.sub(r"/\*.*?\*/|//[^\n]*", "", (NATIVE / name).read_text(), flags=re.DOTALL)
        for body in re.findall(r"\benum\s*\w*\s*\{(.*?)\}", text, flags=re.DOTALL):
            value = -1
            for item in filter(None, (x.strip() for x in body.split(","))):
                ident, _, expr = item.partition("=")
                value = int(expr.strip(), 0) if expr.strip() else value + 1
                out[ident.strip()] = value
        for ident, expr in re.findall(r"^#define\s+(\w+)\s+(0x[0-9a-fA-F]+|\d+)\s*$", text, flags=re.MULTILINE):
            out[ident] = int(expr, 0)
    return out


# (C prefix, file(s), Python enum, C suffix -> enum member name where they differ)
TABLES = [
    ("QV_K_", ("qv_omp_int.h",), EventKind, {}),
    ("QVM_K_", ("mpi/qv_mpi_int.h",), EventKind, {}),
    ("QV_C_", ("qv_omp_int.h",), ConstructKind,
     {"DATA": "TARGET_DATA", "ENTER": "TARGET_ENTER_DATA", "EXIT": "TARGET_EXIT_DATA", "UPDATE": "TARGET_UPDATE",
      "DATA_END": "TARGET_DATA_END"}),
    ("QV_ALLOC_", ("qv_omp_int.h",), AllocKind, {}),
    ("QV_S_", ("qv_omp_int.h",), SyncKind, {}),
    ("QV_A_", ("qv_omp_int.h",), AccessFlag, {}),
    ("RMA_", ("mpi/qv_mpi.c",), RmaOp,
     {"ACC": "ACCUMULATE", "GET_ACC": "GET_ACCUMULATE", "FOP": "FETCH_AND_OP", "CAS": "COMPARE_AND_SWAP",
      "RACC": "RACCUMULATE", "RGET_ACC": "RGET_ACCUMULATE"}),
    ("S_", ("mpi/qv_mpi.c",), MpiSyncKind, {}),
    ("M_", ("mpi/qv_mpi.c",), MessageKind, {"COLL": "COLLECTIVE"}),
    ("FL_", ("mpi/qv_mpi.c",), WinFlavor, {}),
]


@pytest.mark.parametrize(("prefix", "files", "enum", "renames"), TABLES, ids=[t[0] for t in TABLES])
def test_native_codes_are_the_schema_codes(prefix, files, enum, renames):
    consts = {k[len(prefix):]: v for k, v in c_constants(*files).items() if k.startswith(prefix)}
    assert consts, f"no {prefix}* constants in {files}"
    for suffix, value in consts.items():
        member = renames.get(suffix, suffix)
        assert member in enum.__members__, f"{prefix}{suffix} has no {enum.__name__} member"
        assert enum[member] == value, f"{prefix}{suffix} = {value}, {enum.__name__}.{member} = {int(enum[member])}"


def test_every_alloc_and_construct_kind_is_written_natively_and_named_once():
    omp = c_constants("qv_omp_int.h")
    native_allocs = {v for k, v in omp.items() if k.startswith("QV_ALLOC_")}
    # GLOBAL and STACK rows are written by finalize (tracer/finalize.py), not by the C library
    assert native_allocs | {AllocKind.GLOBAL, AllocKind.STACK} == set(AllocKind)
    assert {v for k, v in omp.items() if k.startswith("QV_C_")} == set(ConstructKind)
    assert set(ALLOC_NAMES) == set(AllocKind) and set(CONSTRUCT_NAMES) == set(ConstructKind)
    assert set(CONSTRUCT_NAMES_BY_KEY) == {k.name.lower() for k in ConstructKind}


def test_raw_flags_agree():
    c = c_constants("qv_raw.h")
    py = {n: getattr(rawread, n) for n in dir(rawread) if re.fullmatch(r"F_[A-Z0-9_]+", n)}
    assert {f"QV_{n}": v for n, v in py.items()} == {k: v for k, v in c.items() if k.startswith("QV_F_")}
    assert c_constants("mpi/qv_mpi_int.h").get("QV_F_NAME_INT", c["QV_F_NAME_INT"]) == c["QV_F_NAME_INT"]


C_TYPES = {"int64_t": "<i8", "uint64_t": "<u8", "int32_t": "<i4", "int16_t": "<i2"}


def test_raw_record_layout_is_the_header_struct():
    text = re.sub(r"/\*.*?\*/", "", (NATIVE / "qv_raw.h").read_text(), flags=re.DOTALL)
    body = re.search(r"typedef struct qv_event \{(.*?)\} qv_event_t;", text, flags=re.DOTALL).group(1)
    fields = [(name, C_TYPES[ctype]) for ctype, name in re.findall(r"(\w+)\s+(\w+);", body)]
    assert np.dtype(fields) == rawread.RAW_DTYPE
    assert rawread.RAW_DTYPE.itemsize == c_constants("qv_raw.h")["QV_EVENT_SIZE"]


def test_format_md_states_the_current_version():
    from quiver.formats.schema import FORMAT_VERSION

    doc = (Path(__file__).resolve().parents[2] / "formats" / "FORMAT.md").read_text()
    assert doc.splitlines()[0] == f"# The quiver event log, format version {FORMAT_VERSION}"


def entry_points() -> dict[str, str]:
    """``QV_ENTRY(name, write, shape, params)`` and ``QV_COV(kind, bytes, type, write)`` lines of
    qv_entry_points.inc: C name -> parameter list."""
    text = re.sub(r"/\*.*?\*/", "", (NATIVE / "qv_entry_points.inc").read_text(), flags=re.DOTALL)
    out = {f"__quiver_{name}": params for name, params in re.findall(r"QV_ENTRY\((\w+), -?\d, \w+, (\(.*?\))\)", text)}
    out |= {f"__sanitizer_cov_{kind}{n}": f"({ctype} *p)"
            for kind, n, ctype in re.findall(r"QV_COV\((load|store), (\d+), (\w+), \d\)", text)}
    return out


def test_entry_points_are_declared_once_for_both_tracers_and_the_pass():
    entries = entry_points()
    assert len(entries) == 25 and "__quiver_range_load_c" in entries and "__sanitizer_cov_store16" in entries
    assert all(re.fullmatch(r"\(void \*p(, size_t \w+)*(, struct qv_site \*c)?\)|\(\w+ \*p\)", p) for p in entries.values())
    # the coalescer both tracers include defines every entry from the list; neither tracer spells one
    coalescer = (NATIVE / "qv_coalesce.inc").read_text()
    assert '#include "qv_entry_points.inc"' in coalescer and "#define QV_ENTRY(" in coalescer
    for tracer, include in (("qv_access.c", '"qv_coalesce.inc"'), ("mpi/qv_mpi_access.c", '"../qv_coalesce.inc"')):
        text = (NATIVE / tracer).read_text()
        assert f"#include {include}" in text
        assert not re.findall(r"void (__quiver_\w+|__sanitizer_cov_(?:load|store)\d+)\(", text), tracer
    # the pass names entries through the list only
    pass_src = (NATIVE / "pass" / "quiver_range.cpp").read_text()
    assert '#include "../qv_entry_points.inc"' in pass_src
    assert not re.findall(r'"__quiver_(?:range|block|atomic)\w*"', pass_src)
    # what Python looks for in a binary is a name of the list
    for marker in INSTRUMENTED_MARKERS:
        assert any(name.startswith(marker.decode()) for name in entries), marker


def test_entry_desc_bits_are_stated_once():
    bits = c_constants("qv_entry.h")
    # (and the words of a conditional access's call-site bitmap, which the pass's code and the tracer share, and
    # where its pitch sits)
    assert bits == {"QV_DESC_WIDTH": 0xFF, "QV_DESC_INDEXED": 0x100, "QV_RANGE_OF": 0x200, "QV_DESC_MAYBE": 0x400,
                    "QV_DESC_PITCH_SHIFT": 16, "QV_MASK_WORDS": 8}
    for name in ("qv_coalesce.h", "qv_coalesce.inc", "qv_access.c", "mpi/qv_mpi_access.c", "pass/quiver_range.cpp"):
        text = re.sub(r"/\*.*?\*/|//[^\n]*", "", (NATIVE / name).read_text(), flags=re.DOTALL)
        assert not re.findall(r"#define QV_(DESC_\w+|RANGE_OF|MASK_WORDS)\b|0x[124]00\b", text), name
