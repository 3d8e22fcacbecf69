"""verify maps each loaded file to its distribution through installed RECORDs, read as CSV."""

from __future__ import annotations

import os
from pathlib import Path

from slimwheel.verify import _installed_files


def test_quoted_record_paths_are_read_whole(tmp_path: Path) -> None:
    info = tmp_path / "odd_pkg-1.2.dist-info"
    info.mkdir()
    (info / "RECORD").write_text(
        '"odd_pkg/lib/libx,with,commas.so",sha256=abc,12\n'
        + "odd_pkg/__init__.py,sha256=def,0\n"
        + "odd_pkg-1.2.dist-info/RECORD,,\n"
    )
    owners, versions = _installed_files(tmp_path)
    assert versions == {"odd-pkg": "1.2"}
    assert owners[os.path.realpath(tmp_path / "odd_pkg/lib/libx,with,commas.so")] == "odd-pkg"
    assert owners[os.path.realpath(tmp_path / "odd_pkg/__init__.py")] == "odd-pkg"
    assert not any(path.endswith('"') or '"' in path for path in owners)
