"""``repair --embed-loader``: copy ``slimwheel.runtime`` into the package being repaired, with a call at
its import, so that the package loads its NVIDIA libraries itself and needs no slimwheel at run time.

For each package: the run-time package's modules, byte for byte, as ``<package>/_slimwheel_runtime/``
(its modules import one another relatively and nothing else of slimwheel), and five lines in
``<package>/__init__.py``, after the module docstring and any ``from __future__`` imports::

    # slimwheel repair --embed-loader: ...
    # ...
    from ._slimwheel_runtime import preload as _slimwheel_preload
    _slimwheel_preload("mypkg")
    del _slimwheel_preload

``embed_request`` reads what planning needs (the packages' ``__init__.py``, the run-time modules);
``plan_embedding`` is pure; ``patched_init`` gives the new ``__init__.py`` to both the planner (does it
change?) and apply (the bytes to write). Repairing a wheel that already has an embedded loader
replaces its files and its call (found by the marker comment); it never adds a second call.
"""

from __future__ import annotations

import ast
import io
import posixpath
import tokenize
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from slimwheel.repair.errors import RepairError
from slimwheel.wheel.reader import TEXT_MEMBER_LIMIT

if TYPE_CHECKING:
    from slimwheel.runtime.manifest import Manifest
    from slimwheel.wheel import Wheel

__all__ = [
    "LOADER_FOLDER",
    "MARKER",
    "AddedFile",
    "EmbedRequest",
    "EmbeddedLoader",
    "InitPatch",
    "LoaderFile",
    "PackageInit",
    "call_lines",
    "embed_request",
    "init_patch",
    "is_loader_file",
    "loader_files",
    "patched_init",
    "plan_embedding",
]

LOADER_FOLDER = "_slimwheel_runtime"
MARKER = "# slimwheel repair --embed-loader:"
_CALL_END = b"del _slimwheel_preload"
_CALL_SPAN = 10  # lines an earlier call may take, marker to del, before it counts as edited
_BOM = b"\xef\xbb\xbf"


def call_lines(distribution: str) -> tuple[str, ...]:
    """The lines inserted into ``__init__.py`` (ASCII: a distribution name is letters, digits, ``-._``)."""
    return (
        f"{MARKER} load the NVIDIA libraries this package links from their pip",
        "# wheels before its extension modules are imported (also where an RPATH cannot reach them).",
        f"from .{LOADER_FOLDER} import preload as _slimwheel_preload",
        f'_slimwheel_preload("{distribution}")',
        _CALL_END.decode(),
    )


@dataclass(frozen=True)
class LoaderFile:
    """One module of the run-time package as slimwheel has it installed."""

    name: str  # "_loader.py"
    source: str  # its absolute path
    size: int


@dataclass(frozen=True)
class PackageInit:
    """A package's ``__init__.py`` in the wheel, and what an earlier ``--embed-loader`` wrote beside it."""

    member: str  # archive name: "mypkg/__init__.py", or under <dist>.data/purelib/ or platlib/
    text: bytes
    embedded: tuple[str, ...] = ()  # members already under <package>/_slimwheel_runtime/


@dataclass(frozen=True)
class EmbedRequest:
    """``--embed-loader[=PACKAGE]`` and what planning needs for it, read from the wheel and slimwheel."""

    distribution: str  # the wheel's distribution name: what the call preloads
    packages: tuple[str, ...]  # named (dotted); () picks the packages of the files that need libraries
    inits: Mapping[str, PackageInit]  # by dotted package name: the top-level ones and those named
    files: tuple[LoaderFile, ...]


@dataclass(frozen=True)
class AddedFile:
    path: str  # archive name: "mypkg/_slimwheel_runtime/_loader.py"
    source: str  # the file copied into it
    size: int


@dataclass(frozen=True)
class InitPatch:
    """The call at import, in one ``__init__.py``."""

    path: str  # archive name
    after_line: int  # the call follows this line (0: it opens the file), once an earlier call is removed
    removed: tuple[int, int] | None  # first and last line of an earlier call, which this one replaces
    lines: tuple[str, ...]  # the call
    changes_anything: bool  # False when the file already has this very call in this place


@dataclass(frozen=True)
class EmbeddedLoader:
    """The loader embedded into one package."""

    package: str  # dotted
    files: tuple[AddedFile, ...]
    replaced: tuple[str, ...]  # an earlier embedded loader's members, not copied over
    init: InitPatch


def is_loader_file(installed_path: str) -> bool:
    """A member an ``--embed-loader`` wrote (its Python code names libraries, but never loads a copy)."""
    return f"/{LOADER_FOLDER}/" in f"/{installed_path}"


def loader_files() -> tuple[LoaderFile, ...]:
    """The modules of ``slimwheel.runtime``, found in that package's own folder (no bytecode)."""
    import slimwheel.runtime

    folder = Path(slimwheel.runtime.__file__).parent
    files = tuple(LoaderFile(p.name, str(p), p.stat().st_size) for p in sorted(folder.glob("*.py")))
    if not any(f.name == "__init__.py" for f in files):
        raise RepairError(
            f"{folder}: the modules of slimwheel.runtime are not there to embed",
            hint="reinstall slimwheel from its wheel",
        )
    return files


def embed_request(wheel: Wheel, packages: Sequence[str]) -> EmbedRequest:
    """What ``plan_embedding`` needs from ``wheel``: the ``__init__.py`` of its top-level packages and
    of those named, and the run-time modules to copy."""
    installed = {m.name: wheel.installed_path(m.name) for m in wheel.members}
    inits: dict[str, PackageInit] = {}
    for member, path in installed.items():
        folder, _, base = path.rpartition("/")
        package = folder.replace("/", ".")
        if base != "__init__.py" or not _is_package_name(package):
            continue
        if "." in package and package not in packages:
            continue
        embedded = tuple(
            sorted(m for m, p in installed.items() if p.startswith(f"{folder}/{LOADER_FOLDER}/"))
        )
        inits[package] = PackageInit(member, wheel.read_member(member, limit=TEXT_MEMBER_LIMIT), embedded)
    return EmbedRequest(wheel.distribution, tuple(packages), inits, loader_files())


def _is_package_name(name: str) -> bool:
    return bool(name) and all(part.isidentifier() for part in name.split("."))


def plan_embedding(
    request: EmbedRequest, manifest: Manifest, wheel: str
) -> tuple[tuple[EmbeddedLoader, ...], str | None]:
    """The loaders to embed, and a note when there is nothing to load. Pure."""
    if not manifest.libraries:
        return (), "--embed-loader: the manifest lists no NVIDIA library, so nothing is embedded"
    packages = request.packages or _packages_needing(request, manifest, wheel)
    loaders = []
    for package in packages:
        init = request.inits.get(package)
        folder = package.replace(".", "/")
        if init is None:
            raise RepairError(
                f"--embed-loader needs a package with an __init__.py; {wheel} has no {folder}/__init__.py",
                hint="pass --embed-loader=PACKAGE naming a regular package",
            )
        prefix = posixpath.dirname(init.member)
        files = tuple(
            AddedFile(f"{prefix}/{LOADER_FOLDER}/{f.name}", f.source, f.size) for f in request.files
        )
        patch = init_patch(init.member, init.text, request.distribution)
        loaders.append(EmbeddedLoader(package, files, init.embedded, patch))
    return tuple(loaders), None


def _packages_needing(request: EmbedRequest, manifest: Manifest, wheel: str) -> tuple[str, ...]:
    """The top-level packages holding the wheel's files that need the manifest's libraries."""
    found: list[str] = []
    for path in sorted({p for library in manifest.libraries for p in library.needed_by}):
        top, slash, _ = path.partition("/")
        if not slash:
            raise RepairError(
                f"--embed-loader needs a package with an __init__.py; {wheel} has the extension module "
                f"{path} at top level: pass --embed-loader=PACKAGE"
            )
        if not top.isidentifier():
            continue  # <pkg>.libs/: those load through the package's own extension modules
        if top not in request.inits:
            raise RepairError(
                f"--embed-loader needs a package with an __init__.py; {wheel} has {path} in {top}/, "
                "which has none (a namespace package): pass --embed-loader=PACKAGE"
            )
        if top not in found:
            found.append(top)
    if not found:
        raise RepairError(
            f"--embed-loader: no package of {wheel} holds the files that need NVIDIA libraries: "
            "pass --embed-loader=PACKAGE"
        )
    return tuple(found)


# --- the call in __init__.py -------------------------------------------------------------------------


def init_patch(path: str, text: bytes, distribution: str) -> InitPatch:
    """The call for ``distribution`` in the ``__init__.py`` ``text``, replacing an earlier one."""
    body = text.removeprefix(_BOM)
    lines = body.splitlines(keepends=True)
    removed = _earlier_call(path, lines)
    kept = lines if removed is None else lines[: removed[0] - 1] + lines[removed[1] :]
    after = _insertion_line(path, b"".join(kept))
    patch = InitPatch(path, after, removed, call_lines(distribution), changes_anything=True)
    return replace(patch, changes_anything=patched_init(text, patch) != text)


def _earlier_call(path: str, lines: Sequence[bytes]) -> tuple[int, int] | None:
    """First and last line (1-based) of a call an earlier ``--embed-loader`` inserted."""
    marker = MARKER.encode()
    for start, line in enumerate(lines):
        if not line.startswith(marker):
            continue
        for end in range(start + 1, min(start + _CALL_SPAN, len(lines))):
            if lines[end].rstrip() == _CALL_END:
                return start + 1, end + 1
        raise RepairError(
            f"{path}: line {start + 1} starts a call --embed-loader wrote, edited since "
            f"(no '{_CALL_END.decode()}' follows)",
            hint="remove those lines and repair again",
        )
    return None


# Python 3.10's parser has no depth guard: a statement nested ~150,000 deep (a chain of attributes or
# operators) overflows the C stack and kills the process, where 3.11+ raise RecursionError. Depth
# never exceeds a statement's token count, so statements longer than this are refused before parsing;
# no hand-written __init__.py comes near it.
_MAX_STATEMENT_TOKENS = 50_000


def _check_statement_sizes(source: bytes) -> None:
    """RecursionError for a statement too long to parse safely; tokenizing is iterative, never deep."""
    count = 0
    try:
        for token in tokenize.tokenize(io.BytesIO(source).readline):
            if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                count = 0
            elif token.type not in (tokenize.NL, tokenize.COMMENT, tokenize.ENCODING):
                count += 1
                if count > _MAX_STATEMENT_TOKENS:
                    raise RecursionError(f"a statement of more than {_MAX_STATEMENT_TOKENS} tokens")
    except (tokenize.TokenError, SyntaxError):
        return  # not Python: ast.parse says where, in its own words


def _insertion_line(path: str, source: bytes) -> int:
    """The line the call follows: the docstring's or the last ``from __future__`` import's last line,
    else the line before the first statement (after the comments that open the file: a coding cookie
    must stay in the first two lines)."""
    try:
        _check_statement_sizes(source)
        tree = ast.parse(source, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        # Nesting deeper than the parser's stacks (a million unary minuses, a long chain of
        # attributes or operators) is a RecursionError or a MemoryError, not a SyntaxError.
        where = f", line {exc.lineno}" if isinstance(exc, SyntaxError) and exc.lineno else ""
        if isinstance(exc, SyntaxError):
            reason = exc.msg
        elif isinstance(exc, ValueError):
            reason = str(exc)
        else:
            reason = "it nests too deeply for Python's parser"
        raise RepairError(
            f"{path} does not parse ({reason}{where}), so --embed-loader cannot place its call in it",
            hint="fix the file, or name another package with --embed-loader=PACKAGE",
        ) from exc
    body = tree.body
    index = after = 0
    if ast.get_docstring(tree, clean=False) is not None:
        index, after = 1, body[0].end_lineno or body[0].lineno
    while index < len(body):
        node = body[index]
        if not (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            break
        index, after = index + 1, node.end_lineno or node.lineno
    if after and index < len(body) and _first_line(body[index]) <= after:
        raise RepairError(
            f"{path}: line {after} holds another statement after the docstring or a __future__ import, "
            "so --embed-loader cannot place its call between them",
            hint="put that statement on a line of its own",
        )
    if after:
        return after
    return _first_line(body[0]) - 1 if body else len(source.splitlines())


def _first_line(node: ast.stmt) -> int:
    """Where a statement starts: its first decorator's line for a decorated definition."""
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def patched_init(text: bytes, patch: InitPatch) -> bytes:
    """``text`` with an earlier call removed and ``patch``'s call inserted, in the file's own line
    endings; everything else byte for byte (a UTF-8 BOM stays first)."""
    bom = _BOM if text.startswith(_BOM) else b""
    lines = text.removeprefix(_BOM).splitlines(keepends=True)
    if patch.removed is not None:
        start, end = patch.removed
        del lines[start - 1 : end]
    newline = _newline(text)
    head, tail = lines[: patch.after_line], lines[patch.after_line :]
    if head and not head[-1].endswith((b"\n", b"\r")):
        head[-1] += newline
    call = [line.encode("ascii") + newline for line in patch.lines]
    return bom + b"".join([*head, *call, *tail])


def _newline(text: bytes) -> bytes:
    for line in text.splitlines(keepends=True):
        for ending in (b"\r\n", b"\n", b"\r"):
            if line.endswith(ending):
                return ending
    return b"\n"
