"""How a lookup of check's report reads in words: one wording for the terminal table (``slimwheel check``)
and the HTML page (``show --html``); each caller escapes and marks it up its own way."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from slimwheel.check.model import CheckReport, Lookup
from slimwheel.findings import Finding, FindingKind
from slimwheel.wording import some_of

__all__ = [
    "Problem",
    "gist_lines",
    "lookup_words",
    "problem_lines",
    "requirement_rows",
    "search_path_words",
    "versions_words",
]

_FILES_NAMED = 3  # files named on a line that many files share (verbose names them all)
_SONAMES = "\0"  # where a problem's soname stood in its message, while the lines are grouped
_FLAGS = "\1"  # where a cause's --exclude flags stood, while the lines are grouped
_EXCLUDE_FLAG = re.compile(r"--exclude ([\w.+-]+)")
_DISTRIBUTIONS = "\2"  # where the distributions stood in a cause that only says where they install
# A cause that only says which wheel installs the soname where: CUDA 13's wheels share one folder, so
# moreau-cuda13 0.4.1's files, which miss seven sonames of six wheels there, take one line.
# What follows the folder (" (only with the extra 'gpu')", ": add RPATH '$ORIGIN/../nvidia/cu13/lib' ...") is
# the folder's, the same for each wheel that shares it.
_INSTALLS_IN = re.compile(r"([\w.-]+) installs it in (\S+?)((?: \(|: ).*)?")
_SONAMES_NAMED = 6  # sonames named on a line of a kind (the findings name them all)
# What every finding of these kinds says, whichever file and soname it is of: a line per kind says it
# once (openmm-unofficial-cu12 8.3.0rc2's check has 44 warnings of two kinds).
_GIST = {
    FindingKind.SPLIT_INSTALL: (
        "found only through RPATH/RUNPATH entries into other distributions' folders, which assume "
        "one site-packages (pip install --target into another folder, or --system-site-packages, "
        "can split it)"
    ),
    FindingKind.LOADED_FIRST: (
        "found only if this wheel's own library of that soname is loaded first, as a plugin's host "
        "library does (an RPATH entry to that library lets each file load alone)"
    ),
    FindingKind.LOADED_BY_CODE: (
        "found only if the package's code loads the library first (slimwheel verify tells; slimwheel "
        "repair sets an RPATH to it)"
    ),
    FindingKind.PRELOADED: "found only because a --preloaded distribution loads it first",
    FindingKind.THROUGH_EXTRA: "found only in an NVIDIA wheel that an extra of this wheel installs",
    FindingKind.THROUGH_REQUIREMENT: (
        "found in an NVIDIA wheel that only another requirement's own requirements bring in, which its "
        "next release may change (slimwheel repair requires it)"
    ),
}


class Problem(Protocol):
    """What a line of problems is made of: a check Finding, or one of repair's CheckProblems."""

    @property
    def kind(self) -> object: ...
    @property
    def path(self) -> str: ...
    @property
    def soname(self) -> str | None: ...
    @property
    def message(self) -> str: ...
    @property
    def cause(self) -> str | None: ...


def _same(text: str) -> str:
    return text


def _plain(_style: str, text: str) -> str:
    return text


def search_path_words(rpath: Sequence[str], runpath: Sequence[str]) -> list[str]:
    """A file's search path as ``show``, ``check`` and the HTML page print it: "RPATH a:b", then
    "RUNPATH c", each only when the file has it."""
    words = [f"RPATH {':'.join(rpath)}"] if rpath else []
    return words + ([f"RUNPATH {':'.join(runpath)}"] if runpath else [])


def versions_words(versions: Sequence[str]) -> str:
    """Up to four versions, else the first two, the last and how many."""
    if len(versions) <= 4:
        return ", ".join(versions)
    return f"{versions[0]}, {versions[1]} ... {versions[-1]} ({len(versions)} releases)"


def requirement_rows(report: CheckReport) -> list[tuple[str, str, str]]:
    """Per NVIDIA distribution the wheel brings in: its name, what requires it (two named, the rest
    counted: the JSON document keeps every requirement line) and the versions allowed here ("" for
    none, which each caller marks as an error its own way)."""
    versions: dict[str, list[str]] = {}
    for provider in report.providers:
        versions.setdefault(provider.distribution, []).append(provider.version)
    # Per distribution, per requirer ("cuda-toolkit[cublas]"), the requirer's releases that require it:
    # pylibraft-cu13 26.10.0's cuBLAS is required by 39 cuda-toolkit releases, one label each.
    required: dict[str, dict[str, list[str]]] = {}
    for requirement in report.requirements:
        requirer, release = _requirer_and_release(requirement.required_by)
        if not requirer:
            requirer = f"{report.distribution}: {requirement.requirement}"
        releases = required.setdefault(requirement.distribution, {}).setdefault(requirer, [])
        if release and release not in releases:
            releases.append(release)
    return [
        (
            distribution,
            some_of([f"{name} {versions_words(found)}".rstrip() for name, found in by.items()], 2),
            versions_words(versions.get(distribution, [])),
        )
        for distribution, by in required.items()
    ]


def _requirer_and_release(required_by: str) -> tuple[str, str]:
    """``"cuda-toolkit[cublas] 13.0.2"`` -> (``"cuda-toolkit[cublas]"``, ``"13.0.2"``); a requirement of
    the wheel's that brings it (``"libraft-cu13==26.10.*"``) has no release: (it, "")."""
    name, _, release = required_by.rpartition(" ")
    if name and release[:1].isdigit():
        return name, release
    return required_by, ""


def lookup_words(
    lookup: Lookup,
    *,
    with_versions: bool,
    escape: Callable[[str], str] = _same,
    mark: Callable[[str, str], str] = _plain,
) -> str:
    """Where a DT_NEEDED was found (or not), from whom, through which search-path entry, and for which
    releases; ``escape`` is applied to names and paths, ``mark(style, text)`` to the words a terminal
    colours ("red": not found, "yellow": found only if loaded first)."""
    from slimwheel.analysis import Resolution

    if lookup.resolution is Resolution.UNRESOLVED:
        text = mark("red", "not found")
    elif lookup.path is not None:
        owner = lookup.distribution or "this wheel"
        if lookup.resolution is Resolution.REQUIREMENT and lookup.versions:
            # Only some of a requirement's versions were read: always say which ("requirement: torch 2.5.1").
            owner += " " + versions_words([pin.version for pin in lookup.versions])
            with_versions = False
        text = f"{escape(lookup.path)} ({lookup.resolution.value}: {escape(owner)})"
        if lookup.found_by is not None:
            text += f" via {lookup.found_by.tag.value} {escape(lookup.found_by.entry)}"
        elif lookup.resolution in (
            Resolution.REQUIREMENT,
            Resolution.NVIDIA_WHEEL,
            Resolution.WHEEL,
            Resolution.VENDORED,
        ):
            text += " " + mark("yellow", "only if loaded first")
    else:
        text = lookup.resolution.value
    if with_versions and lookup.versions:
        by: dict[str, list[str]] = {}
        for pin in lookup.versions:
            by.setdefault(pin.distribution, []).append(pin.version)
        text += " with " + escape("; ".join(f"{name} {versions_words(v)}" for name, v in by.items()))
    if lookup.loaded_by:
        text += f" when loaded by {escape(lookup.loaded_by[0])}"
    return text


def _shared_cause(cause: str) -> tuple[str, list[str], str | None]:
    """A cause with what differs between the sonames that share it left out: the --exclude flag of
    each (the sonames of one product share the line, which names every flag: TensorRT 8's nvinfer,
    nvinfer_plugin and nvonnxparser for onnxruntime-gpu 1.16), and the wheel that installs it, where
    the cause only says where (CUDA 13's wheels share one folder). Then the flags and the wheel."""
    flags = _EXCLUDE_FLAG.findall(cause)
    cause = _EXCLUDE_FLAG.sub(_FLAGS, cause)
    installs = _INSTALLS_IN.fullmatch(cause)
    if installs is None:
        return cause, flags, None
    return f"{_DISTRIBUTIONS} installs it in {installs[2]}{installs[3] or ''}", flags, installs[1]


def _named_again(cause: str, excludes: Mapping[str, None], wheels: Mapping[str, None]) -> str:
    """A shared cause (:func:`_shared_cause`) with the flags and wheels of all its sonames."""
    cause = cause.replace(_FLAGS, " ".join(f"--exclude {stem}" for stem in sorted(excludes)))
    if len(wheels) > 1:
        cause = cause.replace(f"{_DISTRIBUTIONS} installs ", f"{_DISTRIBUTIONS} install ")
    return cause.replace(_DISTRIBUTIONS, ", ".join(sorted(wheels)))


def problem_lines(
    problems: Sequence[Problem], *, verbose: bool, rest_named: str = "-v names them"
) -> list[tuple[str, str]]:
    """The lines that say ``problems`` (check's findings, repair's refusals): (the files, the
    problem), in the order the problems come. Files with the same problem share a line, and so do
    the sonames that the same files miss for the same reason; sonames not found for one cause (a
    ``Finding.cause``) share a line whatever each file searched, unless ``verbose``. A line names a
    few files and says where the rest are named (``rest_named``)."""
    from slimwheel.check.diagnose import plural

    # One entry per line, by the first problem's place: the files, the sonames, and (for a cause)
    # the (file, soname) pairs seen, to say when not every file misses every soname.
    groups: dict[tuple[str, ...], tuple[dict[str, None], dict[str, None], set[tuple[str, str]]]] = {}
    # Per cause, the words that differ between the sonames sharing it: --exclude flags, wheels.
    named: dict[tuple[str, ...], tuple[dict[str, None], dict[str, None]]] = {}
    for problem in problems:
        if problem.cause and problem.soname and not verbose:
            cause, flags, wheel = _shared_cause(problem.cause)
            key: tuple[str, ...] = ("cause", str(problem.kind), cause)
            excludes, wheels = named.setdefault(key, ({}, {}))
            excludes.update(dict.fromkeys(flags))
            wheels.update(dict.fromkeys([wheel] if wheel else []))
        elif problem.soname and problem.soname in problem.message:
            key = ("message", problem.message.replace(problem.soname, _SONAMES, 1))
        else:
            key = ("message", problem.message)
        paths, sonames, pairs = groups.setdefault(key, ({}, {}, set()))
        paths[problem.path] = None
        if problem.soname:
            sonames[problem.soname] = None
            pairs.add((problem.path, problem.soname))
    lines: list[tuple[str, list[str]]] = []
    for key, (paths, sonames, pairs) in groups.items():
        if key[0] == "cause":
            missed = sorted(sonames)
            between = " between them" if len(paths) > 1 and len(pairs) < len(paths) * len(missed) else ""
            cause = plural(f"; {key[2]}")[2:] if len(missed) > 1 else key[2]  # its words follow a "; "
            cause = _named_again(cause, *named[key])
            lines.append((f"needs {', '.join(missed)}{between}: not found ({cause})", list(paths)))
            continue
        template = key[1]
        if _SONAMES not in template:
            lines.append((template, list(paths)))
            continue
        place = {path: index for index, path in enumerate(paths)}
        files_of: dict[str, list[str]] = {}
        for path, soname in sorted(pairs, key=lambda pair: (place[pair[0]], pair[1])):
            files_of.setdefault(soname, []).append(path)
        # By message, the sonames that the same files miss share a line.
        sonames_of: dict[tuple[str, ...], list[str]] = {}
        for soname in sonames:
            sonames_of.setdefault(tuple(files_of[soname]), []).append(soname)
        for sharing, together in sonames_of.items():
            text = template.replace(_SONAMES, ", ".join(together), 1)
            lines.append((plural(text) if len(together) > 1 else text, list(sharing)))
    said: list[tuple[str, str]] = []
    for text, files in lines:
        shown = len(files) if verbose else _FILES_NAMED
        where = some_of([p for p in files if p], shown, listed_in=rest_named)
        if len(files) > 1:
            where = f"{len(files)} files ({where})"
        said.append((where, text))
    return said


def gist_lines(findings: Sequence[Finding], *, rest_named: str) -> list[tuple[str, str]]:
    """Per kind of finding that says the same of every file and soname (``_GIST``), in the order the
    kinds come: its line, naming a few files (``rest_named`` says where the rest are) and sonames.
    Findings of other kinds get none."""
    by_kind: dict[FindingKind, tuple[dict[str, None], dict[str, None], int]] = {}
    for finding in findings:
        if finding.kind not in _GIST or not finding.soname:
            continue
        paths, sonames, count = by_kind.get(finding.kind, ({}, {}, 0))
        paths[finding.path] = None
        sonames[finding.soname] = None
        by_kind[finding.kind] = (paths, sonames, count + 1)
    lines = []
    for kind, (paths, sonames, count) in by_kind.items():
        files = list(paths)
        where = some_of(files, _FILES_NAMED, listed_in=rest_named)
        named = sorted(sonames)
        needs = some_of(named, _SONAMES_NAMED)
        between = " between them" if len(files) > 1 and count < len(files) * len(named) else ""
        subject = f"{len(files)} files ({where}) need" if len(files) > 1 else f"{where} needs"
        lines.append((f"{kind.value} ({count})", f"{subject} {needs}{between}: {_GIST[kind]}"))
    return lines
