"""``verify``: install a wheel into a fresh venv, import it in a fresh process, and check where each NVIDIA
library was mapped from (``/proc/self/maps``).

"Test the wheels locally before uploading": the install uses this environment's pip
(``pip --python <venv python>``), so the venv needs no pip of its own. The wheel must load by itself
(through its RPATH): ``slimwheel.runtime.preload`` is not called.
"""

from __future__ import annotations

import json
import os
import posixpath
import subprocess
import sys
import tempfile
import venv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from slimwheel.catalog.model import Catalog, LibraryProvider
from slimwheel.check import CheckKind, CheckReport, FileCheck, NeededCheck, check_wheel
from slimwheel.elf import is_elf, read_elf
from slimwheel.errors import ElfError, InputError, SlimwheelError
from slimwheel.manifest import MANIFEST_NAME, Manifest, ManifestError
from slimwheel.names import is_shared_library_name, soname_stem
from slimwheel.wheel import Wheel

__all__ = [
    "LoadedLibrary",
    "Pin",
    "VerifyProblem",
    "VerifyReport",
    "diagnose",
    "lowest_pins",
    "verify_wheel",
]

PIP_TIMEOUT = 600
IMPORT_TIMEOUT = 300

_PROBE = """
import json, sys
__import__(sys.argv[1])
with open("/proc/self/maps") as maps:
    mapped = sorted({line.split(None, 5)[5].strip() for line in maps if len(line.split(None, 5)) == 6})
print(json.dumps([path for path in mapped if path.startswith("/")]))
"""


@dataclass(frozen=True)
class Pin:
    """A ``dist==version`` line of the ``--lowest`` constraints file."""

    distribution: str
    version: str
    specifier: str  # what it had to satisfy (every requirement seen on it, combined)


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


@dataclass(frozen=True)
class VerifyReport:
    wheel: str
    distribution: str
    version: str
    import_name: str
    pip_configuration: str  # "isolated" (only the sources given) or "user's"
    sources: tuple[str, ...]  # the pip options naming sources
    lowest: bool
    pins: tuple[Pin, ...]
    installed: tuple[str, ...]  # "dist==version" found in the venv after the install
    libraries: tuple[LoadedLibrary, ...]
    problems: tuple[VerifyProblem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class _WheelFacts:
    distribution: str
    version: str
    requires_dist: tuple[str, ...]
    import_name: str
    manifest: Manifest | None
    needed: frozenset[str]  # DT_NEEDED of the wheel's own ELF files


def verify_wheel(
    path: Path,
    catalog: Catalog,
    *,
    index_url: str | None = None,
    find_links: Sequence[str] = (),
    import_name: str | None = None,
    lowest: bool = False,
) -> VerifyReport:
    """Install ``path`` with its dependencies into a fresh venv, import it, and check the mapped libraries.

    Bad input (not a wheel, no importable package) raises an ``InputError``; an install or import that
    fails is a problem in the report.
    """
    path = Path(path)
    facts = _read_wheel(path, import_name)
    pins = lowest_pins(facts.requires_dist, catalog) if lowest else ()
    sources: list[str] = []
    if index_url:
        sources += ["--index-url", index_url]
    elif find_links:
        sources.append("--no-index")
    for link in find_links:
        sources += ["--find-links", link]
    isolated = bool(sources)

    def report(
        installed: Sequence[str] = (),
        libraries: Sequence[LoadedLibrary] = (),
        problems: Sequence[VerifyProblem] = (),
    ) -> VerifyReport:
        return VerifyReport(
            wheel=str(path),
            distribution=facts.distribution,
            version=facts.version,
            import_name=facts.import_name,
            pip_configuration="isolated" if isolated else "user's",
            sources=tuple(sources),
            lowest=lowest,
            pins=pins,
            installed=tuple(installed),
            libraries=tuple(libraries),
            problems=tuple(problems),
        )

    with tempfile.TemporaryDirectory(prefix="slimwheel-verify-") as temporary:
        work = Path(temporary)
        venv.EnvBuilder(with_pip=False, clear=True).create(work / "venv")
        python = work / "venv" / "bin" / "python"
        argv = [sys.executable, "-m", "pip", "--python", str(python)]
        if isolated:
            argv.append("--isolated")
        argv += ["--disable-pip-version-check", "install", "--no-input", *sources]
        if pins:
            constraints = work / "constraints.txt"
            constraints.write_text("".join(f"{pin.distribution}=={pin.version}\n" for pin in pins))
            argv += ["-c", str(constraints)]
        argv.append(str(path.resolve()))
        installed = _run(argv, cwd=work, timeout=PIP_TIMEOUT)
        if installed.returncode != 0:
            return report(
                problems=[VerifyProblem("install", f"pip install failed: {_last_error(installed)}")]
            )
        site = _site_packages(python)
        owners, versions = _installed_files(site)
        installed_names = tuple(f"{name}=={version}" for name, version in sorted(versions.items()))
        probe = _run(
            [str(python), "-c", _PROBE, facts.import_name], cwd=work, timeout=IMPORT_TIMEOUT, clean=True
        )
        if probe.returncode != 0:
            message = f"import {facts.import_name} failed: {_last_error(probe)}"
            return report(
                installed_names, problems=[VerifyProblem("import", message), *diagnose(path, catalog)]
            )
        try:
            mapped = [str(p) for p in json.loads(probe.stdout.strip().splitlines()[-1])]
        except (ValueError, IndexError):
            message = f"import {facts.import_name}: unreadable probe output {probe.stdout[-200:]!r}"
            return report(installed_names, problems=[VerifyProblem("import", message)])
        libraries, problems = _judge(mapped, facts, catalog, owners)
        if any(problem.kind == "missing" for problem in problems):
            problems += diagnose(path, catalog)
        return report(installed_names, libraries, problems)


def lowest_pins(requires_dist: Sequence[str], catalog: Catalog) -> tuple[Pin, ...]:
    """For each NVIDIA requirement (transitive ones the catalog knows too), the lowest release that
    satisfies every requirement seen on it. Requirements on distributions the catalog does not know are
    left to pip."""
    known = set(catalog.distributions)
    specs: dict[str, list[str]] = {}
    pending: list[tuple[str, tuple[str, ...]]] = [(line, ("",)) for line in requires_dist]
    chosen: dict[str, str] = {}
    expanded: set[tuple[str, str, frozenset[str]]] = set()
    extras: dict[str, set[str]] = {}
    for _round in range(20):
        while pending:
            line, active_extras = pending.pop()
            try:
                requirement = Requirement(line)
            except InvalidRequirement:
                continue
            if requirement.marker is not None and not any(
                requirement.marker.evaluate({"extra": extra}) for extra in active_extras
            ):
                continue
            name = str(canonicalize_name(requirement.name))
            if name not in known:
                continue
            specs.setdefault(name, [])
            if str(requirement.specifier) not in specs[name]:
                specs[name].append(str(requirement.specifier))
            extras.setdefault(name, set()).update(requirement.extras)
        changed = False
        for name, lines in specs.items():
            combined = SpecifierSet(",".join(filter(None, lines)))
            release = next(
                (r for r in catalog.releases_of(name) if combined.contains(r.parsed_version)), None
            )
            if release is None:
                continue
            if chosen.get(name) != release.version:
                chosen[name] = release.version
                changed = True
            key = (name, release.version, frozenset(extras.get(name, ())))
            if key not in expanded:
                expanded.add(key)
                active = ("", *sorted(extras.get(name, ())))
                pending += [(line, active) for line in release.requires_dist]
                changed = True
        if not changed and not pending:
            break
    return tuple(
        Pin(name, chosen[name], ",".join(filter(None, specs[name])) or "any") for name in sorted(chosen)
    )


# -- why it does not load ---------------------------------------------------------------------------

_UNRESOLVED_KINDS = (CheckKind.MISSING_REQUIREMENT, CheckKind.UNRESOLVED)


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


def _read_wheel(path: Path, import_name: str | None) -> _WheelFacts:
    with Wheel.open(path) as wheel:
        manifest = None
        manifest_member = f"{wheel.dist_info}/{MANIFEST_NAME}"
        if wheel.has_member(manifest_member):
            try:
                manifest = Manifest.from_json(wheel.read_member(manifest_member))
            except ManifestError as exc:
                raise InputError(str(path), f"{manifest_member}: {exc}") from exc
        name = import_name or _default_import_name(wheel)
        if not name:
            raise InputError(
                str(path), "no package or module to import in the wheel", hint="pass --import NAME"
            )
        needed: set[str] = set()
        for member in wheel.members:
            if member.is_dir or not (is_shared_library_name(member.name) or member.name.endswith(".so")):
                continue
            with wheel.seekable_member(member.name) as stream:
                if not is_elf(stream.read(4)):
                    continue
                stream.seek(0)
                try:
                    needed.update(read_elf(stream, path=member.name, symbols=False).needed)
                except ElfError:
                    continue
        return _WheelFacts(
            distribution=wheel.distribution,
            version=wheel.version,
            requires_dist=wheel.requires_dist(),
            import_name=name,
            manifest=manifest,
            needed=frozenset(needed),
        )


def _default_import_name(wheel: Wheel) -> str | None:
    top_level = f"{wheel.dist_info}/top_level.txt"
    if wheel.has_member(top_level):
        for line in wheel.read_member(top_level).decode("utf-8", "replace").splitlines():
            if line.strip() and "/" not in line:
                return line.strip()
    names = sorted(wheel.installed_path(m.name) for m in wheel.members if not m.is_dir)
    for name in names:
        parts = name.split("/")
        if len(parts) == 2 and parts[1] == "__init__.py" and parts[0].isidentifier():
            return parts[0]
    for name in names:
        if "/" not in name and name.endswith(".py") and name[:-3].isidentifier():
            return name[:-3]
    return None


# -- running ----------------------------------------------------------------------------------------


def _run(
    argv: Sequence[str], *, cwd: Path, timeout: int, clean: bool = False
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if clean:  # the import must see the venv only
        for variable in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP"):
            env.pop(variable, None)
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
        for line in record.read_text(encoding="utf-8", errors="replace").splitlines():
            relative = line.rsplit(",", 2)[0] if line.count(",") >= 2 else line
            if not relative:
                continue
            owners[os.path.realpath(site / relative)] = distribution
    return owners, versions


# -- judging ----------------------------------------------------------------------------------------


def _judge(
    mapped: Sequence[str], facts: _WheelFacts, catalog: Catalog, owners: dict[str, str]
) -> tuple[list[LoadedLibrary], list[VerifyProblem]]:
    manifest_libraries = facts.manifest.libraries if facts.manifest else ()
    by_name = {library.name: library for library in manifest_libraries}
    known = catalog.library_names
    own = str(canonicalize_name(facts.distribution))
    libraries: list[LoadedLibrary] = []
    problems: list[VerifyProblem] = []
    paths_by_name: dict[str, list[str]] = {}
    for path in mapped:
        filename = posixpath.basename(path)
        if not filename.startswith("lib") or ".so" not in filename:
            continue
        name = soname_stem(filename)
        if name not in known and name not in by_name:
            continue
        paths_by_name.setdefault(name, []).append(path)
        if name in by_name:
            expected: tuple[str, ...] = (by_name[name].distribution,)
        else:
            expected = tuple(
                sorted({p.distribution for p in catalog.providers(name=name, include_prereleases=True)})
            )
        owner = owners.get(os.path.realpath(path))
        if owner is None:
            owner = _owner_by_folder(path, name, catalog)
        ok = owner is not None and owner != own and owner in expected
        libraries.append(LoadedLibrary(filename, name, path, owner, expected, ok))
        if not ok:
            providers = " or ".join(expected) or "an NVIDIA wheel"
            where = (
                "a copy inside the wheel itself" if owner == own else (owner or "no installed distribution")
            )
            problems.append(
                VerifyProblem(
                    "outside-provider",
                    f"{filename} was loaded from {path} ({where}), not from {providers}",
                )
            )
    for name, paths in paths_by_name.items():
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
    for name, soname in wanted.items():
        if name not in paths_by_name:
            problems.append(
                VerifyProblem("missing", f"{soname} is not mapped after import {facts.import_name}")
            )
    return libraries, problems


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
