"""``show --html``: one self-contained HTML page per run with a size map of each wheel (area = bytes)
before and after repair, show's tables, and check's (where the loader finds each DT_NEEDED once the
wheel is installed with what it requires, and check's findings), rendered from check's own report.

The page needs nothing at view time: CSS and SVG are inline, no script, no font, no image, and a
Content-Security-Policy forbids fetching anything. The treemap is laid out here (squarified, Bruls et
al.), so a test can read every rectangle back and compare its area with the JSON report.

Sizes are bytes *in the wheel* (compressed), the unit of the wheel's file size and of
``projected_size``: a vendored copy's block is its compressed size; NVIDIA code linked statically is its
share of its file (``symbol_bytes`` of the file's ``size``) times the file's compressed size; the rest
of the file is the package's own code; what no ELF member accounts for (Python files, metadata, the zip's
own headers and directory) is one block.
"""

from __future__ import annotations

import enum
import html
import math
import os
import posixpath
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from slimwheel.analysis.wheel import zip_member_overhead
from slimwheel.errors import UsageError
from slimwheel.report import elf_rows, human_size

if TYPE_CHECKING:
    from slimwheel.analysis import LazyLoad, WheelReport
    from slimwheel.check import CheckReport
    from slimwheel.findings import Finding
    from slimwheel.repair.plan import RepairPlan

__all__ = [
    "Box",
    "CheckLookupRow",
    "Fate",
    "MapBlock",
    "RepairOutlook",
    "SizeMap",
    "check_html_path",
    "check_lookup_rows",
    "outlook_from_plan",
    "outlook_from_report",
    "render_html",
    "size_map",
    "squarify",
    "write_html",
]

# The "before" map's drawing area; the "after" map is drawn at the same bytes per unit of area.
MAP_WIDTH = 960.0
MAP_HEIGHT = 540.0
_GAP = 40.0
_CAPTION = 28.0


class Fate(enum.Enum):
    """What repair would do with a block of the wheel."""

    STAYS = "stays"  # the package's own code and files
    NVIDIA_STAYS = "nvidia-stays"  # NVIDIA code repair cannot take out: linked statically, or a copy kept
    DEPENDENCY = "dependency"  # a vendored copy that goes; an NVIDIA wheel required instead provides it
    GOES = "goes"  # a vendored copy that goes and nothing needs to replace


_COLOURS = {
    Fate.STAYS: "#8da9c4",
    Fate.NVIDIA_STAYS: "#e3a33b",
    Fate.DEPENDENCY: "#76b900",
    Fate.GOES: "#d9534f",
}
_LEGEND = {
    Fate.STAYS: "the package's own code and files: stays",
    Fate.NVIDIA_STAYS: "NVIDIA code that stays (linked statically: a rebuild removes it; or a copy kept)",
    Fate.DEPENDENCY: "vendored NVIDIA copy: goes, an NVIDIA wheel becomes a dependency",
    Fate.GOES: "vendored NVIDIA copy: goes",
}


@dataclass(frozen=True)
class RepairOutlook:
    """What repair would leave: the members it drops, the distribution that replaces each, the
    Requires-Dist lines it adds, and where this answer came from (shown on the page)."""

    source: str
    drop: frozenset[str] = frozenset()
    replaced_by: Mapping[str, str] = field(default_factory=dict)  # dropped member -> NVIDIA distribution
    requirements: tuple[str, ...] = ()


def outlook_from_plan(report: WheelReport, plan: RepairPlan) -> RepairOutlook:
    """Repair's own plan (:func:`slimwheel.repair.plan_repair`): the same decisions ``repair`` makes."""
    by_library = {
        name: added.distribution for added in plan.requirements for name in added.library.split(", ")
    }
    replaced: dict[str, str] = {}
    for copy in report.vendored:
        if copy.path not in plan.drop:
            continue
        distribution = by_library.get(copy.name) or (
            copy.identified.distribution if copy.identified else None
        )
        if distribution:
            replaced[copy.path] = distribution
    return RepairOutlook(
        "repair's plan (as `slimwheel repair --dry-run` would make it here, without a build environment)",
        frozenset(plan.drop),
        replaced,
        tuple(added.requirement for added in plan.requirements) + tuple(plan.kept_requirements),
    )


def outlook_from_report(report: WheelReport, why: str) -> RepairOutlook:
    """The report's own projection (``projected_size``): every vendored copy an NVIDIA wheel in the
    catalog is known to ship goes. ``why`` says why repair's plan was not asked."""
    replaced = {c.path: c.identified.distribution for c in report.vendored if c.identified is not None}
    return RepairOutlook(
        f"the report's projection: identified vendored copies go ({why})",
        frozenset(replaced),
        replaced,
        tuple(sorted(set(replaced.values()))),
    )


@dataclass(frozen=True)
class MapBlock:
    """One rectangle of the map: ``nbytes`` of the wheel, in the group of one file (or "other")."""

    key: str  # unique on the page's map: "own:PATH", "static:PATH:LIB", "copy:PATH", "other"
    group: str
    label: str
    nbytes: int
    fate: Fate
    detail: str  # the tooltip


@dataclass(frozen=True)
class SizeMap:
    before: tuple[MapBlock, ...]
    after: tuple[MapBlock, ...]
    size_before: int
    size_after: int


def size_map(report: WheelReport, outlook: RepairOutlook) -> SizeMap:
    """The blocks of ``report``'s wheel before and after repair as ``outlook`` sees it."""
    blocks: list[MapBlock] = []
    copies = {copy.path: copy for copy in report.vendored}
    for copy in report.vendored:
        found = copy.identified
        if copy.path in outlook.drop:
            replacement = outlook.replaced_by.get(copy.path)
            fate = Fate.DEPENDENCY if replacement else Fate.GOES
            what = f"goes; {replacement} provides it" if replacement else "goes"
        else:
            fate, what = Fate.NVIDIA_STAYS, "stays (repair keeps it)"
        release = f", {found.distribution} {found.version}" if found else ""
        blocks.append(
            MapBlock(
                f"copy:{copy.path}",
                copy.path,
                posixpath.basename(copy.path),
                copy.compressed_size,
                fate,
                f"{copy.path}: vendored copy of {copy.original_soname}{release}, "
                f"{human_size(copy.compressed_size)} in the wheel ({human_size(copy.size)} unpacked): {what}",
            )
        )
    static_by_path: dict[str, list[tuple[str, int, int]]] = {}
    for code in report.static:
        static_by_path.setdefault(code.path, []).append((code.library, code.symbol_bytes, code.symbols))
    for elf in report.elf_files:
        if elf.path in copies:
            continue
        left = elf.compressed_size
        linked = []
        for library, symbol_bytes, symbols in static_by_path.get(elf.path, ()):
            share = _static_share(symbol_bytes, elf.size, elf.compressed_size, left)
            left -= share
            linked.append(f"{library} (~{human_size(symbol_bytes)})")
            blocks.append(
                MapBlock(
                    f"static:{elf.path}:{library}",
                    elf.path,
                    f"{library} (static)",
                    share,
                    Fate.NVIDIA_STAYS,
                    f"{elf.path}: {library} linked statically, {symbols} API symbols, "
                    f"{human_size(symbol_bytes)} of code in them, more behind them (at least "
                    f"~{human_size(share)} in the wheel): stays, only a rebuild removes it",
                )
            )
        blocks.append(
            MapBlock(
                f"own:{elf.path}",
                elf.path,
                posixpath.basename(elf.path),
                left,
                Fate.STAYS,
                f"{elf.path}: the package's own code, {human_size(left)} in the wheel: stays"
                # A small static block is a sliver on the map: its file's tooltip names it too.
                + (f"; NVIDIA code linked into it: {', '.join(linked)}" if linked else ""),
            )
        )
    accounted = sum(block.nbytes for block in blocks)
    other = max(0, report.size - accounted)
    blocks.append(_other_block(other, report.other_members))
    dropped = [b for b in blocks if b.fate in (Fate.DEPENDENCY, Fate.GOES)]
    # The zip's header and directory entry of each dropped member go with it (as projected_size counts).
    other_after = max(0, other - sum(zip_member_overhead(b.group) for b in dropped))
    after = [b for b in blocks if b not in dropped and b.key != "other"]
    after.append(_other_block(other_after, report.other_members))
    return SizeMap(
        tuple(blocks),
        tuple(after),
        sum(b.nbytes for b in blocks),
        sum(b.nbytes for b in after),
    )


def _static_share(symbol_bytes: int, size: int, compressed: int, left: int) -> int:
    """The static code's bytes in the wheel: its share of the file, at the file's compression."""
    if size <= 0:
        return 0
    return max(0, min(left, round(min(symbol_bytes, size) * compressed / size)))


def _other_block(nbytes: int, members: int) -> MapBlock:
    return MapBlock(
        "other",
        "",
        "other files",
        nbytes,
        Fate.STAYS,
        f"{members} other files, metadata and the zip's headers: {human_size(nbytes)}: stays",
    )


# -- the treemap ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Box:
    x: float
    y: float
    w: float
    h: float

    @property
    def area(self) -> float:
        return self.w * self.h


def squarify(values: Sequence[float], box: Box) -> list[Box]:
    """Rectangles tiling ``box`` whose areas are proportional to ``values`` (in their order),
    as square as the squarified algorithm makes them; a value of 0 gets an empty box at the corner."""
    total = sum(v for v in values if v > 0)
    result = [Box(box.x, box.y, 0.0, 0.0) for _ in values]
    if total <= 0 or box.area <= 0:
        return result
    scale = box.area / total
    order = sorted((i for i, v in enumerate(values) if v > 0), key=lambda i: -values[i])
    rest = box
    row: list[int] = []
    for index in order:
        side = min(rest.w, rest.h)
        areas = [values[i] * scale for i in row]
        if row and _worst([*areas, values[index] * scale], side) > _worst(areas, side):
            placed, rest = _place_row([values[i] * scale for i in row], rest)
            for i, placed_box in zip(row, placed, strict=True):
                result[i] = placed_box
            row = []
        row.append(index)
    if row:
        placed, _ = _place_row([values[i] * scale for i in row], rest)
        for i, placed_box in zip(row, placed, strict=True):
            result[i] = placed_box
    return result


def _worst(areas: Sequence[float], side: float) -> float:
    """The worst aspect ratio of a row of ``areas`` laid along a side of length ``side``."""
    total = sum(areas)
    if total <= 0 or side <= 0:
        return math.inf
    return max(max(side * side * a / (total * total), (total * total) / (side * side * a)) for a in areas)


def _place_row(areas: Sequence[float], rest: Box) -> tuple[list[Box], Box]:
    total = sum(areas)
    boxes = []
    if rest.w >= rest.h:  # a column along the left edge
        width = total / rest.h if rest.h else 0.0
        y = rest.y
        for area in areas:
            height = area / width if width else 0.0
            boxes.append(Box(rest.x, y, width, height))
            y += height
        return boxes, Box(rest.x + width, rest.y, max(0.0, rest.w - width), rest.h)
    height = total / rest.w if rest.w else 0.0
    x = rest.x
    for area in areas:
        width = area / height if height else 0.0
        boxes.append(Box(x, rest.y, width, height))
        x += width
    return boxes, Box(rest.x, rest.y + height, rest.w, max(0.0, rest.h - height))


def _layout(blocks: Sequence[MapBlock], box: Box) -> list[tuple[MapBlock, Box]]:
    """Two levels: a box per file (its own code beside its static NVIDIA code), then its blocks."""
    groups: dict[str, list[MapBlock]] = {}
    for block in blocks:
        groups.setdefault(block.group, []).append(block)
    members = list(groups.values())
    placed: list[tuple[MapBlock, Box]] = []
    for group, group_box in zip(
        members, squarify([sum(b.nbytes for b in g) for g in members], box), strict=True
    ):
        inner = squarify([b.nbytes for b in group], group_box)
        placed += zip(group, inner, strict=True)
    return placed


# -- the page ---------------------------------------------------------------------------------------

_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1d1d1d; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: .4em 0; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
th { background: #f2f2f2; } td.n { text-align: right; white-space: nowrap; }
code, td.f { font-family: ui-monospace, monospace; font-size: 12px; }
svg.map { width: 100%; height: auto; max-width: 1500px; }
svg.map rect.block { stroke: #fff; stroke-width: .8; }
svg.map rect.block:hover { stroke: #000; stroke-width: 1.5; }
svg.map text { font: 11px system-ui, sans-serif; fill: #111; pointer-events: none; }
svg.map text.caption { font-size: 14px; font-weight: bold; }
.legend span { display: inline-block; width: 1em; height: 1em; vertical-align: middle; margin-right: .3em; }
.legend li { list-style: none; }
"""
# Nothing may be fetched: no script, no font, no image, no frame, no form target.
_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def render_html(
    items: Sequence[tuple[WheelReport, RepairOutlook]],
    *,
    checks: Sequence[CheckReport | str | None] = (),
    generator: str = "slimwheel",
) -> str:
    """One page for the reports of a run, each with its size map and tables; ``checks``, one per item
    (None: not checked; a string: why not), adds check's tables to its wheel's section."""
    if checks and len(checks) != len(items):
        raise ValueError(f"{len(checks)} check reports for {len(items)} wheels")
    title = ", ".join(report.filename for report, _ in items) or "no wheel"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title>",
        f"<style>{_STYLE}</style>",
        "</head>",
        "<body>",
    ]
    for index, (report, outlook) in enumerate(items):
        parts.append(_wheel_section(report, outlook, checks[index] if checks else None))
    parts += [f"<footer><p>made by {_e(generator)}</p></footer>", "</body>", "</html>", ""]
    return "\n".join(parts)


def _wheel_section(report: WheelReport, outlook: RepairOutlook, check: CheckReport | str | None) -> str:
    sizes = size_map(report, outlook)
    saved = sizes.size_before - sizes.size_after
    share = f" ({100 * saved / sizes.size_before:.0f}% smaller)" if sizes.size_before else ""
    parts = [
        f'<section class="wheel" data-wheel="{_e(report.filename)}">',
        f"<h1>{_e(report.filename)}</h1>",
        f"<p>{_e(human_size(sizes.size_before))} now, "
        f"{_e(human_size(sizes.size_after))} once repaired{share}. "
        f"Catalog: {_e(report.catalog_origin)}. After: {_e(outlook.source)}.</p>",
        _legend(),
        _svg(sizes),
    ]
    if outlook.requirements:
        parts.append("<p>Requires-Dist once repaired (installed once, shared with other packages):</p><ul>")
        parts += [f"<li><code>{_e(line)}</code></li>" for line in outlook.requirements]
        parts.append("</ul>")
    parts += _tables(report, outlook)
    if isinstance(check, str):
        parts.append(f'<p class="unchecked">{_e(check)}</p>')
    elif check is not None:
        parts += _check_tables(check)
    parts.append("</section>")
    return "\n".join(parts)


def _legend() -> str:
    items = "".join(
        f'<li><span style="background:{_COLOURS[fate]}"></span>{_e(text)}</li>'
        for fate, text in _LEGEND.items()
    )
    return f'<ul class="legend">{items}</ul>'


def _svg(sizes: SizeMap) -> str:
    before = Box(0.0, _CAPTION, MAP_WIDTH, MAP_HEIGHT)
    # The same bytes per unit of area on both sides, so that the eye compares sizes honestly.
    ratio = math.sqrt(sizes.size_after / sizes.size_before) if sizes.size_before else 0.0
    after = Box(MAP_WIDTH + _GAP, _CAPTION, MAP_WIDTH * ratio, MAP_HEIGHT * ratio)
    width = MAP_WIDTH + _GAP + max(after.w, 1.0)
    height = _CAPTION + MAP_HEIGHT
    parts = [
        f'<svg class="map" viewBox="0 0 {_n(width)} {_n(height)}" '
        f'data-bytes-before="{sizes.size_before}" data-bytes-after="{sizes.size_after}" '
        f'data-map-width="{_n(MAP_WIDTH)}" data-map-height="{_n(MAP_HEIGHT)}" role="img">',
        f'<text class="caption" x="0" y="18">now: {_e(human_size(sizes.size_before))}</text>',
        f'<text class="caption" x="{_n(after.x)}" y="18">'
        f"once repaired: {_e(human_size(sizes.size_after))}</text>",
    ]
    for name, blocks, box in (("before", sizes.before, before), ("after", sizes.after, after)):
        for block, placed in _layout(blocks, box):
            parts.append(_rect(name, block, placed))
    parts.append("</svg>")
    return "\n".join(parts)


def _rect(map_name: str, block: MapBlock, box: Box) -> str:
    text = ""
    label = f"{block.label} {human_size(block.nbytes)}"
    # A label only where it fits (about 6.5 units a character at 11px).
    if box.w >= 6.5 * len(label) + 6 and box.h >= 16:
        text = f'<text x="{_n(box.x + 3)}" y="{_n(box.y + 13)}">{_e(label)}</text>'
    return (
        f'<g><rect class="block" data-map="{map_name}" data-key="{_e(block.key)}" '
        f'data-fate="{block.fate.value}" data-bytes="{block.nbytes}" '
        f'x="{_n(box.x)}" y="{_n(box.y)}" width="{_n(box.w)}" height="{_n(box.h)}" '
        f'fill="{_COLOURS[block.fate]}"><title>{_e(block.detail)}</title></rect>{text}</g>'
    )


_VENDORED_COLUMNS = (
    "file", "original soname", "style", "size", "in the wheel", "NVIDIA wheel", "installs as", "match",
    "repair",
)  # fmt: skip


def _tables(report: WheelReport, outlook: RepairOutlook) -> list[str]:
    parts = [
        _table(
            "ELF files (one row per DT_NEEDED)",
            ("file", "size", "soname", "needs", "resolves to", "rpath / runpath"),
            [
                (row.file, row.size, row.soname, row.needs, row.resolves_to, row.search_path)
                for row in elf_rows(report)
            ],
            numeric=(1,),
        )
    ]
    if report.vendored:
        rows = []
        for copy in report.vendored:
            found = copy.identified
            fate = "goes" if copy.path in outlook.drop else "stays"
            rows.append(
                (
                    copy.path,
                    copy.original_soname,
                    copy.style.value,
                    human_size(copy.size),
                    human_size(copy.compressed_size),
                    f"{found.distribution} {found.version}" if found else "none known",
                    found.official_path if found else "",
                    f"{found.confidence.value} ({found.evidence})" if found else "",
                    fate,
                )
            )
        parts.append(
            _table(
                "Vendored NVIDIA libraries",
                _VENDORED_COLUMNS,
                rows,
                numeric=(3, 4),
            )
        )
    if report.static:
        parts.append(
            _table(
                "NVIDIA code linked statically",
                ("file", "library", "API symbols", "their bytes", "exported", "version strings"),
                [
                    (
                        code.path,
                        code.library,
                        str(code.symbols),
                        human_size(code.symbol_bytes),
                        "yes" if code.exported else "no",
                        ", ".join(code.version_strings),
                    )
                    for code in report.static
                ],
                numeric=(2, 3),
            )
        )
    if report.lazy_loads:
        parts.append(
            _table(
                "NVIDIA libraries loaded at run time (dlopen)",
                ("file", "library", "through", "functions", "exported"),
                [
                    (
                        load.path,
                        load.library,
                        _loaded_through(load),
                        str(load.symbols),
                        "yes" if load.exported else "no",
                    )
                    for load in report.lazy_loads
                ],
                numeric=(3,),
            )
        )
    fatbins = [(elf.path, human_size(elf.fatbin_size)) for elf in report.elf_files if elf.fatbin_size]
    if fatbins:
        parts.append(_table("Device code (.nv_fatbin)", ("file", "size"), fatbins, numeric=(1,)))
    if report.findings:
        parts.append(_findings_table("Findings", report.findings))
    return parts


@dataclass(frozen=True)
class CheckLookupRow:
    """One row of check's lookup table: a file needs ``soname``, found at one place (one lookup), or
    the count of the file's needs that only the system provides (``resolution`` "system", no soname)."""

    file: str  # installed path
    soname: str
    resolution: str
    path: str  # installed path of the file found; "" when none
    distribution: str  # the provider that installs it; "" for this wheel, the system or nothing
    found: str  # the answer in words
    search_path: str
    system: int = 0  # on the system row: how many needs it stands for


def check_lookup_rows(check: CheckReport) -> list[CheckLookupRow]:
    """Check's DT_NEEDED lookups, one row per fact as ``slimwheel check`` prints them: a need found in
    several places under different provider versions has a row for each; the needs only the host
    provides are one row per file."""
    from slimwheel.analysis import Resolution
    from slimwheel.check.words import lookup_words, search_path_words

    rows: list[CheckLookupRow] = []
    for file in check.files:
        paths = search_path_words(file.rpath, file.runpath)
        search = " ".join(paths)
        mine: list[CheckLookupRow] = []
        system = 0
        for needed in file.needed:
            if all(lookup.resolution is Resolution.SYSTEM for lookup in needed.lookups):
                system += 1
                continue
            for lookup in needed.lookups:
                mine.append(
                    CheckLookupRow(
                        file.installed_path,
                        needed.soname,
                        lookup.resolution.value,
                        lookup.path or "",
                        lookup.distribution or "",
                        lookup_words(lookup, with_versions=len(needed.lookups) > 1),
                        search,
                    )
                )
        if system:
            noun = "library" if system == 1 else "libraries"
            mine.append(
                CheckLookupRow(
                    file.installed_path, "", "system", "", "", f"+ {system} system {noun}", search, system
                )
            )
        if not mine:
            mine.append(
                CheckLookupRow(file.installed_path, "", "", "", "", file.error or "needs nothing", search)
            )
        rows += mine
    return rows


def _check_tables(check: CheckReport) -> list[str]:
    from slimwheel.check.words import requirement_rows

    cuda = f"CUDA {check.cuda_major}" if check.cuda_major is not None else "no CUDA major"
    python = f", Python {check.python}" if check.python else ""
    verdict = "fails" if check.has_errors else "passes"
    parts = [
        f'<h2 class="check">Check: installed with what it requires ({_e(check.platform.key)}, '
        f"{_e(cuda)}{_e(python)})</h2>",
        f'<p class="verdict" data-verdict="{verdict}" data-errors="{check.errors}" '
        f'data-warnings="{check.warnings}">check {verdict}: {check.errors} errors, '
        f"{check.warnings} warnings.</p>",
    ]
    if check.requirements:
        rows = [
            (distribution, required_by, allowed or "none")
            for distribution, required_by, allowed in requirement_rows(check)
        ]
        parts.append(
            _table(
                "NVIDIA distributions it brings in",
                ("distribution", "required by", "versions allowed here"),
                rows,
                path=-1,
            )
        )
    lookups = check_lookup_rows(check)
    parts.append(
        _table(
            "DT_NEEDED lookups (check)",
            ("file", "needs", "found", "rpath / runpath"),
            # A file's name and search path on its first row only; every row's data-* names its file.
            [
                (row.file, row.soname, row.found, row.search_path)
                if index == 0 or lookups[index - 1].file != row.file
                else ("", row.soname, row.found, "")
                for index, row in enumerate(lookups)
            ],
            attributes=[
                {
                    "data-check": "lookup",
                    "data-file": row.file,
                    "data-soname": row.soname,
                    "data-resolution": row.resolution,
                    "data-path": row.path,
                    "data-distribution": row.distribution,
                    "data-system": str(row.system),
                }
                for row in lookups
            ],
        )
    )
    if check.findings:
        parts.append(_findings_table("Findings (check)", check.findings, marked="finding"))
    return parts


def _findings_table(title: str, findings: Sequence[Finding], *, marked: str | None = None) -> str:
    """Show's or check's findings, a row each; ``marked``: each row carries ``data-check`` with that
    value, its kind and its severity (the page's test reads check's back)."""
    attributes = [
        {"data-check": marked, "data-kind": f.kind.value, "data-severity": f.severity.value}
        for f in findings
        if marked is not None
    ]
    rows = [(f.severity.value, f.path, f.message) for f in findings]
    return _table(title, ("severity", "file", "finding"), rows, path=1, attributes=attributes)


def _loaded_through(load: LazyLoad) -> str:
    """How a file reaches a library it loads at run time: a shim's dlopen by file name, forwarding
    functions that keep dlsym's answer, Implib.so's table, or its trampolines alone."""
    if load.file_name:
        return f"dlopen of {load.file_name}"
    if load.pointer:
        return f"dlsym, kept in each function's {load.pointer}"
    return load.tramp_table or "trampolines"


def _table(
    title: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    numeric: Sequence[int] = (),
    path: int = 0,
    attributes: Sequence[Mapping[str, str]] = (),
) -> str:
    """An HTML table; ``attributes``, one mapping per row, are written on each ``<tr>`` (data-* facts a
    test or a script reads back without parsing the words)."""
    head = "".join(f"<th>{_e(c)}</th>" for c in columns)
    body = []
    for number, row in enumerate(rows):
        cells = []
        for index, cell in enumerate(row):
            css = ' class="n"' if index in numeric else (' class="f"' if index == path else "")
            cells.append(f"<td{css}>{_e(cell)}</td>")
        extra = attributes[number] if number < len(attributes) else {}
        facts = "".join(f' {name}="{_e(value)}"' for name, value in extra.items())
        body.append(f"<tr{facts}>{''.join(cells)}</tr>")
    return f"<h2>{_e(title)}</h2>\n<table>\n<tr>{head}</tr>\n" + "\n".join(body) + "\n</table>"


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _n(value: float) -> str:
    """A coordinate: 4 decimals, so that a small block's area is still read back within rounding."""
    text = f"{value:.4f}".rstrip("0").rstrip(".")
    return text if text not in ("", "-0") else "0"


# -- the file ---------------------------------------------------------------------------------------


def check_html_path(path: Path) -> None:
    """Refuse, before any work, a page path that cannot be written (one line, exit 2)."""
    if path.is_dir():
        raise UsageError(f"--html {path}: is a folder", hint="name the page's file, e.g. report.html")
    parent = path.parent
    if not parent.is_dir():
        raise UsageError(f"--html {path}: the folder {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise UsageError(f"--html {path}: the folder {parent} is not writable")


def write_html(path: Path, page: str) -> None:
    """Write ``page`` under a temporary name beside ``path`` and rename it: a reader never sees half."""
    check_html_path(path)
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise UsageError(f"--html {path}: cannot write there: {exc.strerror or exc}") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(page)
        Path(temporary).chmod(0o644)  # mkstemp makes it private; the page is meant to be shared
        Path(temporary).replace(path)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise UsageError(f"--html {path}: cannot write there: {exc.strerror or exc}") from exc
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
