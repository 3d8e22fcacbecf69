"""JSON nested deeper than Python's parser goes is bad input (one line, exit 2), never a traceback:
a manifest, a --catalog file, a saved plan for --expect, an index's JSON page."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from slimwheel.catalog.store import read_catalog
from slimwheel.errors import CatalogError, IndexUnavailableError
from slimwheel.index.simple import parse_json_page
from slimwheel.runtime.manifest import Manifest, ManifestError

DEEP = "[" * 100_000 + "]" * 100_000


def test_a_deep_manifest_is_a_manifest_error() -> None:
    with pytest.raises(ManifestError, match="nested too deeply"):
        Manifest.from_json(DEEP)


def test_a_deep_catalog_is_a_catalog_error(tmp_path: Path) -> None:
    path = tmp_path / "catalog.json.gz"
    path.write_bytes(gzip.compress(DEEP.encode()))
    with pytest.raises(CatalogError, match="unreadable catalog"):
        read_catalog(path)


def test_a_deep_index_page_is_an_index_error() -> None:
    with pytest.raises(IndexUnavailableError, match="malformed JSON project page"):
        parse_json_page(DEEP.encode(), "http://127.0.0.1:1/simple/x/", "http://127.0.0.1:1/simple/")


def test_a_deep_saved_plan_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from slimwheel.cli import main

    saved = tmp_path / "plan.json"
    saved.write_text(DEEP)
    assert main(["plan", "cudss", "--offline", "--expect", str(saved)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "cannot read the saved plan" in err
