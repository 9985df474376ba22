"""Compressed batches name the columns that hold one value (integrity.META_CONSTANT); readers give that
value without decompressing the column, checked against its checksum. On real recorded logs: the same
batches as pyarrow's own decoding, the same reports as without the hint; a wrong hint is a damaged
batch (one line, exit 2), a damaged hint is ignored, and `trace info --verify` still reads every byte."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from quiver.formats import addr_delta, integrity, read_log, write_log
from quiver.formats.schema import COLUMN_DTYPES, COLUMN_NAMES
from quiver.formats.writer import LogWriter, batch_from_columns

pytestmark = pytest.mark.clang

TRACE = str(Path(sys.executable).with_name("trace"))
PROGRAMS = ("omp/map_loop.c", "omp/seed000_fig2.c", "omp/seed000_fig6_swap.c")
VSM_READ = ["rank", "kind", "device", "addr", "addr2", "size", "op", "aux2"]


@pytest.fixture(scope="module")
def logs(tmp_path_factory, omp_build) -> list[tuple[Path, Path]]:
    """(recorded log, the same events rewritten zstd-compressed in batches of 1000 rows) per program."""
    out = []
    for src in PROGRAMS:
        d = tmp_path_factory.mktemp("constant")
        log = d / (Path(src).stem + ".arrow")
        r = subprocess.run([TRACE, "record", "-o", str(log), "--", str(omp_build(src))], capture_output=True,
                           text=True, cwd=d, check=False)
        assert log.exists(), r.stderr
        out.append((log, _rewrite(log, d / (Path(src).stem + ".zstd.arrow"))))
    return out


def _rewrite(src: Path, dst: Path, compression: str | None = "zstd", rows: int = 1000) -> Path:
    log = read_log(src)
    cols = log.columns()
    n = len(cols["kind"])
    chunks = [{k: v[s:s + rows] for k, v in cols.items()} for s in range(0, n, rows)]
    return write_log(dst, chunks, strings=log.strings, locations=_locations(log), run=log.run,
                     compression=compression)


def _locations(log) -> list[tuple[str, int, int, str]]:
    return [(x.file, x.line, x.column, x.function) for x in log.locations]


def _pyarrow_batches(path: Path) -> list[tuple[dict[str, np.ndarray], dict[bytes, bytes]]]:
    """Every batch as pyarrow decodes it (absolute addresses), with its custom metadata."""
    from pyarrow import ipc

    f = ipc.open_file(str(path))
    out = []
    for i in range(f.num_record_batches):
        b = f.get_batch_with_custom_metadata(i)
        cols = {n: b.batch.column(n).to_numpy() for n in COLUMN_NAMES}
        cols["addr"] = addr_delta.decode(cols["addr"])
        out.append((cols, dict(b.custom_metadata)))
    return out


def test_the_hint_names_exactly_the_constant_columns_and_reads_as_pyarrow(logs):
    hinted = 0
    for _, path in logs:
        truth = _pyarrow_batches(path)
        assert len(truth) > 1 or len(truth[0][0]["kind"]) < 1000
        for hints in (True, False):
            log = read_log(path)
            log.hints = hints
            for i, (cols, meta) in enumerate(truth):
                same = {n for n in COLUMN_NAMES if (cols[n] == cols[n][0]).all()}
                hint = integrity.constants(meta, COLUMN_DTYPES)
                assert set(hint) == same and all(hint[n] == int(cols[n][0]) for n in same)
                assert "rank" in same    # one process
                hinted += len(hint)
                for names in (None, VSM_READ, ["loc", "id", "aux"], ["kind"], ["rank", "aux2"]):
                    got = log.batch(i, names)
                    assert list(got) == (names if names is not None else COLUMN_NAMES)
                    for n, values in got.items():
                        assert values.dtype == COLUMN_DTYPES[n]
                        np.testing.assert_array_equal(values, cols[n])
            np.testing.assert_array_equal(log.col("addr"), np.concatenate([c["addr"] for c, _ in truth]))
    assert hinted > 20


def test_uncompressed_logs_carry_no_hint(logs, tmp_path):
    plain = _rewrite(logs[0][0], tmp_path / "plain.arrow", compression=None)
    assert all(integrity.META_CONSTANT not in meta for _, meta in _pyarrow_batches(plain))
    assert read_log(plain)._plain is not None


def _analyze(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([TRACE, "analyze", "--format", "json", str(path)], capture_output=True, text=True,
                          check=False)


def _findings(r: subprocess.CompletedProcess) -> list:
    return json.loads(r.stdout)["findings"]


def test_reports_are_the_same_with_and_without_the_hint(logs, tmp_path):
    for recorded, hinted in logs:
        plain = _rewrite(recorded, tmp_path / f"{recorded.stem}.plain.arrow", compression=None)
        a, b = _analyze(hinted), _analyze(plain)
        assert a.returncode == b.returncode and a.stderr == b.stderr
        assert _findings(a) == _findings(b)
    assert {f["kind"] for f in _findings(_analyze(logs[1][1]))} >= {"use-of-stale-data"}


def _write_crafted(src: Path, dst: Path, edit) -> Path:
    """``src``'s events as one compressed batch whose metadata ``edit(meta, columns)`` changed (or whose
    stored columns it changed after the metadata was computed)."""
    log = read_log(src)
    cols = {n: np.array(v) for n, v in log.columns().items()}
    with LogWriter(dst, strings=log.strings, locations=_locations(log), run=log.run) as w:
        meta = integrity.batch_metadata(cols, COLUMN_NAMES)
        edit(meta, cols)
        cols["addr"] = addr_delta.encode(cols["addr"])
        w._writer.write_batch(batch_from_columns(cols, w.schema), custom_metadata=meta)
        w.rows = len(cols["kind"])
    return dst


def _set_hint(meta: dict, **values: int) -> None:
    hint = json.loads(meta[integrity.META_CONSTANT])
    hint.update(values)
    meta[integrity.META_CONSTANT] = json.dumps(hint).encode()


def test_a_wrong_hint_is_a_damaged_batch(logs, tmp_path):
    path = _write_crafted(logs[0][0], tmp_path / "wrong.arrow", lambda meta, cols: _set_hint(meta, rank=1))
    r = _analyze(path)
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"trace: error: {path}: damaged log (batch 0): column 'rank' does not match its "
                               "checksum; its events are lost: ranks 0, threads ")


def test_a_hint_for_a_varying_column_is_a_damaged_batch(logs, tmp_path):
    path = _write_crafted(logs[0][0], tmp_path / "varying.arrow", lambda meta, cols: _set_hint(meta, kind=50))
    r = _analyze(path)
    assert r.returncode == 2
    assert "damaged log (batch 0): column 'kind' does not match its checksum" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("hint", [b"{", b"[1]", b'{"rank": "0"}', b'{"nope": 0}', b'{"rank": -1.5}',
                                  b'{"aux2": 99999999999999999999}'])
def test_a_damaged_hint_is_ignored(logs, tmp_path, hint):
    def edit(meta, cols):
        meta[integrity.META_CONSTANT] = hint

    path = _write_crafted(logs[0][0], tmp_path / "odd.arrow", edit)
    a, b = _analyze(path), _analyze(logs[0][1])
    assert a.returncode == b.returncode and a.stderr == b.stderr and _findings(a) == _findings(b)


def test_damage_in_a_hinted_column_is_found_by_verify_only(logs, tmp_path):
    """The stored bytes of a column the hint covers are not read by the checkers (their values are the
    hint's, which the checksum vouches for); `trace info --verify` reads them and names the damage."""
    def edit(meta, cols):
        cols["rank"][3] = 1   # stored differently from what the hint and checksum say

    path = _write_crafted(logs[0][0], tmp_path / "stored.arrow", edit)
    a, b = _analyze(path), _analyze(logs[0][1])
    assert a.returncode == b.returncode and _findings(a) == _findings(b)
    info = subprocess.run([TRACE, "info", "--verify", str(path)], capture_output=True, text=True, check=False)
    assert info.returncode == 2
    assert "DAMAGED: " in info.stdout + info.stderr and "column 'rank' does not match its checksum" in info.stdout + info.stderr
