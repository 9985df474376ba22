"""The ctypes records of vsm_native state vsm_kernel.h's structs field for field.

Why: the two are written by hand in two languages; a field added, dropped or moved on one side only
would make the kernel read the wrong array without any error.
"""

from __future__ import annotations

import ctypes
import re
from pathlib import Path

import pytest
from quiver.replay.mapping import vsm_native

HEADER = Path(vsm_native.__file__).with_name("vsm_kernel.h")
RECORDS = {"qv_columns": "Columns", "qv_selection": "Selection", "qv_tables": "Tables", "qv_state": "State",
           "qv_watch": "Watch"}


def header_structs() -> dict[str, list[tuple[str, bool]]]:
    """struct name -> [(field, is_pointer)] from the header, comments removed."""
    text = re.sub(r"/\*.*?\*/", "", HEADER.read_text(), flags=re.DOTALL)
    out = {}
    for body, name in re.findall(r"typedef struct \{(.*?)\}\s*(\w+);", text, flags=re.DOTALL):
        fields = []
        for decl in filter(None, (d.strip() for d in body.split(";"))):
            m = re.fullmatch(r"(?:const\s+)?\w+\s*(\*?)\s*(\w+)", decl)
            assert m, f"{name}: cannot read {decl!r}"
            fields.append((m.group(2), bool(m.group(1))))
        out[name] = fields
    return out


def test_the_header_has_the_five_records():
    assert set(header_structs()) == set(RECORDS)


@pytest.mark.parametrize("struct", sorted(RECORDS))
def test_ctypes_record_matches_the_header(struct):
    cls = getattr(vsm_native, RECORDS[struct])
    ours = [(name, typ is ctypes.c_void_p) for name, typ in cls._fields_]
    assert ours == header_structs()[struct]
    assert all(typ in (ctypes.c_void_p, ctypes.c_int64) for _, typ in cls._fields_)
