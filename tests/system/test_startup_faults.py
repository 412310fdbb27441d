"""`kb serve` on a missing, truncated, corrupt or foreign index: one line naming the path and the fault, exit 2.

Each case is a real `kb serve` process with KB_DATA_DIR pointing at a data directory
prepared from a copy of the session's index, then damaged. None may print a traceback.
An index built from sources that have changed since is served, after a one-line warning.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from kb.settings import Settings
from tests.support.paths import ROOT
from tests.support.ports import free_port, wait_for_port

KB = Path(sys.executable).with_name("kb")


def serve(data_dir: Path, timeout: float = 60, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("KB_")}
    environment.update(KB_DATA_DIR=str(data_dir), **env)
    return subprocess.run(
        [str(KB), "serve", "--port", str(free_port())],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def copy_index(settings: Settings, data_dir: Path) -> Path:
    """A copy of the session's index build as `data_dir/index`; returns that directory."""
    index = data_dir / "index"
    shutil.copytree(settings.index_dir.resolve(), index)
    return index


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


def edit_meta(index: Path, **fields: object) -> None:
    meta = json.loads((index / "meta.json").read_text(encoding="utf-8"))
    (index / "meta.json").write_text(json.dumps({**meta, **fields}), encoding="utf-8")


def vectors_as_a_directory(index: Path) -> None:
    (index / "vectors.faiss").unlink()
    (index / "vectors.faiss").mkdir()


FAULTS: dict[str, tuple[Callable[[Path], None], str]] = {
    "no index directory": (lambda index: shutil.rmtree(index), "no index here yet; run `kb ingest`"),
    "an empty index directory": (
        lambda index: [p.unlink() for p in index.iterdir()],
        "meta.json is missing: not a kb index, or a truncated one",
    ),
    "meta.json truncated": (lambda index: truncate(index / "meta.json"), "meta.json is not a kb index manifest"),
    "vectors.faiss truncated": (
        lambda index: truncate(index / "vectors.faiss"),
        "vectors.faiss does not match its checksum in meta.json (corrupt)",
    ),
    "entries.jsonl with one bit flipped": (
        lambda index: flip_a_byte(index / "entries.jsonl"),
        "entries.jsonl does not match its checksum in meta.json (corrupt)",
    ),
    "entries.jsonl missing": (lambda index: (index / "entries.jsonl").unlink(), "entries.jsonl is missing"),
    "a foreign meta.json": (
        lambda index: (index / "meta.json").write_text('{"name": "some-other-tool", "version": 3}'),
        "meta.json is not a kb index manifest",
    ),
    "a meta.json with fields of the wrong type": (
        lambda index: edit_meta(index, format_version="1"),
        "meta.json: format_version is '1', expected int",
    ),
    "a built_at of the wrong type": (lambda index: edit_meta(index, built_at=1732181400), "built_at is 1732181400"),
    "a built_at that is not a time": (
        lambda index: edit_meta(index, built_at="last tuesday"),
        "built_at is 'last tuesday', expected an ISO-8601 time",
    ),
    "checksums as a list": (lambda index: edit_meta(index, checksums=[]), "checksums is [], expected dict"),
    "a newer format": (lambda index: edit_meta(index, format_version=99), "format version 99 is newer than this kb"),
    "an index built by another model": (
        lambda index: edit_meta(index, model="some/other-model"),
        "built with model 'some/other-model'",
    ),
    "a directory where a file belongs": (vectors_as_a_directory, "cannot be read (IsADirectoryError: "),
}


@pytest.mark.slow
@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_broken_index_stops_serve_with_one_line(settings: Settings, tmp_path: Path, fault: str) -> None:
    damage, problem = FAULTS[fault]
    data = tmp_path / "data"
    index = copy_index(settings, data)
    damage(index)
    run = serve(data)
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith(f"kb: error: index {index}: ")
    assert problem in lines[0]


@pytest.mark.slow
def test_a_data_directory_that_is_a_file_is_named(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.write_text("not a directory")
    run = serve(data)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.strip() == f"kb: error: index {data / 'index'}: no index here yet; run `kb ingest`"


@pytest.mark.slow
def test_a_stale_index_is_served_with_a_warning(settings: Settings, tmp_path: Path) -> None:
    data = tmp_path / "data"
    copy_index(settings, data)
    sources = tmp_path / "sources"
    shutil.copytree(settings.sources_dir, sources)
    (sources / "slime.md").write_text((sources / "slime.md").read_text(encoding="utf-8") + "\n\nOne more line.\n")
    environment = {k: v for k, v in os.environ.items() if not k.startswith("KB_")}
    environment.update(KB_DATA_DIR=str(data), KB_SOURCES_DIR=str(sources))
    port = free_port()
    process = subprocess.Popen(
        [str(KB), "serve", "--port", str(port)],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_for_port(port, process), "the server did not start"
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=30)
    warnings = [line for line in stderr.splitlines() if line.startswith("kb: ")]
    assert warnings == [
        f"kb: warning: {data / 'index'} was built from other sources than {sources}; "
        "serving it anyway; run `kb ingest` to rebuild it"
    ]
    assert "Traceback" not in stderr
