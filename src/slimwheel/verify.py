"""``verify``: install a wheel into a fresh venv, import what it contains in a fresh process, and check where
each NVIDIA library was mapped from (``/proc/self/maps``).

What it imports, unless ``--import`` names modules: every top-level package and module of the wheel, from
its member paths (``top_level.txt`` is not trusted), and each extension module this interpreter can load,
by its dotted name (``pkg/core_cc.cpython-311-x86_64-linux-gnu.so`` is ``pkg.core_cc``).

"Test the wheels locally before uploading": the install uses this environment's pip
(``pip --python <venv python>``), so the venv needs no pip of its own. The wheel must load by itself
(through its RPATH): ``slimwheel.runtime.preload`` is not called.
"""

from __future__ import annotations

import bisect
import csv
import glob
import importlib.machinery
import io
import json
import keyword
import os
import platform
import posixpath
import re
import signal
import subprocess
import sys
import venv
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import BinaryIO, TypeVar

import packaging.tags
from packaging.markers import default_environment
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from slimwheel._scratch import scratch_folder
from slimwheel.analysis.inspect import starts_like_elf
from slimwheel.analysis.libraries import (
    DRIVER_LIBRARY_NAMES,
    driver_api,
    is_driver_library,
    nvidia_product_of,
    other_makers_of,
)
from slimwheel.catalog.model import Catalog, LibraryProvider
from slimwheel.check import CheckReport, FileCheck, NeededCheck, check_wheel
from slimwheel.check.target import loads_on
from slimwheel.elf import ElfFacts, exports_any, is_elf, read_elf, read_elf_file, read_interpreter
from slimwheel.elf.stub import stand_in_library
from slimwheel.errors import ElfError, InputError, SlimwheelError, UsageError
from slimwheel.findings import FindingKind
from slimwheel.ldso import EntryKind, expand_entry, soname_carriers
from slimwheel.manifest import Manifest, ManifestLibrary, read_manifest
from slimwheel.metadata import is_extra_name
from slimwheel.names import (
    cuda_major_of_folder,
    is_extension_abi_tag,
    is_shared_library_name,
    may_be_binary,
    module_init_symbols,
    name_of_library,
    parse_library_file_name,
    soname_stem,
)
from slimwheel.platforms import Platform
from slimwheel.progress import SILENT, Progress
from slimwheel.requirements import only_with_extras, read_requirements
from slimwheel.wheel import Wheel
from slimwheel.wording import some_of

__all__ = [
    "ImportResult",
    "Interpreter",
    "LibraryLoad",
    "LoadedLibrary",
    "Pin",
    "PlannedInstall",
    "VerifyComparison",
    "VerifyPlan",
    "VerifyProblem",
    "VerifyReport",
    "compare_problems",
    "diagnose",
    "find_imports",
    "interpreter_of",
    "lowest_pins",
    "manifest_extras",
    "plan_verify",
    "verify_against",
    "verify_wheel",
]

PIP_TIMEOUT = 600
IMPORT_TIMEOUT = 300

# Imports each name in turn, writing one JSON line per import to the file argv[1] as it goes (so a crash
# still says which import it was), then loads each library after "--load" (dlopen, lazy binding, local
# scope), then writes the paths /proc/self/maps holds after all of them.
_PROBE = r"""
import json, sys, traceback
results, arguments = sys.argv[1], sys.argv[2:]
names, libraries, carriers, cannot_open = arguments, [], {}, None
if "--load" in arguments:
    names, rest = arguments[: arguments.index("--load")], arguments[arguments.index("--load") + 1 :]
    given, libraries = json.loads(rest[0]), rest[1:]
    carriers, cannot_open = given["carriers"], given["cannot_open"]
def say(record):
    with open(results, "a") as out:
        out.write(json.dumps(record) + "\n")
def loaded_as(name):
    # An extension module the package's code already loaded from its file under another name
    # (gbrl-gpu's importlib loads gbrl/gbrl_cpp...so as "gbrl_cpp"): a second load fails in pybind11.
    import importlib.util, os
    try:
        spec = importlib.util.find_spec(name)
    except Exception:
        return None
    origin = getattr(spec, "origin", None)
    if name in sys.modules or not isinstance(origin, str) or not origin.endswith(".so"):
        return None
    real = os.path.realpath(origin)
    for other, module in list(sys.modules.items()):
        try:
            where = module.__dict__.get("__file__")
        except Exception:
            continue
        if other != name and isinstance(where, str) and os.path.realpath(where) == real:
            return other
    return None
def library_loader(name):
    # RAPIDS' library packages (libcudf, librmm, libcudf_streaming...) load their libraries, and the
    # libraries of the packages they need, in load_library(), which each consumer calls after the
    # import: a top-level package's own load_library that takes no argument is called so.
    import inspect
    function = getattr(sys.modules.get(name), "load_library", None)
    if "." in name or not inspect.isfunction(function):
        return None
    if (function.__module__ or "").split(".")[0] != name:
        return None
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return None
    optional = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    required = [p for p in parameters if p.default is p.empty and p.kind not in optional]
    return None if required else f"{name}.load_library()"
for name in names:
    other = loaded_as(name)
    if other is not None:
        say({"name": name, "error": None, "loaded_as": other})
        continue
    called = None
    try:
        __import__(name)
        called = library_loader(name)
        if called is not None:
            getattr(sys.modules[name], "load_library")()
    except BaseException as exc:
        lines = [l.strip() for l in "".join(traceback.format_exception_only(type(exc), exc)).splitlines()]
        lines = [l for l in lines if l]
        error, chain, seen = lines[-1] if lines else type(exc).__name__, [], set()
        if called is not None:
            error = f"{called} raised {error}"
        while exc is not None and id(exc) not in seen and len(chain) < 8:
            seen.add(id(exc))
            chain.append(str(exc)[:4000])
            exc = exc.__cause__ or exc.__context__
        say({"name": name, "error": error, "chain": chain})
    else:
        say({"name": name, "error": None, "called": called})
if libraries:
    import ctypes, os, re
    failed, loaded, after = {}, set(), {}
    def load(path):
        try:
            ctypes.CDLL(path, mode=os.RTLD_LAZY | os.RTLD_LOCAL)
        except OSError as exc:
            failed[path] = str(exc)
            say({"library": path, "error": str(exc)})
        else:
            failed.pop(path, None)
            loaded.add(path)
            say({"library": path, "error": None, "after": after.get(path, [])})
    for path in libraries:
        load(path)
    # One that missed a soname a library of the wheel carries, loaded since (carriers: soname -> that
    # library), is loaded again, as a plugin's host library loads first: while that helps. Its result
    # is taken back first (""), so a crash in the second load is its own.
    retried = True
    while retried:
        retried = False
        for path, error in list(failed.items()):
            missing = re.match(cannot_open, error)
            carrier = carriers.get(missing.group(1)) if missing else None
            if carrier in loaded and carrier not in after.get(path, []):
                after.setdefault(path, []).append(carrier)
                say({"library": path, "error": ""})
                load(path)
                retried = True
with open("/proc/self/maps") as maps:
    mapped = sorted({line.split(None, 5)[5].strip() for line in maps if len(line.split(None, 5)) == 6})
say({"mapped": [path for path in mapped if path.startswith("/")]})
"""


@dataclass(frozen=True)
class Pin:
    """A ``dist==version`` line of the ``--lowest`` constraints file."""

    distribution: str
    version: str
    specifier: str  # what it had to satisfy (every requirement seen on it, combined)


@dataclass(frozen=True)
class ImportResult:
    """One module verify imports (or leaves out, saying why), and how its import went."""

    name: str  # dotted module name: "pkg", "pkg.core_cc"
    # "package" (a folder with __init__), "module" (a .py file), "extension" (an extension module),
    # "given" (named by --import)
    kind: str
    member: str | None  # the file it was found from, as installed in site-packages; None when given
    # "ok", "failed", "skipped" (not imported: an extension module for another interpreter, or an untagged
    # .so), "not-run" (the install failed, or the process died before this import)
    status: str
    error: str | None = None  # failed: Python's last error line; skipped, not-run: why
    # What verify called after the import, as the package's consumers do: "libcudf.load_library()"
    # (RAPIDS' library packages load their libraries, and those of the packages they need, so).
    called: str | None = None

    @property
    def importable(self) -> bool:
        return self.status != "skipped"


@dataclass(frozen=True)
class LibraryLoad:
    """A shared library of the wheel that is not an extension module (a framework operator library, a
    library its code opens with ctypes), loaded with ``dlopen`` after the imports; or a program of the
    wheel, whose libraries this machine's dynamic loader finds (``LD_TRACE_LOADED_OBJECTS``: traced, not
    run).
    Proof that it finds what it needs once installed."""

    member: str  # as installed in site-packages
    # "ok", "failed", "skipped" (it needs the NVIDIA driver, which this machine lacks), "not-run"
    status: str
    error: str | None = None
    kind: str = "library"  # "library" (dlopen'ed) or "program" (traced by the loader)
    # The wheel's own libraries (installed paths) it loaded only once they were: it needs their sonames
    # and its search path misses them, as a plugin its host library loads (check: found-loaded-first).
    after: tuple[str, ...] = ()

    @property
    def failed(self) -> bool:
        return self.status == "failed"


@dataclass(frozen=True)
class LoadedLibrary:
    """One NVIDIA library mapped by the import."""

    soname: str  # the mapped file's name
    name: str  # soname stem
    path: str
    distribution: str | None  # the installed distribution whose RECORD lists the file (None: none does)
    expected: tuple[str, ...]  # distributions that may provide it (manifest, else catalog)
    ok: bool


@dataclass(frozen=True)
class VerifyProblem:
    # "install", "import", "outside-provider", "mapped-twice", "missing"; and "unresolved", why an import
    # failed or a library is missing in terms of the wheel: one of its files needs an NVIDIA soname that
    # no Requires-Dist brings in, or that no RPATH/RUNPATH reaches.
    kind: str
    message: str
    member: str | None = None  # "unresolved": the wheel member that needs the library
    soname: str | None = None  # "unresolved": the DT_NEEDED it cannot find
    # The CUDA major of the install it was found in, where a wheel of several was verified once per
    # major (``VerifyReport.runs``); None otherwise.
    cuda_major: int | None = None


@dataclass(frozen=True)
class VerifyComparison:
    """A wheel's problems told apart by those of the wheel it was made from (``verify --against``):
    what a repair broke, from what the package does wherever it is installed (a requirement it does
    not declare, a numpy it was not built for, a licence asked for at import)."""

    wheel: str  # the original, as given
    new: tuple[VerifyProblem, ...]  # the wheel's problems the original does not have
    shared: tuple[VerifyProblem, ...]  # the wheel's problems the original has too
    gone: tuple[VerifyProblem, ...]  # the original's problems the wheel does not have


# Asked of a --python interpreter (stdlib only, any Python 3): what pip and import go by.
_ABOUT_PYTHON = (
    "import importlib.machinery, json, platform, sys; print(json.dumps({'executable': sys.executable, "
    "'implementation': platform.python_implementation(), 'version': platform.python_version(), "
    "'suffixes': importlib.machinery.EXTENSION_SUFFIXES}))"
)


@dataclass(frozen=True)
class Interpreter:
    """The Python a verify makes its venvs with: the one running slimwheel, or ``--python``'s."""

    executable: str
    implementation: str  # "CPython"
    version: str  # "3.12.1"
    extension_suffixes: tuple[str, ...]  # what its import loads: ".cpython-312-x86_64-linux-gnu.so", ...
    # The wheel tags pip installs for it on this machine (hundreds: left out of JSON, as "_" fields are).
    _tags: frozenset[str] = field(repr=False)
    running: bool = True  # the interpreter running slimwheel (its venv is made in-process)

    def supports(self, tags: Iterable[str]) -> bool:
        """Whether pip installs a wheel of ``tags`` for it."""
        return not self._tags.isdisjoint(tags)

    @property
    def described(self) -> str:
        return f"{self.implementation} {self.version}, {self.executable}"


def interpreter_of(python: Path | str | None = None) -> Interpreter:
    """The interpreter ``python`` names (a path, or a command on PATH: ``python3.12``), asked in a child
    process; None: the one running slimwheel. Its tags are those ``packaging`` gives its implementation
    and version on this machine's platform. A UsageError where it does not run as a Python."""
    if python is None:
        return Interpreter(
            executable=sys.executable,
            implementation=platform.python_implementation(),
            version=platform.python_version(),
            extension_suffixes=tuple(importlib.machinery.EXTENSION_SUFFIXES),
            _tags=frozenset(str(tag) for tag in packaging.tags.sys_tags()),
        )
    hint = "name a Python 3 interpreter: --python python3.12, or its path"
    try:
        asked = subprocess.run(
            [str(python), "-c", _ABOUT_PYTHON], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"--python {python}: cannot run it ({exc})", hint=hint) from exc
    try:
        about = json.loads(asked.stdout)
        version = tuple(int(part) for part in about["version"].split(".")[:2])
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        last = (asked.stderr.strip().splitlines() or ["no output"])[-1]
        raise UsageError(f"--python {python}: not a Python 3 that answers ({last})", hint=hint) from exc
    platforms = list(packaging.tags.platform_tags())
    tags = list(packaging.tags.compatible_tags(version, platforms=platforms))
    if about["implementation"] == "CPython":
        tags = [*packaging.tags.cpython_tags(version, platforms=platforms), *tags]
    return Interpreter(
        executable=str(about["executable"]),
        implementation=str(about["implementation"]),
        version=str(about["version"]),
        extension_suffixes=tuple(str(suffix) for suffix in about["suffixes"]),
        _tags=frozenset(str(tag) for tag in tags),
        running=False,
    )


@dataclass(frozen=True)
class PlannedInstall:
    """One fresh venv of a verify: what pip installs there, and what is imported and loaded in it."""

    cuda_major: int | None  # the one CUDA major whose libraries its extras install (VerifyReport's)
    extras: tuple[str, ...]
    requirement: str  # what pip is given: the wheel's path, with its extras
    pins: tuple[Pin, ...]  # --lowest
    imports: tuple[ImportResult, ...]  # "not-run" (to import), or "skipped", saying why
    # Loaded after the imports (with any extension module an import leaves for want of the driver).
    libraries: tuple[str, ...]
    programs: tuple[str, ...]  # traced after the imports
    left_alone: tuple[LibraryLoad, ...]  # another CUDA major's builds, which its own install loads


@dataclass(frozen=True)
class VerifyPlan:
    """What ``verify_wheel`` would do, nothing installed (``verify --dry-run``)."""

    wheel: str
    distribution: str
    version: str
    pip_configuration: str  # "isolated" (only the sources given) or "user's"
    sources: tuple[str, ...]  # the pip options naming sources
    find_links: tuple[str, ...]  # --find-links, folders made absolute (pip runs in a scratch folder)
    lowest: bool
    python: Interpreter  # what each venv is made with
    installs: tuple[PlannedInstall, ...]  # one per CUDA major of a wheel repaired for several


@dataclass(frozen=True)
class VerifyReport:
    wheel: str
    distribution: str
    version: str
    import_name: str  # the first module imported (kept from the time verify imported one module)
    imports: tuple[ImportResult, ...]  # every module imported, in order, and those left out
    pip_configuration: str  # "isolated" (only the sources given) or "user's"
    sources: tuple[str, ...]  # the pip options naming sources
    lowest: bool
    pins: tuple[Pin, ...]
    installed: tuple[str, ...]  # "dist==version" found in the venv after the install
    libraries: tuple[LoadedLibrary, ...]
    problems: tuple[VerifyProblem, ...]
    loads: tuple[LibraryLoad, ...] = ()  # the wheel's other shared libraries, loaded after the imports
    extras: tuple[str, ...] = ()  # the wheel's extras installed with it (``pip install 'pkg.whl[cuda]'``)
    # NVIDIA sonames only files whose load was skipped need (for want of the NVIDIA driver, or of a
    # library the wheel leaves to the host or to an extra): not judged on this machine.
    unjudged: tuple[str, ...] = ()
    # The driver's libraries this machine lacks that stand-ins took the place of (``slimwheel.elf.stub``)
    # while the wheel's files were loaded.
    stand_ins: tuple[str, ...] = ()
    against: VerifyComparison | None = None  # ``verify --against``: its problems against the original's
    # The one CUDA major whose libraries the extras installed, in a wheel repaired for several (repair
    # --cuda 12,13): the other majors' builds were left alone. None: one major, or all of them.
    cuda_major: int | None = None
    # A wheel repaired for several majors, verified by default: one install per major, each with that
    # major's extras alone (one user installs one major's; two majors' NCCL wheels install the same
    # files), this report their sum. Empty otherwise.
    runs: tuple[VerifyReport, ...] = ()
    python: str = ""  # the interpreter each venv was made with: "CPython 3.12.1, /usr/bin/python3.12"

    @property
    def ok(self) -> bool:
        """No problem; against an original, none that the original does not have."""
        return not (self.against.new if self.against is not None else self.problems)


@dataclass(frozen=True)
class _WheelFacts:
    distribution: str
    version: str
    requires_dist: tuple[str, ...]
    imports: tuple[ImportResult, ...]  # status "not-run" (or "skipped")
    manifest: Manifest | None
    needed: frozenset[str]  # DT_NEEDED of the wheel's own ELF files
    # soname -> the installed paths of the wheel's ELF files that need it
    needed_by: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # A driver library's soname (``libcuda.so.1``) -> the driver API functions the files that need it
    # import (``slimwheel.analysis.libraries.DRIVER_API``): what a stand-in must export.
    driver_imports: Mapping[str, frozenset[str]] = field(default_factory=dict)
    machine: str | None = None  # the machine of the files that need a driver library
    libraries: tuple[str, ...] = ()  # shared libraries that are not extension modules, as installed
    programs: tuple[str, ...] = ()  # executables (``ElfFacts.is_program``), as installed
    # soname -> the installed path of the wheel's file that carries it (``ldso.soname_carriers``): a
    # library whose search path misses it finds it once that file is loaded.
    carriers: Mapping[str, str] = field(default_factory=dict)
    extension_modules: tuple[str, ...] = ()  # those this Python can import, as installed
    # Libraries (soname stems) the wheel's repair left to the host (its manifest: --exclude nvinfer).
    left_to_host: frozenset[str] = frozenset()
    # Distributions only an extra of the wheel installs, with those extras (on this interpreter).
    optional: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Vendored NVIDIA copies repair left in the wheel (its manifest: kept on purpose, or no NVIDIA
    # wheel of the CUDA major replaces them), as installed: where they load from is where they belong.
    kept_copies: frozenset[str] = frozenset()


def verify_wheel(
    path: Path,
    catalog: Catalog,
    *,
    index_url: str | None = None,
    find_links: Sequence[str] = (),
    import_names: Sequence[str] = (),
    lowest: bool = False,
    import_name: str | None = None,
    extras: Sequence[str] | None = None,
    progress: Progress = SILENT,
    python: Path | str | None = None,
) -> VerifyReport:
    """Install ``path`` with its dependencies into a fresh venv, import it, and check the mapped libraries.

    ``import_names`` (``--import``, repeatable) replace what is imported by default: every top-level
    package and module of the wheel and each of its extension modules (:func:`find_imports`), all in one
    fresh process, one after the other; ``/proc/self/maps`` is read after the last. ``import_name`` is the
    older spelling of a single name. ``extras``: the wheel's extras to install with it (default: those
    that bring in the NVIDIA libraries its slimwheel manifest lists as optional, which repair left behind
    the author's extras: without them those files do not load). ``python``: the interpreter the venv is
    made with (``interpreter_of``; default: this one). ``progress`` is told of the install and
    import steps. Bad input (not a wheel, nothing to import) raises an ``InputError``, an extra that
    is no extra's name a ``UsageError``; an install or import that fails is a problem in the report.
    """
    path = Path(path)
    names = (*import_names, *([import_name] if import_name else []))
    plan, facts_of = _planned(
        path, catalog, index_url=index_url, find_links=find_links, import_names=names, lowest=lowest,
        extras=extras, python=interpreter_of(python),
    )  # fmt: skip
    reports = [
        _verify_install(path, catalog, plan, install, facts, index_url=index_url, progress=progress)
        for install, facts in zip(plan.installs, facts_of, strict=True)
    ]
    return reports[0] if len(reports) == 1 else _sum_of_runs(reports)


def plan_verify(
    path: Path,
    catalog: Catalog,
    *,
    index_url: str | None = None,
    find_links: Sequence[str] = (),
    import_names: Sequence[str] = (),
    lowest: bool = False,
    extras: Sequence[str] | None = None,
    python: Path | str | None = None,
) -> VerifyPlan:
    """What :func:`verify_wheel` would install, import and load, with the same arguments, nothing run:
    one install per CUDA major of a wheel repaired for several, else one."""
    return _planned(
        Path(path), catalog, index_url=index_url, find_links=find_links, import_names=import_names,
        lowest=lowest, extras=extras, python=interpreter_of(python),
    )[0]  # fmt: skip


def _planned(
    path: Path,
    catalog: Catalog,
    *,
    index_url: str | None,
    find_links: Sequence[str],
    import_names: Sequence[str],
    lowest: bool,
    extras: Sequence[str] | None,
    python: Interpreter,
) -> tuple[VerifyPlan, tuple[_WheelFacts, ...]]:
    """``plan_verify``, with the facts of the wheel each install judges by (its major's)."""
    facts = _read_wheel(path, list(dict.fromkeys(import_names)), python)
    by_major = _extras_by_major(facts.manifest)
    if extras is not None:
        installs = [tuple(dict.fromkeys(extras))]
    elif by_major:  # one install per major: a user installs one major's extra, never all of them
        installs = list(by_major.values())
    else:
        installs = [manifest_extras(facts.manifest)]
    for extra in (extra for asked in installs for extra in asked):
        if not is_extra_name(extra):
            where = "--extra" if extras is not None else f"{facts.distribution}'s slimwheel manifest names"
            raise UsageError(
                f"{where} {extra!r}: not an extra's name (letters, digits, '.', '_', '-')",
                hint="name one of the extras the wheel's METADATA offers (Provides-Extra)",
            )
    # pip runs in a scratch folder: a relative folder is made absolute, or pip would look there.
    find_links = [str(Path(link).resolve()) if Path(link).exists() else link for link in find_links]
    sources = _pip_sources(index_url, find_links)
    planned, facts_of = [], []
    for asked in installs:
        major = _major_installed(facts.manifest, asked)
        mine, left_alone = _of_major(facts, major, by_major) if major is not None else (facts, ())
        planned.append(
            PlannedInstall(
                cuda_major=major,
                extras=asked,
                requirement=str(path.resolve()) + (f"[{','.join(asked)}]" if asked else ""),
                pins=lowest_pins(mine.requires_dist, catalog, extras=asked, own=mine.distribution)
                if lowest
                else (),
                imports=mine.imports,
                libraries=mine.libraries,
                programs=mine.programs,
                left_alone=left_alone,
            )
        )
        facts_of.append(mine)
    plan = VerifyPlan(
        wheel=str(path),
        distribution=facts.distribution,
        version=facts.version,
        pip_configuration="isolated" if sources else "user's",
        sources=tuple(sources),
        find_links=tuple(find_links),
        lowest=lowest,
        python=python,
        installs=tuple(planned),
    )
    return plan, tuple(facts_of)


def _verify_install(
    path: Path,
    catalog: Catalog,
    plan: VerifyPlan,
    install: PlannedInstall,
    facts: _WheelFacts,
    *,
    index_url: str | None,
    progress: Progress,
) -> VerifyReport:
    """``verify_wheel`` of one planned install (``facts``: the wheel's, as that install judges it)."""
    major, asked, pins, left_alone = install.cuda_major, install.extras, install.pins, install.left_alone
    lowest, sources, find_links = plan.lowest, plan.sources, plan.find_links
    isolated = plan.pip_configuration == "isolated"
    to_import = [target.name for target in facts.imports if target.importable]
    to_import = list(dict.fromkeys(to_import))

    def report(
        installed: Sequence[str] = (),
        libraries: Sequence[LoadedLibrary] = (),
        problems: Sequence[VerifyProblem] = (),
        imports: Sequence[ImportResult] = facts.imports,
        loads: Sequence[LibraryLoad] = (),
        *,
        unjudged: Sequence[str] = (),
        stand_ins: Sequence[str] = (),
    ) -> VerifyReport:
        return VerifyReport(
            wheel=str(path),
            distribution=facts.distribution,
            version=facts.version,
            import_name=to_import[0] if to_import else "",
            imports=tuple(imports),
            pip_configuration="isolated" if isolated else "user's",
            sources=tuple(sources),
            lowest=lowest,
            pins=pins,
            installed=tuple(installed),
            libraries=tuple(libraries),
            problems=tuple(problems),
            loads=tuple(loads),
            extras=asked,
            unjudged=tuple(unjudged),
            stand_ins=tuple(stand_ins),
            cuda_major=major,
            python=plan.python.described,
        )

    with scratch_folder("slimwheel-verify-") as temporary:
        work = Path(temporary)
        made = _make_venv(plan.python, work / "venv")
        if made is not None:
            return report(problems=[made], imports=[_not_run(t, "no venv was made") for t in facts.imports])
        python = work / "venv" / "bin" / "python"
        argv = _pip_install(python, work, install.requirement, sources=sources, isolated=isolated, pins=pins)
        if index_url and find_links:
            with progress.step("finding the wheels of --find-links that pip would take from the index"):
                argv += _local_over_index(argv, work, find_links)
        with progress.step(f"installing {path.name} and its requirements (pip)"):
            installed = _run(argv, cwd=work, timeout=PIP_TIMEOUT)
        if installed.returncode != 0:
            return report(
                problems=[VerifyProblem("install", f"pip install failed: {_last_error(installed)}")],
                imports=[_not_run(target, "the install failed") for target in facts.imports],
            )
        site = _site_packages(python)
        owners, versions = _installed_files(site)
        installed_names = tuple(f"{name}=={version}" for name, version in sorted(versions.items()))
        # An empty working directory: sys.path[0] is '' with -c, and nothing there may shadow the wheel.
        (work / "cwd").mkdir()
        results_file = work / "imports.jsonl"
        with progress.step(f"importing {', '.join(to_import)}"):
            probe = _run(
                [str(python), "-c", _PROBE, str(results_file), *to_import],
                cwd=work / "cwd",
                timeout=IMPORT_TIMEOUT,
                clean=True,
            )
        probed = _read_probe(results_file)
        imports, problems = _import_results(
            facts.imports, probed, probe, lacks_driver=_lacks_driver(python, work, probed)
        )
        problems = [
            _unrequired_library(_unrequired_module(problem, site), owners, catalog, facts.needed)
            for problem in problems
        ]
        # Once the imports went well, the wheel's other shared libraries are loaded, and the extension
        # modules whose import needed the NVIDIA driver: loaded, not run, with stand-ins for the
        # driver's libraries this machine lacks.
        unrun = _unrun_modules(imports, facts.extension_modules)
        members = [*unrun, *facts.libraries] if probed.mapped is not None and not problems else []
        imported = [t.name for t in imports if t.status == "ok"]
        loads, mapped, more, stand_ins = _load_and_trace(
            _LoadRun(python, work, site, imported, progress, owners),
            members,
            probed.mapped,
            facts,
            absent=lambda member, error: _left_out(error, facts, asked, member),
        )
        loads = [*loads, *left_alone]
        problems += more
        if mapped is None:
            return report(
                installed_names, problems=[*problems, *diagnose(path, catalog)], imports=imports, loads=loads
            )
        skipped = {load.member for load in loads if load.status == "skipped"}
        libraries, judged, unjudged = _judge(mapped, facts, imported, catalog, owners, skipped=skipped)
        if problems:  # a failed import explains a library that is not mapped
            judged = [problem for problem in judged if problem.kind != "missing"]
        problems += judged
        if any(problem.kind in ("import", "missing", "load") for problem in problems):
            problems += diagnose(path, catalog)
        return report(
            installed_names,
            libraries,
            problems,
            imports,
            loads,
            unjudged=unjudged,
            stand_ins=sorted(stand_ins),
        )


def verify_against(
    path: Path,
    original: Path,
    catalog: Catalog,
    *,
    index_url: str | None = None,
    find_links: Sequence[str] = (),
    import_names: Sequence[str] = (),
    lowest: bool = False,
    extras: Sequence[str] | None = None,
    progress: Progress = SILENT,
    python: Path | str | None = None,
) -> VerifyReport:
    """:func:`verify_wheel` of ``path``, then of ``original`` (the wheel it was made from) with the
    same options, each in its own fresh venv: ``path``'s report, with its problems told apart
    (``against``) by whether the original has them too. A problem is the same where its kind, member,
    soname and message are, the venv's site-packages folder and the wheel's file name left out.
    A UsageError where the two wheels are not of one distribution."""
    names = [_distribution_of(Path(wheel)) for wheel in (path, original)]
    if names[0] != names[1]:
        raise UsageError(
            f"--against {Path(original).name}: a wheel of {names[1]}, not of {names[0]}",
            hint="compare a repaired wheel with the wheel it was repaired from",
        )
    run = partial(
        verify_wheel,
        catalog=catalog,
        index_url=index_url,
        find_links=find_links,
        import_names=import_names,
        lowest=lowest,
        extras=extras,
        progress=progress,
        python=python,
    )
    report = run(path)
    return replace(report, against=compare_problems(report, run(original)))


def _distribution_of(path: Path) -> str:
    with Wheel.open(path) as wheel:  # its zip directory only; a bad name or archive is refused here
        return wheel.distribution


def compare_problems(report: VerifyReport, original: VerifyReport) -> VerifyComparison:
    """``report``'s problems against ``original``'s (see :func:`verify_against`)."""
    theirs = [(_problem_key(problem, original.wheel), problem) for problem in original.problems]
    mine = [(_problem_key(problem, report.wheel), problem) for problem in report.problems]
    their_keys, my_keys = {key for key, _ in theirs}, {key for key, _ in mine}
    return VerifyComparison(
        wheel=original.wheel,
        new=tuple(problem for key, problem in mine if key not in their_keys),
        shared=tuple(problem for key, problem in mine if key in their_keys),
        gone=tuple(problem for key, problem in theirs if key not in my_keys),
    )


# Where a message names a file of the venv verify made: each run makes its own.
_IN_SITE_PACKAGES = re.compile(r"\S*/site-packages/")


def _problem_key(problem: VerifyProblem, wheel: str) -> tuple[str, str | None, str | None, str]:
    message = _IN_SITE_PACKAGES.sub("", problem.message).replace(Path(wheel).name, "")
    return problem.kind, problem.member, problem.soname, message


def _make_venv(python: Interpreter, folder: Path) -> VerifyProblem | None:
    """A venv without pip at ``folder``, of ``python``; the problem where it could not be made."""
    if python.running:
        venv.EnvBuilder(with_pip=False, clear=True).create(folder)
        return None
    argv = [python.executable, "-m", "venv", "--without-pip", "--clear", str(folder)]
    made = _run(argv, cwd=folder.parent, timeout=IMPORT_TIMEOUT, clean=True)
    if made.returncode == 0:
        return None
    return VerifyProblem("install", f"{python.described} made no venv: {_last_error(made)}")


def _pip_install(
    python: Path, work: Path, target: str, *, sources: Sequence[str], isolated: bool, pins: Sequence[Pin]
) -> list[str]:
    """pip's command line that installs ``target`` (the wheel, with its extras) into ``python``'s venv."""
    argv = [sys.executable, "-m", "pip", "--python", str(python)]
    if isolated:
        argv.append("--isolated")
    argv += ["--disable-pip-version-check", "install", "--no-input", *sources]
    if pins:
        constraints = work / "constraints.txt"
        constraints.write_text("".join(f"{pin.distribution}=={pin.version}\n" for pin in pins))
        argv += ["-c", str(constraints)]
    argv.append(target)
    return argv


def _pip_sources(index_url: str | None, find_links: Sequence[str]) -> list[str]:
    """pip's options for where to install from: the index given, else only the folders given."""
    sources: list[str] = []
    if index_url:
        sources += ["--index-url", index_url]
    elif find_links:
        sources.append("--no-index")
    for link in find_links:
        sources += ["--find-links", link]
    return sources


def _local_over_index(argv: Sequence[str], work: Path, find_links: Sequence[str]) -> list[str]:
    """The wheels in the ``find_links`` folders that the install ``argv`` would otherwise take from the
    index: of the same name and version as what pip resolves (found by a dry run). pip breaks that tie
    in the index's favour, so a repaired dependency (cumm-cu118 beside the spconv-cu118 it serves) lost
    to the published one it was made from; named on the command line, it is the one installed."""
    local: dict[tuple[str, str], Path] = {}
    for folder in find_links:
        for wheel in sorted(Path(folder).glob("*.whl")) if Path(folder).is_dir() else ():
            try:
                name, version, _, _ = parse_wheel_filename(wheel.name)
            except ValueError:
                continue
            local.setdefault((str(name), str(version)), wheel.resolve())
    if not local:
        return []
    report = work / "resolved.json"
    install = list(argv).index("install")
    dry_run = [
        *argv[: install + 1],
        "--dry-run",
        "--ignore-installed",
        "--report",
        str(report),
        *argv[install + 1 :],
    ]
    if _run(dry_run, cwd=work, timeout=PIP_TIMEOUT).returncode != 0:
        return []  # the install itself fails the same way, and says why
    chosen = []
    for item in json.loads(report.read_text(encoding="utf-8")).get("install", []):
        metadata, url = item.get("metadata", {}), item.get("download_info", {}).get("url", "")
        try:
            key = (
                canonicalize_name(str(metadata.get("name", ""))),
                str(Version(str(metadata.get("version")))),
            )
        except InvalidVersion:
            continue
        if key in local and not url.startswith("file:"):
            chosen.append(str(local[key]))
    return chosen


def _not_run(target: ImportResult, why: str) -> ImportResult:
    return target if not target.importable else replace(target, status="not-run", error=why)


def _records(results_file: Path) -> list[dict[str, object]]:
    """The JSON objects the probe wrote, one per line; lines cut short by a crash are left out."""
    try:
        lines = results_file.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    records: list[dict[str, object]] = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


# The platform this process runs on: what verify's loads are judged for.
_HOST = Platform(sys.platform, platform.machine())


# dlopen's words when a library needs the NVIDIA driver, which a machine without a GPU does not have.
_DRIVER_STEMS = "|".join(sorted(map(re.escape, DRIVER_LIBRARY_NAMES)))
_NEEDS_DRIVER = re.compile(rf"lib({_DRIVER_STEMS})\.so(\.\d+)*: cannot open shared object file")
# A package's own words for it: mlrs-cuda 0.1.0 raises "mlrs-cuda requires the cuda runtime/driver;
# none was detected"; torch's "Found no NVIDIA driver on your system". Read so only where this machine
# cannot load libcuda.so.1.
_MENTIONS_DRIVER = re.compile(
    r"\b(cuda|nvidia|gpu)\b.*\bdriver|\bdriver\b.*\b(cuda|nvidia|gpu)\b", re.IGNORECASE
)
_DRIVER_SKIP = "it needs the NVIDIA driver, which this machine does not have"


@dataclass(frozen=True)
class _ProbeResult:
    errors: dict[str, str | None]  # each name imported -> None (it worked) or Python's last error line
    mapped: list[str] | None  # the mapped paths; None when the probe died before it read them
    loaded_as: dict[str, str]  # a name not imported: its file was loaded already, under this name
    called: dict[str, str] = field(default_factory=dict)  # a name imported -> what was called after it


def _read_probe(results_file: Path) -> _ProbeResult:
    """What the probe wrote."""
    errors: dict[str, str | None] = {}
    mapped: list[str] | None = None
    loaded_as: dict[str, str] = {}
    called: dict[str, str] = {}
    for record in _records(results_file):
        paths = record.get("mapped")
        name = record.get("name")
        if isinstance(paths, list):
            mapped = [str(p) for p in paths]
        elif isinstance(name, str):
            error = record.get("error")
            chain = record.get("chain")
            errors[name] = None if error is None else _with_driver_cause(str(error), chain)
            other = record.get("loaded_as")
            if isinstance(other, str):
                loaded_as[name] = other
            then = record.get("called")
            if isinstance(then, str):
                called[name] = then
    return _ProbeResult(errors, mapped, loaded_as, called)


def _with_driver_cause(error: str, chain: object) -> str:
    """Python's last error line, and the line of the exceptions it was raised from that says the
    NVIDIA driver is missing, where the last line does not: pynvvideocodec 2.2.4 raises its own
    RuntimeError ("- Verify LD_LIBRARY_PATH includes NVIDIA library directories") from the ImportError
    of an extension module that needs ``libcuda.so.1``."""
    if _NEEDS_DRIVER.search(error) or not isinstance(chain, list):
        return error
    for text in chain:
        for line in str(text).splitlines():
            if _NEEDS_DRIVER.search(line):
                return f"{error} (raised from: {line.strip()})"
    return error


def _load_libraries(  # noqa: PLR0917 (one call site, each argument needed)
    python: Path,
    work: Path,
    site: Path,
    members: Sequence[str],
    to_import: Sequence[str],
    progress: Progress,
    mapped: list[str] | None,
    *,
    stand_ins: Mapping[str, Path] | None = None,
    carriers: Mapping[str, str],
    absent: Callable[[str, str], str | None],
) -> tuple[list[LibraryLoad], list[str] | None, list[VerifyProblem]]:
    """Load the wheel's other shared libraries in a process of their own, after the same imports (so a
    crash is the loading's): each load's result, the paths mapped then (``mapped``, the imports' own,
    when it died or there was nothing to load), and a "load" problem for each that failed.
    ``stand_ins``: soname -> a stand-in file for a driver library this machine lacks, whose folder
    goes first on the loader's path (it holds nothing else). ``carriers``: soname -> the wheel's file
    of it (installed path); a load that missed one of those is tried again once that file is loaded.
    ``absent``: why a load that failed so was skipped, where the library it lacks is one the wheel
    leaves to the host or to an extra."""
    if not members:
        return [], mapped, []
    loads_file = work / "loads.jsonl"
    paths = [str(site / member) for member in members]
    loaded = {soname: str(site / member) for soname, member in carriers.items() if member in members}
    given = json.dumps({"carriers": loaded, "cannot_open": _CANNOT_OPEN.pattern})
    folders = sorted({str(path.parent) for path in (stand_ins or {}).values()})
    with progress.step(f"loading the wheel's {len(paths)} other shared libraries"):
        loading = _run(
            [str(python), "-c", _PROBE, str(loads_file), *to_import, "--load", given, *paths],
            cwd=work / "cwd",
            timeout=IMPORT_TIMEOUT,
            clean=True,
            library_path=folders,
        )
    mapped_after = _read_probe(loads_file).mapped
    results, after = _read_loads(loads_file)
    loads = _load_results(members, site, results, mapped_after is not None, loading, absent=absent)
    installed = {str(site / member): member for member in members}
    loads = [
        replace(load, after=tuple(installed.get(path, path) for path in after[str(site / load.member)]))
        if load.status == "ok" and str(site / load.member) in after
        else load
        for load in loads
    ]
    problems = [VerifyProblem("load", f"loading {r.member} failed: {r.error}") for r in loads if r.failed]
    return loads, mapped_after or mapped, problems


def _read_loads(results_file: Path) -> tuple[dict[str, str | None], dict[str, tuple[str, ...]]]:
    """What the probe wrote of its library loads, its last word on each: path -> None (loaded),
    dlopen's error, or "" (a second load that did not end); and path -> the libraries it was loaded
    only after."""
    loads: dict[str, str | None] = {}
    after: dict[str, tuple[str, ...]] = {}
    for record in _records(results_file):
        library = record.get("library")
        if isinstance(library, str):
            error = record.get("error")
            loads[library] = None if error is None else str(error)
            first = record.get("after")
            if isinstance(first, list) and first:
                after[library] = tuple(str(path) for path in first)
    return loads, after


# Asks which of the sonames argv[1:] this machine cannot load, one per line.
_CANNOT_LOAD = r"""
import ctypes, sys
for soname in sys.argv[1:]:
    try:
        ctypes.CDLL(soname)
    except OSError:
        print(soname)
"""


# Python's words for an import of a module that is nowhere: "ModuleNotFoundError: No module named 'pycuda'".
_NO_MODULE = re.compile(r"ModuleNotFoundError: No module named '([^'.]+)")


def _unrequired_module(problem: VerifyProblem, site: Path) -> VerifyProblem:
    """An import that failed for want of a top-level module nothing installed holds, with that said:
    pynvvideocodec 2.2.4 ships top-level ``samples`` and ``benchmarks`` whose scripts import pycuda,
    torch and numpy, which it does not require. Its author adds the requirement or moves the scripts;
    ``--import`` names what to verify meanwhile."""
    match = _NO_MODULE.search(problem.message) if problem.kind == "import" else None
    if match is None:
        return problem
    top = match.group(1)
    if (site / top).exists() or (site / f"{top}.py").exists() or any(site.glob(f"{glob.escape(top)}.*.so")):
        return problem
    hint = f" ({top}: nothing the wheel requires installs it; --import NAME imports only the modules named)"
    return replace(problem, message=problem.message + hint)


# A library file name in an error message: "Failure finding "libnvJitLink.so.13 or libnvJitLink.so.12"".
_LIBRARY_NAME = re.compile(r"\blib[\w+-]+\.so(?:\.\d+)*\b")


def _unrequired_library(
    problem: VerifyProblem, owners: Mapping[str, str], catalog: Catalog, needed: Collection[str]
) -> VerifyProblem:
    """An import that failed naming NVIDIA libraries no installed distribution ships, with the NVIDIA
    wheels that do: gpu4pyscf-cuda12x 1.9.2 loads nvJitLink at import by name (through
    cuda-pathfinder), "Failure finding libnvJitLink.so.13 or libnvJitLink.so.12", and requires no
    nvidia-nvjitlink. Its author adds the requirement. A soname the wheel's files need (``needed``)
    is left to check's diagnosis, which follows."""
    if problem.kind != "import":
        return problem
    installed = {posixpath.basename(path) for path in owners}
    hints = []
    for soname in dict.fromkeys(_LIBRARY_NAME.findall(problem.message)):
        if soname in installed or soname in needed:
            continue
        shipping = sorted({provider.distribution for provider in catalog.providers(soname=soname)})
        if shipping:
            hints.append(
                f"{soname}: {' or '.join(shipping)} ships it, which nothing the wheel requires installs"
            )
    return replace(problem, message=f"{problem.message} ({'; '.join(hints)})") if hints else problem


def _unrun_modules(imports: Sequence[ImportResult], modules: Sequence[str]) -> list[str]:
    """The extension modules (installed paths) whose import was skipped for want of the NVIDIA
    driver: each such extension module's own, and, for a name ``--import`` gave, those of the wheel
    it would have imported (``pkg`` holds ``pkg/_ext....so``; ``pkg._ext`` is ``pkg/_ext....so``)."""
    unrun = [t.member for t in imports if t.kind == "extension" and t.member and _for_driver(t)]
    for target in imports:
        if target.kind == "given" and _for_driver(target):
            path = target.name.replace(".", "/")
            unrun += [m for m in modules if m.startswith((f"{path}/", f"{path}.")) and m not in unrun]
    return unrun


# dlopen's words for a library it did not find: "libnvinfer.so.10: cannot open shared object file".
_CANNOT_OPEN = re.compile(r"([^\s:/]+\.so[.\d]*): cannot open shared object file")


def _left_out(error: str, facts: _WheelFacts, extras: Collection[str], member: str = "") -> str | None:
    """Why a load that failed for want of a library is no problem of the wheel's, as check judges it:
    the library is one its repair left to the host (``--exclude nvinfer``, in its manifest), one
    another CUDA major's extra installs for ``member`` (a wheel repaired for several, verified with one
    major's extra), or part of an NVIDIA product whose distribution only an extra not installed
    requires (cudaq-qec-cu12 0.8.1's TensorRT decoder plugin: tensorrt-cu12 comes with its extra
    'trt-decoder'). None otherwise."""
    match = _CANNOT_OPEN.search(error)
    if match is None:
        return None
    soname = match.group(1)
    left = name_of_library(facts.left_to_host, soname)
    if left is not None:
        return (
            f"it needs {soname}, which the wheel leaves to the host (--exclude {left}); this machine lacks it"
        )
    for library in facts.manifest.libraries if facts.manifest is not None else ():
        gating = _extras_gating(library.requirement)
        if (
            library.cuda_major is not None
            and library.soname == soname
            and member in library.needed_by
            and gating
            and not set(gating) & set(extras)
        ):
            return (
                f"it needs {soname}, CUDA {library.cuda_major}'s, which only the extra "
                f"{' or '.join(map(repr, gating))} installs ({library.distribution}), not installed here "
                f"(--extra {gating[0]} installs it)"
            )
    product = nvidia_product_of(soname)
    uninstalled = sorted(name for name, by in facts.optional.items() if not set(by) & set(extras))
    distribution = product.distributed_as(uninstalled) if product else None
    if product is None or distribution is None:
        return None
    extras_of = facts.optional[distribution]
    listed = " or ".join(repr(extra) for extra in extras_of)
    # The extra that brings in least besides ('trt-decoder', not 'all').
    size = {extra: sum(extra in by for by in facts.optional.values()) for extra in extras_of}
    fewest = min(extras_of, key=lambda extra: (size[extra], extra))
    return (
        f"it needs {soname}, part of {product.name}, which only the extra {listed} installs "
        f"({distribution}), not installed here (--extra {fewest} installs it)"
    )


def _for_driver(target: ImportResult) -> bool:
    """Whether ``target`` was skipped because its import needs the NVIDIA driver."""
    return target.status == "skipped" and (target.error or "").startswith(_DRIVER_SKIP)


def _lacks_driver(python: Path, work: Path, probed: _ProbeResult) -> bool:
    """Whether an import failed in words of its own about the NVIDIA driver (not dlopen's, which say
    it plainly) on a machine that cannot load ``libcuda.so.1``."""
    if not any(error and _MENTIONS_DRIVER.search(error) for error in probed.errors.values()):
        return False
    asked = _run([str(python), "-c", _CANNOT_LOAD, "libcuda.so.1"], cwd=work, timeout=60, clean=True)
    return "libcuda.so.1" in asked.stdout.split()


def _stand_ins(
    python: Path, folder: Path, wanted: Mapping[str, frozenset[str]], machine: str | None
) -> dict[str, Path]:
    """Stand-ins (``slimwheel.elf.stub``) for the driver libraries of ``wanted`` (soname -> the driver
    API functions the files that need it import; a file may need one and import nothing from it) that
    this machine cannot load, each exporting those functions, written into ``folder``: soname -> file.
    None is made for a library whose API the table does not know, nor for files of a ``machine``
    stand-ins are not made for: those files' loads are skipped, as before."""
    if not wanted or machine is None:
        return {}
    asked = _run(
        [str(python), "-c", _CANNOT_LOAD, *sorted(wanted)], cwd=folder.parent, timeout=60, clean=True
    )
    lacking = set(asked.stdout.split()) & set(wanted)
    made: dict[str, Path] = {}
    for soname in sorted(lacking):
        try:
            image = stand_in_library(soname, wanted[soname], machine)
        except ValueError:
            continue
        folder.mkdir(parents=True, exist_ok=True)
        (folder / soname).write_bytes(image)
        made[soname] = folder / soname
    return made


@dataclass(frozen=True)
class _LoadRun:
    """Where and after what the load probe runs."""

    python: Path
    work: Path
    site: Path
    imported: Sequence[str]
    progress: Progress
    owners: Mapping[str, str] = field(default_factory=dict)  # installed file (resolved) -> distribution


def _load_with_stand_ins(
    run: _LoadRun,
    members: Sequence[str],
    mapped: list[str] | None,
    facts: _WheelFacts,
    *,
    absent: Callable[[str, str], str | None],
) -> tuple[list[LibraryLoad], list[str] | None, list[VerifyProblem], dict[str, Path]]:
    """``_load_libraries`` beside stand-ins for the driver libraries the wheel's files need and this
    machine lacks; and, where a load was still skipped for want of one, beside a stand-in for what the
    installed files that need it import, once more: a library of another distribution the wheel's
    files load may need the driver where none of theirs does (acellera-openmmtorch-cu12's CUDA plugin
    reaches libcuda.so.1 through openmm's libOpenMMCUDA.so). Also returns the stand-ins made."""
    folder = run.work / "stand-ins"
    stand_ins = _stand_ins(run.python, folder, facts.driver_imports, facts.machine) if members else {}

    def load(made: Mapping[str, Path]) -> tuple[list[LibraryLoad], list[str] | None, list[VerifyProblem]]:
        return _load_libraries(
            run.python,
            run.work,
            run.site,
            members,
            run.imported,
            run.progress,
            mapped,
            stand_ins=made,
            carriers=facts.carriers,
            absent=absent,
        )

    loads, after, problems = load(stand_ins)
    lacking = _driver_sonames(loads) - set(stand_ins)
    if not lacking:
        return loads, after, problems, stand_ins
    theirs, machine = _installed_driver_imports(run.site, lacking)
    wanted = dict(facts.driver_imports)
    for soname, names in theirs.items():
        wanted[soname] = wanted.get(soname, frozenset()) | names
    more = _stand_ins(run.python, folder, wanted, facts.machine or machine)
    if not set(more) - set(stand_ins):
        return loads, after, problems, stand_ins
    return (*load(more), more)


def _load_and_trace(
    run: _LoadRun,
    members: Sequence[str],
    mapped: list[str] | None,
    facts: _WheelFacts,
    *,
    absent: Callable[[str, str], str | None],
) -> tuple[list[LibraryLoad], list[str] | None, list[VerifyProblem], dict[str, Path]]:
    """The wheel's libraries loaded (``_load_with_stand_ins``) and its programs traced
    (``_trace_programs``): both results, the paths mapped by either (None: the loading died), the
    problems of both, and the stand-ins made."""
    loads, mapped, problems, stand_ins = _load_with_stand_ins(run, members, mapped, facts, absent=absent)
    traced, traced_mapped, untraced = _trace_programs(run, facts, absent=absent)
    return (
        [*loads, *traced],
        None if mapped is None else sorted({*mapped, *traced_mapped}),
        [*problems, *untraced],
        stand_ins,
    )


def _trace_programs(
    run: _LoadRun, facts: _WheelFacts, *, absent: Callable[[str, str], str | None]
) -> tuple[list[LibraryLoad], list[str], list[VerifyProblem]]:
    """Each program of the wheel as this machine's dynamic loader resolves its libraries, without
    running it (``LD_TRACE_LOADED_OBJECTS``, what ``ldd`` asks, given to the loader of the venv's
    Python, never to a loader the file names): its result (``_traced``), the files it maps, and a
    "load" problem for each that misses a library or finds one of the wheel's own elsewhere."""
    if not facts.programs:
        return [], [], []
    python = Path(os.path.realpath(run.python))
    with python.open("rb") as stream:
        loader = read_interpreter(stream, path=str(python))
    machine = read_elf_file(python, symbols=False).machine
    loads: list[LibraryLoad] = []
    mapped: list[str] = []
    with run.progress.step(f"tracing the libraries of the wheel's {len(facts.programs)} programs"):
        for member in facts.programs:
            path = Path(os.path.normpath(run.site / member))
            try:
                built_for = read_elf_file(path, symbols=False).machine
            except (OSError, ElfError) as exc:
                loads.append(LibraryLoad(member, "failed", f"not read once installed: {exc}", kind="program"))
                continue
            if loader is None or built_for != machine:
                why = f"built for {built_for}, which this machine's loader ({machine}) does not load"
                loads.append(LibraryLoad(member, "skipped", why, kind="program"))
                continue
            traced = _run(
                [loader, str(path)],
                cwd=run.work / "cwd",
                timeout=60,
                clean=True,
                environment={"LD_TRACE_LOADED_OBJECTS": "1"},
            )
            found, missing = _read_trace(traced.stdout)
            if traced.returncode != 0 or not (found or missing):
                loads.append(LibraryLoad(member, "failed", _last_error(traced), kind="program"))
                continue
            mapped += [os.path.realpath(file) for _, file in found]
            loads.append(_traced(member, found, missing, facts, owners=run.owners, absent=absent))
    problems = [VerifyProblem("load", f"tracing {r.member} failed: {r.error}") for r in loads if r.failed]
    return loads, mapped, problems


def _traced(
    member: str,
    found: Sequence[tuple[str, str]],
    missing: Sequence[str],
    facts: _WheelFacts,
    *,
    owners: Mapping[str, str],
    absent: Callable[[str, str], str | None],
) -> LibraryLoad:
    """A program's result from its trace: failed where the loader found no library it needs (but the
    driver's, which nothing here runs), or found a soname a file of the wheel carries in another's
    file: libucx-cu13 1.22.0's ucx_info, with no RPATH, found the system's UCX 1.16 on a machine that
    has one, and ran with it (without the wheel's CUDA transports)."""
    lacking = [soname for soname in missing if not is_driver_library(soname)]
    if lacking:
        error = f"{lacking[0]}: cannot open shared object file (the loader found no {', '.join(lacking)})"
        left_out = absent(member, error)
        return LibraryLoad(member, "skipped" if left_out else "failed", left_out or error, kind="program")
    own = canonicalize_name(facts.distribution)
    for soname, where in found:
        carrier = facts.carriers.get(soname)
        owner = owners.get(os.path.realpath(where))
        if carrier is not None and owner != own:
            whose = f"{owner}'s" if owner else "no installed distribution's"
            error = (
                f"{soname} was found at {where} ({whose}), not as this wheel's {carrier}: its search path "
                "misses the wheel's copy"
            )
            return LibraryLoad(member, "failed", error, kind="program")
    return LibraryLoad(member, "ok", kind="program")


# The loader's trace: "\tlibcudart.so.12 => /venv/.../libcudart.so.12 (0x7f...)", "=> not found".
_TRACED = re.compile(r"^\s*(\S+) => (.*?)(?: \(0x[0-9a-f]+\))?\s*$")


def _read_trace(output: str) -> tuple[list[tuple[str, str]], list[str]]:
    """Each soname a loader's trace found, with the file (an absolute path); and those it found nowhere."""
    found: list[tuple[str, str]] = []
    missing: list[str] = []
    for line in output.splitlines():
        match = _TRACED.match(line)
        if match is None:
            continue
        soname, where = match.groups()
        if where == "not found":
            missing.append(soname)
        elif where.startswith("/"):
            found.append((soname, where))
    return found, missing


def _driver_sonames(loads: Sequence[LibraryLoad]) -> set[str]:
    """The driver libraries whose absence skipped a load (``libcuda.so.1``) and whose API
    (``DRIVER_API``) a stand-in can export."""
    found = (_NEEDS_DRIVER.search(load.error or "") for load in loads if load.status == "skipped")
    sonames = {match.group(0).split(":", 1)[0] for match in found if match is not None}
    return {soname for soname in sonames if driver_api(soname) is not None}


def _installed_driver_imports(
    site: Path, sonames: Collection[str]
) -> tuple[dict[str, frozenset[str]], str | None]:
    """Per driver library of ``sonames``, the driver API functions the installed ELF files in ``site``
    that need it import; and their machine. Only the dynamic section of each file is read, and the
    symbols of those that need one."""
    found: dict[str, set[str]] = {}
    machine: str | None = None
    for folder, _, files in os.walk(site):
        for filename in files:
            if not (is_shared_library_name(filename) or filename.endswith(".so")):
                continue
            path = Path(folder) / filename
            try:
                with path.open("rb") as stream:
                    read = _read_driver_needs(stream, str(path), sonames.__contains__)
            except OSError:
                continue
            if read is None or not read[1]:
                continue
            facts, imported = read
            machine = machine or facts.machine
            for soname, names in imported.items():
                found.setdefault(soname, set()).update(names)
    return {soname: frozenset(names) for soname, names in found.items()}, machine


def _load_results(
    members: Sequence[str],
    site: Path,
    loads: dict[str, str | None],
    finished: bool,
    probe: subprocess.CompletedProcess[str],
    *,
    absent: Callable[[str, str], str | None],
) -> list[LibraryLoad]:
    """Each library's load: ok, failed (dlopen's error, or the crash it caused), skipped (it needs
    the driver, or what ``absent`` says the wheel leaves out) or not-run (the process died before it)."""
    results: list[LibraryLoad] = []
    died = finished
    for member in members:
        error = loads.get(str(site / member), "")
        if error is None:
            results.append(LibraryLoad(member, "ok"))
        elif error and _NEEDS_DRIVER.search(error):
            results.append(LibraryLoad(member, "skipped", f"{_DRIVER_SKIP} ({error})"))
        elif error and (left_out := absent(member, error)):
            results.append(LibraryLoad(member, "skipped", left_out))
        elif error:
            results.append(LibraryLoad(member, "failed", error))
        elif not died:
            died = True  # the first library without a result: the process died loading it
            results.append(LibraryLoad(member, "failed", _how_it_ended(probe)))
        else:
            results.append(LibraryLoad(member, "not-run", "the process died before it"))
    return results


def _import_results(
    targets: Sequence[ImportResult],
    probed: _ProbeResult,
    probe: subprocess.CompletedProcess[str],
    *,
    lacks_driver: bool = False,
) -> tuple[list[ImportResult], list[VerifyProblem]]:
    """Each target's result, and an "import" problem for each failed import (and for a probe that died).
    ``lacks_driver``: this machine cannot load the driver, so an import that fails in words about it
    fails for want of it."""
    errors, finished = probed.errors, probed.mapped is not None
    problems: list[VerifyProblem] = []
    died: str | None = None  # the import the process died in
    if not finished:
        died = next((t.name for t in targets if t.importable and t.name not in errors), None)
    crash = _how_it_ended(probe)
    results: list[ImportResult] = []
    for target in targets:
        if not target.importable:
            results.append(target)
        elif target.name in probed.loaded_as:
            why = (
                f"its file was loaded already, as {probed.loaded_as[target.name]} (by the package's own "
                "code): a second load under another name fails where a module registers its types once "
                "(pybind11)"
            )
            results.append(replace(target, status="skipped", error=why))
        elif target.name in errors:
            error = errors[target.name]
            if error is not None and (
                _NEEDS_DRIVER.search(error) or (lacks_driver and _MENTIONS_DRIVER.search(error))
            ):
                # Not the wheel's fault: the files are loaded after the imports, with a stand-in.
                why = f"{_DRIVER_SKIP} ({error})"
                results.append(replace(target, status="skipped", error=why))
                continue
            called = probed.called.get(target.name)
            results.append(
                replace(target, status="ok" if error is None else "failed", error=error, called=called)
            )
        elif target.name == died:
            results.append(replace(target, status="failed", error=crash))
        else:
            why = f"the process died importing {died}" if died else "the probe gave no result"
            results.append(_not_run(target, why))
    reported: set[str] = set()
    for result in results:
        if result.status == "failed" and result.name not in reported:
            reported.add(result.name)
            problems.append(VerifyProblem("import", f"import {result.name} failed: {result.error}"))
    if not finished and died is None:
        problems.append(VerifyProblem("import", f"the import probe failed: {crash}"))
    elif finished and probe.returncode != 0:
        problems.append(VerifyProblem("import", f"python failed after the imports: {crash}"))
    return results, problems


def _how_it_ended(process: subprocess.CompletedProcess[str]) -> str:
    """Python's last error line, or the signal that killed the process."""
    if process.returncode < 0 and not (process.stderr or "").strip():
        try:
            name = signal.Signals(-process.returncode).name
        except ValueError:
            return f"killed by signal {-process.returncode}"
        return f"killed by {name}{_SIGNAL_MEANS.get(name, '')}"
    return _last_error(process)


# What a signal that kills an import says of the wheel: fastlisaresponse-cuda12x 1.1.17's import dies
# of SIGILL on a CPU without the instructions its build assumes.
_SIGNAL_MEANS = {
    "SIGILL": " (an instruction this CPU does not have: the build assumes a newer CPU)",
}


def lowest_pins(
    requires_dist: Sequence[str],
    catalog: Catalog,
    environment: Mapping[str, str] | None = None,
    *,
    extras: Sequence[str] = (),
    own: str = "",
) -> tuple[Pin, ...]:
    """For each NVIDIA requirement (transitive ones the catalog knows too), the lowest release that
    satisfies every requirement in force on it: the lowest consistent set of the requirement graph
    (``slimwheel.requirements``). Requirements on distributions the catalog does not know are left to
    pip. ``environment``: the markers' target (default: this interpreter, which verify's venv runs).
    ``extras``: the extras of ``own`` (the wheel's distribution) installed too."""
    from packaging.markers import default_environment

    from slimwheel.requirements import expand_requirements, installed_with, read_requirements

    target = {k: str(v) for k, v in (default_environment() if environment is None else environment).items()}
    lines = read_requirements(requires_dist, {**target, "extra": ""})
    roots = [("", line.requirement) for line in installed_with(lines, own, extras)]
    selection = expand_requirements(catalog, roots, target).select("lowest")
    pins = []
    for name, release in sorted(selection.chosen.items()):
        specifiers = dict.fromkeys(str(edge.requirement.specifier) for edge in selection.constraints[name])
        pins.append(Pin(name, release.version, ",".join(filter(None, specifiers)) or "any"))
    return tuple(pins)


# -- why it does not load ---------------------------------------------------------------------------

_UNRESOLVED_KINDS = (FindingKind.MISSING_REQUIREMENT, FindingKind.UNRESOLVED_NEEDED)


def diagnose(path: Path, catalog: Catalog) -> list[VerifyProblem]:
    """Why the wheel's own files cannot find their NVIDIA libraries once installed, from ``check``'s
    simulation: each DT_NEEDED that an NVIDIA distribution provides but that no Requires-Dist brings in
    or no RPATH/RUNPATH reaches, as an "unresolved" problem naming the file, the soname and the fix.

    Empty when the simulation cannot run (a wheel for no Linux platform): the import problem stands alone.
    """
    try:
        with Wheel.open(path) as wheel:
            checked = check_wheel(wheel, catalog)
    except SlimwheelError:
        return []
    files = {file.path: file for file in checked.files}
    required = {provider.distribution for provider in checked.providers}
    cuda_major = _cuda_major_of(checked, catalog)
    problems: list[VerifyProblem] = []
    seen: set[tuple[str, str]] = set()
    for finding in checked.findings:
        soname = finding.soname
        if finding.kind not in _UNRESOLVED_KINDS or soname is None or (finding.path, soname) in seen:
            continue
        file = files.get(finding.path)
        needed = next((n for n in file.needed if n.soname == soname), None) if file else None
        here = catalog.providers(soname=soname, platform=checked.platform)
        providers = [p for p in here if p.release.cuda_major == cuda_major] or list(here)
        if file is None or needed is None or not providers:
            continue
        seen.add((finding.path, soname))
        why = _why_unresolved(file, needed, providers, required) or finding.message.removeprefix(
            f"needs {soname}: "
        )
        problems.append(
            VerifyProblem(
                "unresolved",
                f"{finding.path} needs {soname}: {why}; run `slimwheel repair`",
                member=finding.path,
                soname=soname,
            )
        )
    return problems


def _cuda_major_of(checked: CheckReport, catalog: Catalog) -> int | None:
    """The one CUDA major every NVIDIA soname the wheel's files need is shipped for, if there is one
    (``libcudart.so.13`` settles ``libcudss.so.1``, which CUDA 12 and 13 wheels both ship)."""
    common: set[int] | None = None
    for file in checked.files:
        for needed in file.needed:
            majors = {
                p.release.cuda_major
                for p in catalog.providers(soname=needed.soname)
                if p.release.cuda_major is not None
            }
            if majors:
                common = majors if common is None else common & majors
    return next(iter(common)) if common is not None and len(common) == 1 else None


def _why_unresolved(
    file: FileCheck, needed: NeededCheck, providers: Sequence[LibraryProvider], required: set[str]
) -> str | None:
    """ "no Requires-Dist on D (or E) and no RPATH", "Requires-Dist brings in D but RPATH X does not reach
    F", ...; None where neither is the cause (a version the range admits lacks the file)."""
    distributions = list(dict.fromkeys(p.distribution for p in providers))
    brought_in = [d for d in distributions if d in required]
    folders = list(
        dict.fromkeys(p.library.folder for p in providers if not brought_in or p.distribution in brought_in)
    )
    reached = [folder for folder in folders if folder in needed.searched]
    if brought_in and reached:
        return None
    tag, entries = ("RUNPATH", file.runpath) if file.runpath else ("RPATH", file.rpath)
    where = " or ".join(folders)
    if brought_in:
        search = (
            f"{tag} {':'.join(entries)} does not reach {where}" if entries else f"no RPATH reaches {where}"
        )
        return f"Requires-Dist brings in {brought_in[0]} but {search}"
    others = f" (or {', '.join(distributions[1:])})" if len(distributions) > 1 else ""
    requirement = f"no Requires-Dist on {distributions[0]}{others}"
    if reached:
        return f"{requirement}, so nothing installs it in {' or '.join(reached)}, where its search path looks"
    if not entries and not needed.searched:
        return f"{requirement} and no RPATH"
    if not entries:
        inherited = ", ".join(needed.searched)
        return f"{requirement} and the RPATH it inherits from its loader ({inherited}) does not reach {where}"
    return f"{requirement} and {tag} {':'.join(entries)} does not reach {where}"


# -- the wheel ---------------------------------------------------------------------------------------


def manifest_extras(manifest: Manifest | None) -> tuple[str, ...]:
    """The extras whose requirements a slimwheel manifest's optional libraries name (repair keeps an
    NVIDIA wheel behind the author's extra, ``nvidia-cudnn-cu13~=9.0; extra == "cudnn"``)."""

    found: list[str] = []
    for library in manifest.libraries if manifest is not None else ():
        if library.optional:
            found.extend(extra for extra in _extras_gating(library.requirement) if extra not in found)
    return tuple(found)


def _extras_gating(requirement: str) -> tuple[str, ...]:
    """The extras a manifest library's Requires-Dist line is behind; () for every install."""
    from packaging.requirements import InvalidRequirement, Requirement

    from slimwheel.requirements import RequirementScope, scope_of

    try:
        marker = Requirement(requirement).marker
    except InvalidRequirement:
        return ()
    # The extra is what gates it; the platform parts hold on the machine that installs it.
    scope, extras = scope_of(marker, {"extra": ""})
    return tuple(extras) if scope is RequirementScope.EXTRA else ()


def _extras_by_major(manifest: Manifest | None) -> dict[int, tuple[str, ...]]:
    """For a manifest of several CUDA majors (repair --cuda 12,13), each major -> the extras to install
    for it alone: those its libraries are behind that no other major's are, and those of the libraries
    of no major (``--optional``). Empty for a manifest of one major."""
    libraries = manifest.libraries if manifest is not None else ()
    gating: dict[int, set[str]] = {}
    for library in libraries:
        if library.cuda_major is not None:
            gating.setdefault(library.cuda_major, set()).update(_extras_gating(library.requirement))
    if len(gating) < 2:
        return {}
    every = [*manifest_extras(manifest), *sorted(set().union(*gating.values()))]
    found = {}
    for major in sorted(gating):
        others = set().union(*(extras for other, extras in gating.items() if other != major))
        found[major] = tuple(dict.fromkeys(extra for extra in every if extra not in others))
    return found


def _major_installed(manifest: Manifest | None, extras: Collection[str]) -> int | None:
    """The one CUDA major of a several-major manifest whose libraries ``extras`` install (those behind
    no extra count as installed); None where they install several majors' or none."""
    installed = {
        library.cuda_major
        for library in (manifest.libraries if manifest is not None else ())
        if library.cuda_major is not None
        and (not (gating := _extras_gating(library.requirement)) or set(gating) & set(extras))
    }
    return installed.pop() if len(installed) == 1 else None


def _member_major(manifest: Manifest | None, member: str | None) -> int | None:
    """The CUDA major of a wheel's file (installed path) in a several-major manifest, as repair judged
    it: the one major of the libraries it needs, else the one its folder names (cuda-cccl's
    ``cuda/compute/cu12/`` extension module, which reaches NVRTC only through the library beside it);
    None for a file of no major or of several."""
    libraries = manifest.libraries if manifest is not None else ()
    majors = {lib.cuda_major for lib in libraries if lib.cuda_major is not None and member in lib.needed_by}
    if majors or member is None:
        return majors.pop() if len(majors) == 1 else None
    return cuda_major_of_folder(member)


def _of_major(
    facts: _WheelFacts, major: int, by_major: Mapping[int, Sequence[str]]
) -> tuple[_WheelFacts, tuple[LibraryLoad, ...]]:
    """``facts`` for the install of ``major``'s extras alone, and the loads of the other majors' builds,
    each skipped: those are neither imported nor loaded here (their libraries are not installed, or,
    where two majors' wheels install the same files, are this major's), each saying which install
    proves it; the manifest's and the files' NVIDIA libraries are this major's."""

    def elsewhere(member: str | None) -> int | None:
        # A build of a major the repair was not for (bitsandbytes' CUDA 11 libraries, --cuda 12,13)
        # is loaded in every install, its libraries left to the host.
        other = _member_major(facts.manifest, member)
        return other if other != major and other in by_major else None

    def why(other: int) -> str:
        extras = by_major.get(other, ())
        with_extras = f" (the extra {' or '.join(map(repr, extras))})" if extras else ""
        return f"CUDA {other}'s build: loaded by the install of CUDA {other}'s libraries{with_extras}"

    def skipped(target: ImportResult) -> ImportResult:
        other = elsewhere(target.member)
        if other is None or not target.importable:
            return target
        return replace(target, status="skipped", error=why(other))

    left_alone = tuple(
        LibraryLoad(member, "skipped", why(other), kind=kind)
        for kind, members in (("library", facts.libraries), ("program", facts.programs))
        for member in members
        if (other := elsewhere(member)) is not None
    )
    manifest = facts.manifest
    if manifest is not None:  # two majors' NCCL share a name and a soname: this major's is expected
        mine = tuple(library for library in manifest.libraries if library.cuda_major in (None, major))
        manifest = manifest.replace(libraries=mine)
    needed_by = {
        soname: mine_too
        for soname, paths in facts.needed_by.items()
        if (mine_too := frozenset(path for path in paths if elsewhere(path) is None))
    }
    needed = frozenset(
        soname for soname in facts.needed if soname in needed_by or soname not in facts.needed_by
    )
    mine_only = replace(
        facts,
        manifest=manifest,
        needed=needed,
        needed_by=needed_by,
        imports=tuple(skipped(target) for target in facts.imports),
        libraries=tuple(m for m in facts.libraries if elsewhere(m) is None),
        extension_modules=tuple(m for m in facts.extension_modules if elsewhere(m) is None),
        programs=tuple(m for m in facts.programs if elsewhere(m) is None),
    )
    return mine_only, left_alone


_WORST_FIRST = ("failed", "not-run", "ok", "skipped")
_Result = TypeVar("_Result", ImportResult, LibraryLoad)


def _worst_of(
    results: Iterable[_Result], *, key: Callable[[_Result], tuple[str, str]]
) -> tuple[_Result, ...]:
    """One result per ``key`` (an import or a load made in several installs), the worst status winning
    (``_WORST_FIRST``), in the order first seen."""
    kept: dict[tuple[str, str], _Result] = {}
    for result in results:
        seen = kept.get(key(result))
        if seen is None or _WORST_FIRST.index(result.status) < _WORST_FIRST.index(seen.status):
            kept[key(result)] = result
    return tuple(kept.values())


def _sum_of_runs(runs: Sequence[VerifyReport]) -> VerifyReport:
    """One report of the installs of each CUDA major (``VerifyReport.runs``): each import and load as
    the install that ran it found it (the worst, where several did), every problem (tagged with the
    major of each install that found it, untagged where all did), the libraries mapped and what was
    installed in any."""
    problems: dict[tuple[str, str | None, str | None, str], tuple[VerifyProblem, list[int | None]]] = {}
    for run in runs:
        for problem in run.problems:
            problems.setdefault(_problem_key(problem, run.wheel), (problem, []))[1].append(run.cuda_major)
    summed = [
        tagged
        for problem, majors in problems.values()
        for tagged in (
            [problem] if len(majors) == len(runs) else [replace(problem, cuda_major=m) for m in majors]
        )
    ]
    imports = _worst_of((t for run in runs for t in run.imports), key=lambda t: (t.name, t.member or ""))
    loads = _worst_of((load for run in runs for load in run.loads), key=lambda load: (load.kind, load.member))
    return replace(
        runs[0],
        imports=imports,
        loads=loads,
        installed=tuple(sorted({line for run in runs for line in run.installed})),
        libraries=tuple(dict.fromkeys(library for run in runs for library in run.libraries)),
        problems=tuple(summed),
        pins=tuple(dict.fromkeys(pin for run in runs for pin in run.pins)),
        extras=tuple(dict.fromkeys(extra for run in runs for extra in run.extras)),
        unjudged=tuple(sorted({soname for run in runs for soname in run.unjudged})),
        stand_ins=tuple(sorted({soname for run in runs for soname in run.stand_ins})),
        cuda_major=None,
        runs=tuple(runs),
    )


def _require_installable_here(path: Path, requires_python: str | None, python: Interpreter) -> None:
    """The venv is made from ``python``, so pip installs only a wheel whose tags it supports and whose
    Requires-Python admits it: say so before making it (a cp312-abi3 wheel under Python 3.11 failed
    as "not a supported wheel on this platform", and xgboost-cu12 3.4.1, a py3 wheel requiring Python
    3.12, as "requires a different Python": problems found, exit 1, when it is a question of the
    Python that runs verify). A Requires-Python that does not parse is left to pip."""
    tags = parse_wheel_filename(path.name)[3]
    hint = "verify it with a Python the wheel supports: --python python3.X"
    if not python.supports(str(tag) for tag in tags):
        raise UsageError(
            f"{path.name}: pip cannot install it under this Python ({python.described}), "
            f"which supports none of its tags ({', '.join(sorted(str(tag) for tag in tags))})",
            hint=hint,
        )
    try:
        admitted = SpecifierSet(requires_python or "").contains(python.version, prereleases=True)
    except InvalidSpecifier:
        return
    if not admitted:
        raise UsageError(
            f"{path.name}: pip cannot install it under this Python ({python.described}): "
            f"it requires Python {requires_python}",
            hint=hint,
        )


def _read_wheel(path: Path, import_names: Sequence[str], python: Interpreter) -> _WheelFacts:
    """What verify needs to know of the wheel before installing it. A wheel that show, check and repair
    refuse as unreadable (RECORD that does not parse, METADATA over its cap, a member whose data does
    not match its CRC-32) is refused here too, as an InputError (exit 2), before pip sees it: an
    install that fails on it would otherwise be reported as a problem found (exit 1)."""
    with Wheel.open(path) as wheel:
        _require_installable_here(path, wheel.metadata().get("Requires-Python"), python)
        wheel.record()  # parses RECORD: a malformed one is a WheelError
        for member in wheel.members:
            if not member.is_dir:
                wheel.check_crc(member.name)  # pip unpacks every member: each must be intact
        manifest = read_manifest(wheel)
        found = find_imports(wheel, extension_suffixes=python.extension_suffixes)
        if import_names:
            imports = tuple(ImportResult(name, "given", None, "not-run") for name in import_names)
        else:
            imports = found
        needed: set[str] = set()
        needed_by: dict[str, set[str]] = {}
        driver_imports: dict[str, set[str]] = {}
        machine: str | None = None
        # An untagged .so that exports PyInit_<name> and no import loads is loaded as a library: so a
        # package opens it by path (torch.ops.load_library: torchmd-net-cu11's torchmdnet_extensions.so).
        modules = {
            target.member
            for target in imports
            if target.kind == "extension" and target.member and not _untagged_skipped(target)
        }
        libraries: dict[str, ElfFacts] = {}
        programs: list[str] = []
        sonames: list[tuple[str, str | None]] = []
        for member in wheel.members:
            if member.is_dir:
                continue
            named_as_library = is_shared_library_name(member.name) or member.name.endswith(".so")
            # A program has no suffix to tell: any member whose name leaves room for one is looked at.
            if not named_as_library and not (may_be_binary(member.name) and starts_like_elf(wheel, member)):
                continue
            with wheel.seekable_member(member.name) as stream:
                read = _read_driver_needs(stream, member.name, lambda soname: driver_api(soname) is not None)
            if read is None:
                continue
            facts, imported = read
            if not loads_on(_HOST, facts.machine):
                continue  # another machine's file (a cross-compilation target's runtime): never loaded here
            if imported:
                machine = machine or facts.machine
            for soname, names in imported.items():
                driver_imports.setdefault(soname, set()).update(names)
            needed.update(facts.needed)
            installed = wheel.installed_path(member.name)
            for soname in facts.needed:
                needed_by.setdefault(soname, set()).add(installed)
            sonames.append((installed, facts.soname))
            if facts.is_program:
                programs.append(installed)
            # A shared library (no program interpreter: not an executable) that no import loads.
            elif (
                named_as_library
                and facts.elf_type == "DYN"
                and facts.section(".interp") is None
                and installed not in modules
            ):
                libraries[installed] = facts
        if not any(target.importable for target in imports) and (import_names or not (libraries or programs)):
            # A wheel of libraries alone (cutensornet-cu13: cuquantum/lib/libcutensornet.so.2) is
            # verified by loading them; one with neither is no wheel to verify.
            left_out = [target.member for target in imports if target.member]
            detail = f" (left out: {', '.join(left_out)})" if left_out else ""
            raise InputError(
                str(path),
                f"no package, module or shared library to load in the wheel{detail}",
                hint="pass --import NAME",
            )
        return _WheelFacts(
            distribution=wheel.distribution,
            version=wheel.version,
            requires_dist=wheel.requires_dist(),
            imports=imports,
            manifest=manifest,
            needed=frozenset(needed),
            needed_by={soname: frozenset(paths) for soname, paths in needed_by.items()},
            driver_imports={soname: frozenset(names) for soname, names in driver_imports.items()},
            machine=machine,
            libraries=() if import_names else _consumers_first(libraries),
            programs=() if import_names else tuple(sorted(programs)),
            carriers=soname_carriers(sonames),
            extension_modules=tuple(
                target.member
                for target in found
                if target.kind == "extension" and target.importable and target.member
            ),
            kept_copies=frozenset(
                wheel.installed_path(copy) for copy in (*manifest.kept_copies, *manifest.unreplaced_copies)
            )
            if manifest
            else frozenset(),
            left_to_host=frozenset(manifest.left_to_host) if manifest else frozenset(),
            optional=only_with_extras(
                read_requirements(
                    wheel.requires_dist(),
                    {**{k: str(v) for k, v in default_environment().items()}, "extra": ""},
                ),
                wheel.distribution,
            ),
        )


def _read_driver_needs(
    stream: BinaryIO, name: str, wanted: Callable[[str], bool]
) -> tuple[ElfFacts, dict[str, set[str]]] | None:
    """The ELF file in ``stream``'s facts (its dynamic section, no symbols), and per driver library it
    needs that ``wanted`` accepts, the driver API functions it imports (``_driver_imports``); None for
    a file that is not ELF or does not read."""
    if not is_elf(stream.read(4)):
        return None
    stream.seek(0)
    try:
        facts = read_elf(stream, path=name, symbols=False)
    except ElfError:
        return None
    drivers = [soname for soname in facts.needed if wanted(soname)]
    if not drivers:
        return facts, {}
    stream.seek(0)
    return facts, _driver_imports(stream, name, drivers)


def _driver_imports(stream: BinaryIO, name: str, drivers: Sequence[str]) -> dict[str, set[str]]:
    """Per driver library of ``drivers``, the API functions (``DRIVER_API``) the ELF file in
    ``stream`` imports unversioned: what a stand-in for it must export. Empty sets where the file's
    symbols do not read: a stand-in of no functions still lets it load lazily."""
    found: dict[str, set[str]] = {soname: set() for soname in drivers}
    try:
        undefined = read_elf(stream, path=name, symbols=True).undefined_symbols
    except ElfError:
        return found
    for soname in drivers:
        api = driver_api(soname)
        found[soname].update(
            symbol.name
            for symbol in undefined
            if symbol.version is None and api is not None and api.fullmatch(symbol.name)
        )
    return found


def _consumers_first(libraries: Mapping[str, ElfFacts]) -> tuple[str, ...]:
    """The libraries in the order verify loads them: each after every library of the wheel that needs
    it, so that it is loaded as in use, by its consumer, whose DT_RPATH glibc also searches for what it
    needs in turn (auditwheel's grafted libraries have no search path of their own: nvidia-pytriton's
    libarchive finds libnettle, beside it, only so). Loaded before its consumer, a library would fail
    where it never does in use; loaded after what it needs, it would find a library its own search
    path misses. Ties, and the rest of a cycle, go by name."""
    by_name: dict[str, str] = {}
    for path in sorted(libraries):
        by_name.setdefault(posixpath.basename(path), path)
        soname = libraries[path].soname
        if soname:
            by_name.setdefault(soname, path)
    needs = {
        path: sorted({by_name[name] for name in facts.needed if by_name.get(name, path) != path})
        for path, facts in libraries.items()
    }
    consumers = dict.fromkeys(libraries, 0)
    for needed in needs.values():
        for path in needed:
            consumers[path] += 1
    order: list[str] = []
    left = set(libraries)
    ready = sorted(path for path, count in consumers.items() if count == 0)
    while left:
        if not ready:  # a cycle: its first library by name goes next
            ready = [min(left)]
        # Each library enters ready once, while still left: a count reaches 0 once, and a cycle's
        # pick is made only when ready is empty.
        path = ready.pop(0)
        left.discard(path)
        order.append(path)
        for wanted in needs[path]:
            consumers[wanted] -= 1
            if consumers[wanted] == 0 and wanted in left:
                bisect.insort(ready, wanted)
    return tuple(order)


@dataclass(frozen=True)
class _ModuleFile:
    stem: str  # the module's own name: "core_cc", "__init__"
    kind: str  # "source" (.py, .pyc), "extension" (.<abi tag>.so), "untagged" (.so)
    suffix: str  # ".py", ".cpython-311-x86_64-linux-gnu.so", ".so"


def _importable_part(part: str) -> bool:
    """A name an import can spell: no ``*.dist-info``, ``*.data``, ``<pkg>.libs`` or ``__pycache__``."""
    return part.isidentifier() and not keyword.iskeyword(part) and part != "__pycache__"


def _module_file(filename: str) -> _ModuleFile | None:
    for suffix in (".py", ".pyc"):
        if filename.endswith(suffix):
            stem = filename[: -len(suffix)]
            return _ModuleFile(stem, "source", suffix) if _importable_part(stem) else None
    if not filename.endswith(".so"):
        return None
    stem, dot, tag = filename[: -len(".so")].partition(".")
    if not _importable_part(stem):
        return None
    if not dot:
        return _ModuleFile(stem, "untagged", ".so")
    if is_extension_abi_tag(tag):
        return _ModuleFile(stem, "extension", f".{tag}.so")
    return None  # libfoo.1.so, a library


# A project's setup.py the wheel ships at the top of site-packages by mistake (uc-manager-cuda-cu129
# 0.8.1): importing it would run setup(), a build, not the package.
_BUILD_SCRIPT = "a build script shipped at the top level of site-packages: importing it would run setup()"


def find_imports(
    wheel: Wheel, *, extension_suffixes: Sequence[str] | None = None
) -> tuple[ImportResult, ...]:
    """What verify imports by default, from the wheel's member paths as installed (``top_level.txt`` is
    not read: it is often absent or wrong), each with status "not-run", or "skipped" and why:

    - every top-level package (a folder with ``__init__``) and module (``.py``; a ``setup.py`` there
      is "skipped": importing a build script runs it); a folder without
      ``__init__`` is a namespace package, so the packages and modules it holds are imported instead
      (``ns/inner/__init__.py``: ``ns.inner``), and a folder with no Python at all is left alone;
      ``*.dist-info``, ``*.data`` (but for purelib and platlib) and ``<pkg>.libs`` are no packages;
    - each extension module by its dotted name (``pkg/core_cc.cpython-311-x86_64-linux-gnu.so`` and
      ``pkg/core_cc.abi3.so`` are ``pkg.core_cc``), when this interpreter loads its suffix; one built for
      another interpreter is "skipped". An untagged ``.so`` that exports ``PyInit_<name>`` is "skipped"
      too: it may as well be a library that the package loads with ctypes, and is loaded as one after
      the imports.

    Sorted by dotted name, packages before what they hold, top-level names with a leading underscore
    last; each importable name once.
    """
    members: dict[str, str] = {}  # installed path -> archive member
    for member in wheel.members:
        if not member.is_dir:
            members.setdefault(wheel.installed_path(member.name), member.name)
    suffixes = tuple(
        importlib.machinery.EXTENSION_SUFFIXES if extension_suffixes is None else extension_suffixes
    )
    found = [
        *_InstalledTree(members, suffixes).packages_and_modules(),
        *_extension_modules(wheel, members, suffixes),
    ]
    # Public names first: a private top-level module (``_qec_decoders_standalone``) is one the package
    # imports itself, or one meant for use apart from it. cudaq-qec-cu12 0.8.1's, imported first,
    # makes ``import cudaq_qec`` fail after it (its bindings register a type again); imported after
    # it, or alone, both work.
    found.sort(key=lambda t: (t.name.startswith("_"), t.name.split("."), not t.importable))
    seen: set[str] = set()
    imports: list[ImportResult] = []
    for target in found:
        if target.importable:
            if target.name in seen:
                continue
            seen.add(target.name)
        imports.append(target)
    return tuple(imports)


class _InstalledTree:
    """The folders and files a wheel installs into site-packages."""

    def __init__(self, paths: Iterable[str], extension_suffixes: Sequence[str]) -> None:
        self.extension_suffixes = extension_suffixes  # those the interpreter imports
        self.folders: dict[str, set[str]] = {}  # folder ("" is site-packages) -> the folders in it
        self.files: dict[str, set[str]] = {}  # folder -> the files in it
        for path in paths:
            parts = path.split("/")
            for depth in range(len(parts) - 1):
                self.folders.setdefault("/".join(parts[:depth]), set()).add(parts[depth])
            self.files.setdefault("/".join(parts[:-1]), set()).add(parts[-1])

    def packages_and_modules(self, folder: str = "", prefix: str = "") -> list[ImportResult]:
        """The packages and modules in ``folder`` (site-packages, or a namespace package), and those of
        the namespace packages in it."""
        found: list[ImportResult] = []
        for filename in sorted(self.files.get(folder, set())):
            module = _module_file(filename)
            if module is not None and module.kind == "source" and module.stem != "__init__":
                where = posixpath.join(folder, filename)
                if not folder and module.stem == "setup":
                    found.append(ImportResult(module.stem, "module", where, "skipped", _BUILD_SCRIPT))
                    continue
                found.append(ImportResult(prefix + module.stem, "module", where, "not-run"))
        for child in sorted(self.folders.get(folder, set())):
            if not _importable_part(child):
                continue
            path = posixpath.join(folder, child)
            init = self._package_init(path)
            if init is not None:
                found.append(ImportResult(prefix + child, "package", f"{path}/{init}", "not-run"))
            else:
                found += self.packages_and_modules(path, f"{prefix}{child}.")
        return found

    def _package_init(self, folder: str) -> str | None:
        """The ``__init__`` file that makes ``folder`` a regular package for this interpreter."""
        names = self.files.get(folder, set())
        suffixes = self.extension_suffixes
        for candidate in ("__init__.py", "__init__.pyc", *(f"__init__{suffix}" for suffix in suffixes)):
            if candidate in names:
                return candidate
        return None


def _extension_modules(wheel: Wheel, members: dict[str, str], suffixes: Sequence[str]) -> list[ImportResult]:
    """Each extension module by its dotted name, "skipped" where the interpreter (its ``suffixes``)
    cannot load it or it is an untagged ``.so``."""
    loads = ", ".join(suffix for suffix in suffixes if suffix != ".so")
    found: list[ImportResult] = []
    for installed in sorted(members):
        folder, _, filename = installed.rpartition("/")
        module = _module_file(filename)
        parts = folder.split("/") if folder else []
        if module is None or module.kind == "source" or not all(_importable_part(p) for p in parts):
            continue
        name = ".".join(parts if module.stem == "__init__" else [*parts, module.stem])
        if not name:
            continue
        own = name.rpartition(".")[2]
        if module.kind == "extension" and module.suffix in suffixes:
            found.append(ImportResult(name, "extension", installed, "not-run"))
        elif module.kind == "extension":
            why = f"built for another Python ({module.suffix}; this one loads {loads})"
            found.append(ImportResult(name, "extension", installed, "skipped", why))
        elif _exports_init(wheel, members[installed], own):
            why = (
                f"an untagged .so: an extension module or a library loaded with ctypes (it exports "
                f"PyInit_{own}): loaded as a library after the imports; --import {name} imports it"
            )
            found.append(ImportResult(name, "extension", installed, "skipped", why))
    return found


def _untagged_skipped(target: ImportResult) -> bool:
    """Whether ``target`` is an untagged ``.so`` the imports leave out (see :func:`_extension_modules`)."""
    module = _module_file(posixpath.basename(target.member or ""))
    return not target.importable and module is not None and module.kind == "untagged"


def _exports_init(wheel: Wheel, member: str, name: str) -> bool:
    """Whether the ELF file ``member`` exports what ``import`` calls in an extension module ``name``."""
    try:
        with wheel.seekable_member(member) as stream:
            if not is_elf(stream.read(4)):
                return False
            stream.seek(0)
            facts = read_elf(stream, path=member, symbols=False)
            return exports_any(stream, facts, module_init_symbols(name), path=member)
    except SlimwheelError:
        return False


# -- running ----------------------------------------------------------------------------------------


def _run(
    argv: Sequence[str],
    *,
    cwd: Path,
    timeout: int,
    clean: bool = False,
    library_path: Sequence[str] = (),
    environment: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **(environment or {})}
    if clean:  # the import must see the venv only
        for variable in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP"):
            env.pop(variable, None)
    if library_path:
        env["LD_LIBRARY_PATH"] = os.pathsep.join([*library_path, *filter(None, [env.get("LD_LIBRARY_PATH")])])
    try:
        return subprocess.run(
            list(argv), capture_output=True, text=True, check=False, timeout=timeout, cwd=cwd, env=env
        )
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(list(argv), 124, "", f"timed out after {timeout} s")


def _last_error(process: subprocess.CompletedProcess[str]) -> str:
    lines = [line.strip() for line in (process.stderr or process.stdout or "").splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR:")]
    if errors:
        return errors[-1]
    return lines[-1] if lines else f"exit status {process.returncode}"


def _site_packages(python: Path) -> Path:
    output = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return Path(output.strip())


def _installed_files(site: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Every installed file (resolved absolute path) -> its distribution; and distribution -> version."""
    owners: dict[str, str] = {}
    versions: dict[str, str] = {}
    for record in sorted(site.glob("*.dist-info/RECORD")):
        stem = record.parent.name.removesuffix(".dist-info")
        name, _, version = stem.partition("-")
        distribution = str(canonicalize_name(name))
        versions[distribution] = version
        # RECORD is CSV: a path with a comma is quoted, and only a csv reader reads it back.
        text = record.read_text(encoding="utf-8", errors="replace")
        for row in csv.reader(io.StringIO(text)):
            if row and row[0]:
                owners[os.path.realpath(site / row[0])] = distribution
    return owners, versions


# -- judging ----------------------------------------------------------------------------------------


def _judge(
    mapped: Sequence[str],
    facts: _WheelFacts,
    imported: Sequence[str],
    catalog: Catalog,
    owners: dict[str, str],
    *,
    skipped: Collection[str] = (),
) -> tuple[list[LoadedLibrary], list[VerifyProblem], list[str]]:
    """The NVIDIA libraries mapped, where each came from, and the problems; and the sonames not judged:
    those that only libraries ``skipped`` (installed paths: their load needs the NVIDIA driver, which
    this machine lacks, or a library the wheel leaves to the host or to an extra) need.
    cuequivariance-ops-cu11 0.5.1's ``libcue_ops.so`` alone needs cuBLAS and NVRTC; on a machine
    without a GPU they were "not mapped", and a wheel that loads them right failed."""
    manifest_libraries = facts.manifest.libraries if facts.manifest else ()
    by_name = {library.name: library for library in manifest_libraries}
    known = catalog.library_names
    own = str(canonicalize_name(facts.distribution))
    libraries: list[LoadedLibrary] = []
    problems: list[VerifyProblem] = []
    # By library and major: a framework the wheel requires may load another CUDA major's build of a
    # library beside the wheel's own (acellera-openmmtorch-cu12 1.10 links NVRTC 12, the newest torch
    # loads NVRTC 13); those are two libraries, each judged by its own providers.
    paths_by_name: dict[tuple[str, str | None], list[str]] = {}
    read_needs: dict[str, _SearchFacts] = {}  # see _asked_by
    for path in mapped:
        filename = posixpath.basename(path)
        if not filename.startswith("lib") or ".so" not in filename:
            continue
        name = soname_stem(filename)
        if name not in known and name not in by_name:
            continue
        major = _major_of(filename)
        paths_by_name.setdefault((name, major), []).append(path)
        owner = owners.get(os.path.realpath(path)) or _owner_by_folder(path, name, catalog)
        if owner == own and name not in by_name and other_makers_of(name):
            continue  # the wheel's own build of a library others make too (pyopencl's ocl-icd)
        kept = owner == own and any(path.endswith(f"/{copy}") for copy in facts.kept_copies)
        # Repair left a kept copy where it is, and the manifest says so.
        expected = (own,) if kept else _expected_owners(name, by_name, catalog, major)
        # A copy inside the wheel is a vendored copy, unless the wheel is itself that library's
        # provider (verifying nvidia-nvimgcodec-cu12, its own libnvimgcodec is where it belongs).
        ok = owner is not None and owner in expected and (owner != own or own in expected)
        libraries.append(LoadedLibrary(filename, name, path, owner, expected, ok))
        if not ok:
            providers = " or ".join(expected) or "an NVIDIA wheel"
            where = (
                "a copy inside the wheel itself" if owner == own else (owner or "no installed distribution")
            )
            # A requirement's own vendored copy (spconv-cu117 requires cumm-cu117, which bundles cudart
            # and NVRTC): the fix is in that wheel, and verify can install its repaired one instead.
            vendored_by = (
                f"; {owner} vendors it: repair {owner} too, and verify with its repaired wheel in a "
                "--find-links folder"
                if owner and owner != own and owner not in catalog.distributions
                else ""
            )
            copy = next(
                (
                    installed
                    for installed, distribution in sorted(owners.items())
                    if distribution in expected and posixpath.basename(installed) == filename
                ),
                None,
            )
            problems.append(
                VerifyProblem(
                    "outside-provider",
                    f"{filename} was loaded from {path} ({where}), not from {providers}{vendored_by}"
                    f"{_asked_by(mapped, path, read_needs, copy)}",
                )
            )
    for (name, _major), paths in paths_by_name.items():
        if len(paths) > 1:
            problems.append(
                VerifyProblem(
                    "mapped-twice", f"lib{name} is mapped from {len(paths)} paths: {', '.join(paths)}"
                )
            )
    wanted: dict[str, str] = {}
    for library in manifest_libraries:
        if not library.optional:
            wanted.setdefault(library.name, library.soname)
    for soname in sorted(facts.needed):
        if catalog.providers(soname=soname, include_prereleases=True):
            wanted.setdefault(soname_stem(soname), soname)
    unjudged = _needed_only_by(skipped, wanted.values(), facts, manifest_libraries) if skipped else set()
    mapped_majors: dict[str, set[str | None]] = {}
    for name, major in paths_by_name:
        mapped_majors.setdefault(name, set()).add(major)

    def is_mapped(name: str, soname: str) -> bool:
        majors = mapped_majors.get(name, set())
        wanted_major = _major_of(soname)
        return bool(majors) and (wanted_major is None or wanted_major in majors or None in majors)

    for name, soname in wanted.items():
        if not is_mapped(name, soname) and soname not in unjudged:
            problems.append(VerifyProblem("missing", f"{soname} is not mapped after {_what_ran(imported)}"))
    return libraries, problems, sorted(s for s in unjudged if not is_mapped(soname_stem(s), s))


def _asked_by(
    mapped: Sequence[str],
    path: str,
    needs: dict[str, _SearchFacts],
    provider_copy: str | None = None,
) -> str:
    """Which of the files mapped beside ``path`` name its soname in their DT_NEEDED, in words: the
    one to look at when a library came from outside its provider. None does when something opened it
    by name or path (ctypes, cuda-pathfinder's search, which falls back to the system's folders):
    pylibwholegraph-cu13 26.10.0's install maps the system toolkit's ``libcudart.so.13``. Where the
    provider's copy (``provider_copy``) is installed in a folder their search path names, glibc did
    not search for it: the outside one was loaded first, by name (moreau-cuda13 0.4.1's ``__init__``
    calls ``ctypes.CDLL("libcudart.so.13")``, which the system's folders answer, and loads the wheel's
    copy only where that fails), or, for a RUNPATH, LD_LIBRARY_PATH, searched before it, found it.
    ``needs``: what was read of the files already read, filled in here."""
    try:
        soname = read_elf_file(path, symbols=False).soname or posixpath.basename(path)
    except (OSError, ElfError):
        return ""
    users = []
    by_rpath = by_runpath = False
    folder = posixpath.dirname(provider_copy) if provider_copy is not None else None
    for other in mapped:
        if other == path or ".so" not in posixpath.basename(other):
            continue
        if other not in needs:  # each file read once, however many libraries came from outside
            needs[other] = _SearchFacts.read(other)
        facts = needs[other]
        if soname in facts.needed:
            users.append(other.split("/site-packages/", 1)[-1])
            by_rpath = by_rpath or folder in facts.rpath
            by_runpath = by_runpath or folder in facts.runpath
    if not users:
        return "; no file mapped names it in DT_NEEDED: it was opened by name or path (a dlopen)"
    named = some_of(users, _USERS_NAMED)
    if provider_copy is None or not (by_rpath or by_runpath):
        return f"; needed by {named}"
    installed = provider_copy.split("/site-packages/", 1)[-1]
    first = (
        "this one was loaded before them, by name (a dlopen of "
        f"{soname!r}, as a package's own ctypes.CDLL does, is answered by the system's folders)"
    )
    if not by_rpath and os.environ.get("LD_LIBRARY_PATH"):
        first = "LD_LIBRARY_PATH, which glibc searches before a RUNPATH, found this one, or " + first
    return f"; needed by {named}, whose search path reaches the provider's {installed}: {first}"


@dataclass(frozen=True)
class _SearchFacts:
    """What ``_asked_by`` reads of a mapped file: its DT_NEEDED, and the folders its RPATH and
    RUNPATH name, ``$ORIGIN`` expanded."""

    needed: tuple[str, ...] = ()
    rpath: tuple[str, ...] = ()
    runpath: tuple[str, ...] = ()

    @classmethod
    def read(cls, path: str) -> _SearchFacts:
        try:
            facts = read_elf_file(path, symbols=False)
        except (OSError, ElfError):
            return cls()
        # glibc's reading of an entry, written once (slimwheel.ldso), from the root: the path is absolute.
        origin = posixpath.dirname(path).lstrip("/")

        def folders(entries: Sequence[str]) -> tuple[str, ...]:
            found = []
            for entry in entries:
                kind, folder = expand_entry(entry, origin)
                if kind is EntryKind.FOLDER:
                    found.append(f"/{folder}")
                elif kind is EntryKind.ABSOLUTE:
                    found.append(posixpath.normpath(entry))
            return tuple(found)

        return cls(facts.needed, folders(facts.rpath), folders(facts.runpath))


_USERS_NAMED = 3


def _what_ran(imported: Sequence[str]) -> str:
    return f"import {', '.join(imported)}" if imported else "loading the wheel's libraries"


def _needed_only_by(
    files: Collection[str],
    sonames: Iterable[str],
    facts: _WheelFacts,
    manifest_libraries: Sequence[ManifestLibrary],
) -> set[str]:
    """Of ``sonames``, those only ``files`` (installed paths) need: directly, or through NVIDIA
    libraries that only they need (cuBLASLt, which cuBLAS needs, listed in the manifest with no file
    of the wheel needing it)."""
    users = {library.soname: set(library.needed_by) for library in manifest_libraries}
    for soname in sonames:
        users.setdefault(soname, set()).update(facts.needed_by.get(soname, ()))
    required_by: dict[str, set[str]] = {}  # soname stem -> the sonames of the libraries needing it
    for library in manifest_libraries:
        for name in library.requires:
            required_by.setdefault(name, set()).add(library.soname)
    only = {soname for soname, paths in users.items() if paths and paths <= set(files)}
    changed = True
    while changed:  # a library only unjudged libraries need is not judged either
        changed = False
        for soname, paths in users.items():
            parents = required_by.get(soname_stem(soname), set())
            if soname not in only and not paths and parents and parents <= only:
                only.add(soname)
                changed = True
    return only & set(sonames)


def _expected_owners(
    name: str, by_name: Mapping[str, ManifestLibrary], catalog: Catalog, major: str | None = None
) -> tuple[str, ...]:
    """The distributions that may provide library ``name`` (of soname major ``major``, where the file
    name tells it): the manifest's, else the catalog's (the providers of that major's soname, for a
    build of another major than the manifest's)."""
    listed = by_name.get(name)
    if listed is not None and (major is None or _major_of(listed.soname) in (None, major)):
        return (listed.distribution,)
    providers = catalog.providers(name=name, include_prereleases=True)
    of_major = [p for p in providers if major is not None and _major_of(p.library.soname) == major]
    return tuple(sorted({p.distribution for p in of_major or providers}))


def _major_of(filename: str) -> str | None:
    """The first number of a library file name's version (``libcudart.so.11.0``: "11";
    ``libcudart-96c42e41.so.13.0.96``: "13"), or None."""
    parsed = parse_library_file_name(filename)
    version = parsed.version if parsed else None
    return version.split(".", 1)[0] if version else None


def _owner_by_folder(path: str, name: str, catalog: Catalog) -> str | None:
    """The provider whose catalog folder the path ends in (``.../site-packages/nvidia/cu13/lib/x``)."""
    marker = "/site-packages/"
    if marker not in path:
        return None
    relative = path.split(marker, 1)[1]
    for provider in catalog.providers(name=name, include_prereleases=True):
        if provider.library.folder == posixpath.dirname(relative):
            return provider.distribution
    return None
