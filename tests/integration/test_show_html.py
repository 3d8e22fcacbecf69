"""``slimwheel show --html``: one self-contained page with a size map of the wheel before and after
repair. The page is read back structurally (every rectangle's area against the bytes of the JSON
report, the titles, nothing that could fetch, one document with an SVG), and opened in a real headless
Chromium (rendered areas, the requests it makes: none)."""

from __future__ import annotations

import html
import json
import random
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from slimwheel.cli import main
from slimwheel.html_report import MAP_HEIGHT, MAP_WIDTH, Box, squarify
from slimwheel.report import human_size
from tests.support.elfbuild import patchelf
from tests.support.fixtures_elf import ElfZoo
from tests.support.solver import SOLVER_INIT
from tests.support.wheels import make_wheel

TAG = "py3-none-manylinux_2_17_x86_64"
COPY = "solver.libs/libcudss-1a2b3c4d.so.1.0.0"
STATIC = "solver/_static_solver.so"


@dataclass
class _Element:
    tag: str
    attrs: dict[str, str]
    title: str = ""


@dataclass
class _Page(HTMLParser):
    """Every element with its attributes, each rect's <title> text, and every <style> text."""

    elements: list[_Element] = field(default_factory=list)
    styles: list[str] = field(default_factory=list)
    _open: list[_Element] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(convert_charrefs=True)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = _Element(tag, {k: v or "" for k, v in attrs})
        self.elements.append(element)
        self._open.append(element)

    def handle_endtag(self, tag: str) -> None:
        while self._open:
            if self._open.pop().tag == tag:
                break

    def handle_data(self, data: str) -> None:
        if not self._open:
            return
        if self._open[-1].tag == "title" and len(self._open) > 1 and self._open[-2].tag == "rect":
            self._open[-2].title += data
        if self._open[-1].tag == "style":
            self.styles.append(data)

    def tags(self, tag: str) -> list[_Element]:
        return [e for e in self.elements if e.tag == tag]

    def rects(self, map_name: str) -> list[_Element]:
        return [e for e in self.tags("rect") if e.attrs.get("data-map") == map_name]


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    page.close()
    return page


@pytest.fixture
def html_wheel(elf_zoo: ElfZoo, tmp_path: Path) -> Path:
    """solver with auditwheel's copy of libcudss, cuDSS code linked statically into a second extension,
    and a third that needs TensorRT's libnvinfer.so.10 (which no catalog lists)."""
    trt = tmp_path / "_trt.so"
    shutil.copyfile(elf_zoo.ext_dynamic, trt)
    patchelf(trt, "--add-needed", "libnvinfer.so.10")
    (tmp_path / "dist").mkdir()
    return make_wheel(
        tmp_path / "dist",
        "solver",
        "1.0",
        {
            "solver/_solver.so": elf_zoo.ext_auditwheel.read_bytes(),
            COPY: elf_zoo.auditwheel_copy.read_bytes(),
            STATIC: elf_zoo.ext_static.read_bytes(),
            "solver/_trt.so": trt.read_bytes(),
            "solver/__init__.py": SOLVER_INIT,
        },
        tag=TAG,
    )


def _show_html(
    wheel: Path, page: Path, catalog: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[dict[str, Any], _Page]:
    assert main(["show", str(wheel), "--catalog", str(catalog), "--json", "--html", str(page)]) in (0, 1)
    document = json.loads(capsys.readouterr().out)
    (report,) = document["wheels"]
    return report, _parse(page)


def _area(rect: _Element) -> float:
    return float(rect.attrs["width"]) * float(rect.attrs["height"])


def _tolerance(rect: _Element) -> float:
    # Coordinates are written to 4 decimals: each of x, y, width, height is off by at most 5e-5.
    return (float(rect.attrs["width"]) + float(rect.attrs["height"]) + 1) * 1e-4


def test_every_area_is_its_bytes_in_the_json_report(
    html_wheel: Path, provider_catalog_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report, page = _show_html(html_wheel, tmp_path / "page.html", provider_catalog_file, capsys)
    (svg,) = page.tags("svg")
    assert int(svg.attrs["data-bytes-before"]) == report["size"]
    scale = MAP_WIDTH * MAP_HEIGHT / report["size"]  # units of area per byte, on both maps
    before = {r.attrs["data-key"]: r for r in page.rects("before")}
    after = {r.attrs["data-key"]: r for r in page.rects("after")}
    for rect in [*before.values(), *after.values()]:
        assert abs(_area(rect) - int(rect.attrs["data-bytes"]) * scale) <= _tolerance(rect), rect
    # The bytes are the report's: a copy's compressed size; a file's own code and its static NVIDIA
    # code add up to the file's compressed size; the rest of the wheel is one block.
    copies = {copy["path"]: copy for copy in report["vendored"]}
    assert int(before[f"copy:{COPY}"].attrs["data-bytes"]) == copies[COPY]["compressed_size"]
    for elf in report["elf_files"]:
        if elf["path"] in copies:
            continue
        parts = [
            r
            for k, r in before.items()
            if k == f"own:{elf['path']}" or k.startswith(f"static:{elf['path']}:")
        ]
        assert sum(int(r.attrs["data-bytes"]) for r in parts) == elf["compressed_size"]
    assert sum(int(r.attrs["data-bytes"]) for r in before.values()) == report["size"]
    assert sum(_area(r) for r in before.values()) == pytest.approx(MAP_WIDTH * MAP_HEIGHT, rel=1e-5)
    # After: the dropped copy is gone, at the same scale; the wheel shrinks as show projects it.
    assert f"copy:{COPY}" not in after
    size_after = int(svg.attrs["data-bytes-after"])
    assert size_after == report["projected_size"]
    assert sum(int(r.attrs["data-bytes"]) for r in after.values()) == size_after
    assert sum(_area(r) for r in after.values()) == pytest.approx(size_after * scale, rel=1e-5)
    # The copy becomes a dependency; the static cuDSS code stays.
    assert before[f"copy:{COPY}"].attrs["data-fate"] == "dependency"
    static_keys = [k for k in before if k.startswith(f"static:{STATIC}:")]
    assert static_keys
    assert all(before[k].attrs["data-fate"] == "nvidia-stays" for k in static_keys)
    assert all(k in after for k in static_keys)


def test_rects_tile_their_map_without_overlap(
    html_wheel: Path, provider_catalog_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, page = _show_html(html_wheel, tmp_path / "page.html", provider_catalog_file, capsys)
    for name in ("before", "after"):
        boxes = [
            Box(*(float(r.attrs[k]) for k in ("x", "y", "width", "height")))
            for r in page.rects(name)
            if _area(r) > 0
        ]
        for index, one in enumerate(boxes):
            for other in boxes[index + 1 :]:
                overlap_w = min(one.x + one.w, other.x + other.w) - max(one.x, other.x)
                overlap_h = min(one.y + one.h, other.y + other.h) - max(one.y, other.y)
                assert overlap_w <= 1e-3 or overlap_h <= 1e-3, (one, other)


def test_every_copy_and_static_block_is_named_with_its_size(
    html_wheel: Path, provider_catalog_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report, page = _show_html(html_wheel, tmp_path / "page.html", provider_catalog_file, capsys)
    titles = {r.attrs["data-key"]: r.title for r in page.rects("before")}
    for copy in report["vendored"]:
        title = titles[f"copy:{copy['path']}"]
        assert copy["path"] in title
        assert human_size(copy["compressed_size"]) in title
        assert copy["original_soname"] in title
    assert report["static"]
    for code in report["static"]:
        title = titles[f"static:{code['path']}:{code['library']}"]
        assert code["path"] in title
        assert code["library"] in title
        assert human_size(code["symbol_bytes"]) in title
    # And show's tables, as HTML tables: every file, copy and finding.
    text = (tmp_path / "page.html").read_text(encoding="utf-8")
    cells = {e.attrs.get("class") for e in page.tags("td")}
    assert "f" in cells
    for elf in report["elf_files"]:
        assert f'<td class="f">{elf["path"]}</td>' in text
    assert "libnvinfer.so.10" in text
    assert "NVIDIA&#x27;s TensorRT" in text


_URL_ATTRIBUTES = {"src", "href", "xlink:href", "action", "data", "poster", "srcset", "background"}


def test_the_page_fetches_nothing_and_is_one_document(
    html_wheel: Path, provider_catalog_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, page = _show_html(html_wheel, tmp_path / "page.html", provider_catalog_file, capsys)
    text = (tmp_path / "page.html").read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert len(page.tags("html")) == 1
    assert len(page.tags("head")) == 1
    assert len(page.tags("body")) == 1
    (svg,) = page.tags("svg")
    # html.parser lowers attribute names; the page spells it viewBox, as SVG wants.
    assert re.fullmatch(r"0 0 [0-9.]+ [0-9.]+", svg.attrs["viewbox"])
    assert ' viewBox="0 0 ' in text
    # Nothing that loads: no script, stylesheet link, image, frame, object, font.
    for tag in ("script", "link", "img", "iframe", "object", "embed", "image", "use", "base"):
        assert not page.tags(tag), tag
    for element in page.elements:
        for name, value in element.attrs.items():
            if name in _URL_ATTRIBUTES or name.endswith(":href"):
                pytest.fail(f"<{element.tag} {name}={value!r}>")
            assert "url(" not in value
    css = "\n".join(page.styles) + " ".join(e.attrs.get("style", "") for e in page.elements)
    assert "url(" not in css
    assert "@import" not in css
    assert "@font-face" not in css
    assert "http://" not in text
    assert "https://" not in text
    # The browser is told so too: nothing may be fetched at view time.
    (csp,) = [m for m in page.tags("meta") if m.attrs.get("http-equiv") == "Content-Security-Policy"]
    assert "default-src 'none'" in csp.attrs["content"]


def test_the_after_map_comes_from_repairs_plan(
    html_wheel: Path, provider_catalog_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _show_html(html_wheel, tmp_path / "page.html", provider_catalog_file, capsys)
    text = (tmp_path / "page.html").read_text(encoding="utf-8")
    assert "After: repair&#x27;s plan" in text
    assert "nvidia-cudss-cu13" in text  # the Requires-Dist repair would add


def test_a_single_elf_file_gets_the_reports_projection(
    elf_zoo: ElfZoo, provider_catalog_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "page.html"
    assert main(
        ["show", str(elf_zoo.ext_static), "--catalog", str(provider_catalog_file), "--html", str(page)]
    ) in (
        0,
        1,
    )
    out = capsys.readouterr().out
    assert "ELF files" in out  # the tables still go to stdout
    text = page.read_text(encoding="utf-8")
    assert "the report&#x27;s projection" in text
    assert _parse(page).rects("before")


@pytest.mark.parametrize("tag", ["py3-none-any", "cp312-cp312-win_amd64"])
def test_a_wheel_check_cannot_place_gets_a_page_that_says_so(
    tag: str, provider_catalog_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pure wheel (holoscan 5.0.0) or a Windows one (torchvision's win_amd64): show said what it
    holds, but --html ended in exit 2, passing on check's advice of --platform, which show has not."""
    wheel = make_wheel(tmp_path, "meta", "1.0", {"meta/__init__.py": b""}, tag=tag)
    page = tmp_path / "page.html"
    assert main(["show", str(wheel), "--catalog", str(provider_catalog_file), "--html", str(page)]) == 0
    capsys.readouterr()
    text = html.unescape(page.read_text(encoding="utf-8"))
    tags = tag.rsplit("-", 1)[1]
    assert (
        f"check was not run: it simulates glibc's loader on one Linux platform, which this wheel's "
        f"platform tags ({tags}) and ELF files do not name; `slimwheel check --platform "
        "manylinux_x86_64` checks it as a Linux wheel"
    ) in text


def test_html_with_json_keeps_stdout_json_and_leaves_no_temporary(
    html_wheel: Path, provider_catalog_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "pages"
    out_dir.mkdir()
    report, _ = _show_html(html_wheel, out_dir / "page.html", provider_catalog_file, capsys)
    assert report["filename"] == html_wheel.name
    assert sorted(p.name for p in out_dir.iterdir()) == ["page.html"]
    # Written again over the old page: replaced whole.
    _show_html(html_wheel, out_dir / "page.html", provider_catalog_file, capsys)
    assert sorted(p.name for p in out_dir.iterdir()) == ["page.html"]


@pytest.mark.parametrize("where", ["missing-folder", "a-folder"])
def test_a_bad_page_path_is_one_line_and_exit_2(
    where: str,
    html_wheel: Path,
    provider_catalog_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    target = tmp_path / "nowhere" / "page.html" if where == "missing-folder" else tmp_path
    code = main(["show", str(html_wheel), "--catalog", str(provider_catalog_file), "--html", str(target)])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""  # refused before the analysis
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert "--html" in lines[0]


def _check_rows_of(document: dict[str, Any]) -> list[dict[str, str]]:
    """check's JSON lookups as the page's rows: one per lookup, the needs only the system provides
    counted in one row per file, a file that needs nothing (or failed to read) one empty row."""
    rows: list[dict[str, str]] = []
    for file in document["files"]:
        mine = []
        system = 0
        for needed in file["needed"]:
            if all(lookup["resolution"] == "system" for lookup in needed["lookups"]):
                system += 1
                continue
            for lookup in needed["lookups"]:
                mine.append(
                    {
                        "file": file["installed_path"],
                        "soname": needed["soname"],
                        "resolution": lookup["resolution"],
                        "path": lookup["path"] or "",
                        "distribution": lookup["distribution"] or "",
                        "system": "0",
                    }
                )
        if system:
            mine.append(
                {"file": file["installed_path"], "soname": "", "resolution": "system", "path": "",
                 "distribution": "", "system": str(system)}
            )  # fmt: skip
        if not mine:
            mine.append(
                {"file": file["installed_path"], "soname": "", "resolution": "", "path": "",
                 "distribution": "", "system": "0"}
            )  # fmt: skip
        rows += mine
    return rows


def test_the_page_has_checks_lookups_and_findings_as_check_json_reports_them(
    html_wheel: Path, provider_catalog_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, page = _show_html(html_wheel, tmp_path / "page.html", provider_catalog_file, capsys)
    code = main(["check", str(html_wheel), "--catalog", str(provider_catalog_file), "--json"])
    (check,) = json.loads(capsys.readouterr().out)["wheels"]
    assert code == 1  # the vendored copy is an error: the page must say so too
    rows = [e.attrs for e in page.tags("tr") if e.attrs.get("data-check") == "lookup"]
    keys = ("file", "soname", "resolution", "path", "distribution", "system")
    assert [{k: row[f"data-{k}"] for k in keys} for row in rows] == _check_rows_of(check)
    # Every kind of answer the fixture has is on the page: in the wheel, the vendored copy, not found.
    resolutions = {row["data-resolution"] for row in rows}
    assert {"vendored", "unresolved", "system"} <= resolutions, resolutions
    assert any(row["data-soname"] == "libnvinfer.so.10" for row in rows)
    findings = [e.attrs for e in page.tags("tr") if e.attrs.get("data-check") == "finding"]
    assert [(f["data-kind"], f["data-severity"]) for f in findings] == [
        (f["kind"], f["severity"]) for f in check["findings"]
    ]
    (verdict,) = [e.attrs for e in page.tags("p") if e.attrs.get("class") == "verdict"]
    errors = sum(1 for f in check["findings"] if f["severity"] == "error")
    warnings = sum(1 for f in check["findings"] if f["severity"] == "warning")
    assert (verdict["data-verdict"], verdict["data-errors"], verdict["data-warnings"]) == (
        "fails",
        str(errors),
        str(warnings),
    )
    text = (tmp_path / "page.html").read_text(encoding="utf-8")
    for finding in check["findings"]:
        assert html.escape(finding["message"], quote=True) in text


# -- the layout --------------------------------------------------------------------------------------


def _values() -> Iterator[list[float]]:
    generator = random.Random(15)
    yield [1.0]
    yield [5.0, 0.0, 3.0]
    yield [1e9, 1.0, 2.0, 3e6]
    for _ in range(20):
        yield [
            generator.choice([0.0, 1.0, 10.0, 1e3, 1e6]) * generator.random()
            for _ in range(generator.randint(1, 30))
        ]


@pytest.mark.parametrize("values", list(_values()))
def test_squarify_areas_are_proportional_and_inside_the_box(values: list[float]) -> None:
    box = Box(10.0, 20.0, 300.0, 200.0)
    boxes = squarify(values, box)
    total = sum(values)
    assert len(boxes) == len(values)
    for value, placed in zip(values, boxes, strict=True):
        expected = value / total * box.area if total else 0.0
        assert placed.area == pytest.approx(expected, rel=1e-9, abs=1e-9)
        assert placed.x >= box.x - 1e-9
        assert placed.y >= box.y - 1e-9
        assert placed.x + placed.w <= box.x + box.w + 1e-6
        assert placed.y + placed.h <= box.y + box.h + 1e-6


# -- in a real browser -------------------------------------------------------------------------------

_CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
# Headless, and the browser's own background traffic (updates, sync, accounts) kept down; what is left
# of it is told apart from the page's requests by their network isolation key.
_CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--no-first-run",
    "--no-pings",
)
_MEASURE = """<script>
const measured = {};
for (const rect of document.querySelectorAll("rect[data-map]")) {
  const box = rect.getBoundingClientRect();
  (measured[rect.dataset.map] ||= []).push(
    {key: rect.dataset.key, bytes: Number(rect.dataset.bytes), area: box.width * box.height});
}
const out = document.createElement("pre");
out.id = "slimwheel-measured";
out.textContent = JSON.stringify(measured);
document.body.appendChild(out);
</script>"""


def _in_chromium(page: Path, work: Path) -> tuple[str, set[str]]:
    """The DOM after the page loaded, and every URL the page itself asked the network for (from
    Chromium's net log: requests whose isolation key is the file:// page)."""
    assert _CHROMIUM is not None
    net_log = work / f"{page.stem}.netlog.json"
    process = subprocess.run(
        [_CHROMIUM, *_CHROMIUM_FLAGS, f"--log-net-log={net_log}", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert process.returncode == 0, process.stderr[-2000:]
    log = json.loads(net_log.read_text(encoding="utf-8"))
    start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    fetched = {
        event["params"]["url"]
        for event in log["events"]
        if event.get("type") == start_job
        and str(event.get("params", {}).get("network_isolation_key", "")).startswith("file://")
    }
    return process.stdout, fetched


@pytest.mark.skipif(_CHROMIUM is None, reason="needs Chromium (.ci/run installs it)")
def test_the_page_renders_in_headless_chromium_with_areas_as_in_the_json_and_fetches_nothing(
    html_wheel: Path, provider_catalog_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page_path = tmp_path / "page.html"
    report, _ = _show_html(html_wheel, page_path, provider_catalog_file, capsys)
    text = page_path.read_text(encoding="utf-8")
    # The page as written: it renders (the map is in the DOM Chromium built) and asks for nothing.
    dom, fetched = _in_chromium(page_path, tmp_path)
    assert 'data-map="before"' in dom
    assert fetched == set()
    # Without its Content-Security-Policy (which would block anything it asked for, and the
    # measuring script): still nothing fetched, and each rectangle's rendered area is its share of
    # the bytes, on both maps.
    measured_path = tmp_path / "measured.html"
    unguarded = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", text)
    assert unguarded != text
    measured_path.write_text(unguarded.replace("</body>", _MEASURE + "</body>"), encoding="utf-8")
    dom, fetched = _in_chromium(measured_path, tmp_path)
    assert fetched == set()
    found = re.search(r'<pre id="slimwheel-measured">(.*?)</pre>', dom, re.DOTALL)
    assert found is not None, dom[-2000:]
    measured = json.loads(html.unescape(found[1]))
    assert set(measured) == {"before", "after"}
    for map_name, rects in measured.items():
        total_area = sum(r["area"] for r in rects)
        total_bytes = sum(r["bytes"] for r in rects)
        assert total_area > 0
        for rect in rects:
            assert rect["area"] > 0, rect
            assert abs(rect["area"] / total_area - rect["bytes"] / total_bytes) < 1e-4, (map_name, rect)
    assert sum(r["bytes"] for r in measured["before"]) == report["size"]
    # The net log sees what a page fetches: the same check on a page that asks for one image.
    control = tmp_path / "control.html"
    control.write_text(unguarded.replace("</body>", '<img src="http://127.0.0.1:9/x.png"></body>'))
    _, fetched = _in_chromium(control, tmp_path)
    assert fetched == {"http://127.0.0.1:9/x.png"}
