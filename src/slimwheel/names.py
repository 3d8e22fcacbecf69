"""Library names: a library is named by its soname stem (``libcudss.so.1`` -> ``cudss``).

Parses the file names seen in real wheels: plain sonames, auditwheel's hashed copies
(``libcudss-1a2b3c4d.so.1.0.0``), renamed copies that keep the soname (``libcudart.41118559.so.12``)
and Windows DLLs (``cudss64_1.dll``, ``nvJitLink_130_0.dll``).
"""

from __future__ import annotations

import enum
import importlib.machinery
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from slimwheel.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from packaging.specifiers import SpecifierSet

__all__ = [
    "LibraryFileName",
    "LibrarySpec",
    "NameStyle",
    "cuda_major_named",
    "cuda_major_of_folder",
    "is_extension_abi_tag",
    "is_extension_module_name",
    "is_libpython",
    "is_private_copy_name",
    "is_shared_library_name",
    "left_to_host_name",
    "may_be_binary",
    "module_init_symbols",
    "name_of_library",
    "names_file",
    "parse_library_file_name",
    "parse_library_spec",
    "soname_stem",
    "untagged_module_stem",
]


class NameStyle(enum.Enum):
    PLAIN = "plain"  # libcudss.so.1, or an unversioned libfoo.so
    AUDITWHEEL = "auditwheel"  # libcudss-1a2b3c4d.so.1.0.0 (SONAME rewritten to this name)
    RENAMED = "renamed"  # libcudart.41118559.so.12 (SONAME kept)
    WINDOWS = "windows"  # cudss64_1.dll


@dataclass(frozen=True)
class LibraryFileName:
    """What a shared library's file name tells, before its ELF header is read."""

    filename: str
    stem: str
    version: str | None
    style: NameStyle
    name_hash: str | None = None

    @property
    def plain_soname(self) -> str | None:
        """The soname the file name spells, when the style keeps it (plain and renamed copies)."""
        if self.style is NameStyle.PLAIN:
            return self.filename
        if self.style is NameStyle.RENAMED:
            return f"lib{self.stem}.so.{self.version}" if self.version else f"lib{self.stem}.so"
        return None


_VERSION = r"[0-9]+(?:\.[0-9]+)*"
_AUDITWHEEL = re.compile(rf"^lib(?P<stem>.+?)-(?P<hash>[0-9a-f]{{8}})\.so(?:\.(?P<version>{_VERSION}))?$")
_RENAMED = re.compile(rf"^lib(?P<stem>.+?)\.(?P<hash>[0-9a-f]{{8}})\.so(?:\.(?P<version>{_VERSION}))?$")
_PLAIN = re.compile(rf"^lib(?P<stem>.+?)\.so(?:\.(?P<version>{_VERSION}))?$")
_WINDOWS = re.compile(r"^(?P<stem>.+?)(?:64)?(?:_(?P<version>[0-9][0-9_.]*))?\.dll$", re.IGNORECASE)


def parse_library_file_name(filename: str) -> LibraryFileName | None:
    """Split a shared library file name into stem, version and naming style; None if it is not one."""
    base = filename.rsplit("/", 1)[-1]
    for pattern, style in ((_AUDITWHEEL, NameStyle.AUDITWHEEL), (_RENAMED, NameStyle.RENAMED)):
        match = pattern.match(base)
        # A stem that is all hex digits would be ambiguous; real stems never are.
        if match:
            return LibraryFileName(base, match["stem"], match["version"], style, match["hash"])
    match = _PLAIN.match(base)
    if match:
        return LibraryFileName(base, match["stem"], match["version"], NameStyle.PLAIN)
    match = _WINDOWS.match(base)
    if match:
        return LibraryFileName(base, match["stem"], match["version"], NameStyle.WINDOWS)
    return None


def is_private_copy_name(filename: str) -> bool:
    """A library copy renamed so that nothing outside its wheel loads it by its soname: auditwheel's
    ``libgmp-6d289461.so.10.4.1`` (SONAME rewritten to that name) or a ``libX.<hash>.so.N``. A wheel
    that carries one provides no library to others through it (nvidia-pytriton's grafted libgmp, nvCOMP
    5.2.0.10's ``nvidia_nvcomp_cu12.libs/libnvcomp-75640453.so.5``)."""
    parsed = parse_library_file_name(filename)
    return parsed is not None and parsed.style in (NameStyle.AUDITWHEEL, NameStyle.RENAMED)


def is_shared_library_name(filename: str) -> bool:
    return parse_library_file_name(filename) is not None


# Members whose names say text or a wheel's own metadata: never opened to look for ELF files.
_NOT_BINARY = re.compile(
    r"\.(py|pyi|pyc|txt|md|rst|json|toml|cfg|ini|h|hh|hpp|cuh|c|cc|cpp|cu|pxd|pyx|typed|html|csv|yaml|yml)$"
    r"|/(METADATA|RECORD|WHEEL|LICENSE[^/]*|top_level\.txt|entry_points\.txt)$",
    re.IGNORECASE,
)


def may_be_binary(member: str) -> bool:
    """Whether a wheel member's name leaves room for an ELF file (programs have no suffix to tell)."""
    return not member.endswith("/") and _NOT_BINARY.search(member) is None


# An extension module's ABI tag, ``core_cc.<tag>.so``, for interpreters other than this one too.
_EXTENSION_ABI_TAG = re.compile(r"abi3|cpython-[\w-]+|cp\d+[\w-]*|pypy[\w-]*|graalpy[\w-]*|pyston[\w-]*")


def is_extension_abi_tag(tag: str) -> bool:
    """``tag`` (``cpython-311-x86_64-linux-gnu``, ``abi3``) is an extension module's ABI tag, for this
    interpreter or another."""
    return f".{tag}.so" in importlib.machinery.EXTENSION_SUFFIXES or bool(_EXTENSION_ABI_TAG.fullmatch(tag))


# The interpreter's own library: libpython3.12.so.1.0, libpython3.13t.so.1.0, libpython3.so.
_LIBPYTHON = re.compile(r"libpython\d+(\.\d+[a-z]*)?\.so(\.[\d.]+)?")


def is_libpython(soname: str) -> bool:
    """``soname`` is CPython's shared library (``libpython3.12.so.1.0``), which only an interpreter
    built with ``--enable-shared`` has loaded."""
    return bool(_LIBPYTHON.fullmatch(soname))


def is_extension_module_name(filename: str) -> bool:
    """Named as ``import`` loads it: ``core_cc.cpython-311-x86_64-linux-gnu.so``, ``_C.abi3.so``, or an
    untagged ``_C.so`` (torchvision's); not ``libuct_cuda.so``, a library (a plugin, say)."""
    if not filename.endswith(".so"):
        return False
    stem, dot, tag = filename[: -len(".so")].partition(".")
    if not stem.isidentifier():
        return False
    return is_extension_abi_tag(tag) if dot else not stem.startswith("lib")


def untagged_module_stem(filename: str) -> str | None:
    """The module name of a file named as an extension module with no ABI tag (``_C.so`` -> ``_C``,
    ``aov.so`` -> ``aov``), which only its symbols tell from a plugin that a library loads (mitsuba's
    ``mitsuba/plugins/aov.so``): see :func:`module_init_symbols`. None for other names."""
    if not is_extension_module_name(filename) or "." in filename[: -len(".so")]:
        return None
    return filename[: -len(".so")]


def module_init_symbols(module: str) -> tuple[str, str]:
    """What an extension module named ``module`` exports for ``import`` to call: ``PyInit_<module>``,
    or ``PyModExport_<module>`` (PEP 793)."""
    return f"PyInit_{module}", f"PyModExport_{module}"


def soname_stem(soname: str) -> str:
    """``libcublasLt.so.13`` -> ``cublasLt``; a name that is no library name is returned as is."""
    parsed = parse_library_file_name(soname)
    return parsed.stem if parsed else soname


@dataclass(frozen=True)
class LibrarySpec:
    """A library named on the command line: ``cudss`` or ``cudss>=1.0``."""

    name: str
    specifier: str = ""

    def specifier_set(self) -> SpecifierSet:
        from packaging.specifiers import SpecifierSet

        return SpecifierSet(self.specifier)

    def __str__(self) -> str:
        return f"{self.name}{self.specifier}"


_SPEC = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9_.+-]*?)\s*(?P<spec>(?:[<>=!~].*)?)$")


def parse_library_spec(text: str) -> LibrarySpec:
    """Parse ``cudss``, ``cudss>=1.0`` or ``nvrtc-builtins``; a soname is accepted and reduced to its stem."""
    match = _SPEC.match(text.strip())
    if not match:
        raise UsageError(
            f"{text!r} is not a library name", hint="name it by its soname stem, e.g. cudss>=1.0"
        )
    name = soname_stem(match["name"])
    spec = match["spec"].replace(" ", "")
    if spec:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        try:
            SpecifierSet(spec)
        except InvalidSpecifier as exc:
            raise UsageError(f"{text!r}: bad version spec {spec!r}", hint="write it like cudss>=1.0") from exc
    return LibrarySpec(name, spec)


def left_to_host_name(text: str) -> str:
    """What ``--exclude`` leaves to the host: a library by its soname stem (``cublas``, every major's),
    or one soname as written (``libcublas.so.11``), so that a wheel built for several CUDA majors can
    leave one major's libraries alone and not the others'."""
    parsed = parse_library_file_name(text.strip())
    if parsed is not None and parsed.style is NameStyle.PLAIN and parsed.version:
        return parsed.filename
    return parse_library_spec(text).name


def name_of_library(names: Iterable[str], soname: str) -> str | None:
    """The first of ``names`` (soname stems, or whole sonames: see :func:`left_to_host_name`), in sorted
    order, that names ``soname``: its stem or itself; None where none does."""
    return next((name for name in sorted(names) if name in (soname, soname_stem(soname))), None)


def names_file(text: bytes, name: bytes) -> bool:
    """``name`` stands in ``text`` as a whole file name, not inside a longer one (``libcudss.so.1`` in
    ``libcudss.so.12`` or ``mylibcudss.so.1``). bytes.find, not a pattern: package code can be megabytes."""
    start = text.find(name)
    while start != -1:
        before = text[start - 1 : start]
        after = text[start + len(name) : start + len(name) + 2]
        joined_before = bool(before) and (before.isalnum() or before in b"_.+-")
        joined_after = (
            after[:1].isalnum()
            or after[:1] in (b"_", b"+", b"-")
            or (after[:1] == b"." and after[1:2].isdigit())
        )
        if not joined_before and not joined_after:
            return True
        start = text.find(name, start + 1)
    return False


# A CUDA version in a distribution's name, as projects name their builds: -cu12, -cu128, -cuda117,
# -cuda12x, -cuda-12, -cuda-11-1 (major, then the minor's digits or an "x").
_CUDA_IN_NAME = re.compile(r"(?:^|-)(?:cu|cuda-?)(1\d)(?:\d|-\d+|x)?(?=-|$)")


def cuda_major_named(distribution: str) -> int | None:
    """The one CUDA major a distribution's name names (``bagua-cuda117``: 11), or None."""
    from packaging.utils import canonicalize_name

    majors = {int(match[1]) for match in _CUDA_IN_NAME.finditer(canonicalize_name(distribution))}
    return next(iter(majors)) if len(majors) == 1 else None


def cuda_major_of_folder(path: str) -> int | None:
    """The CUDA major the nearest folder of ``path`` whose name names one names (``lib/cu12``,
    ``cuda13``), as projects that ship one build per major lay them out; None if none does."""
    for part in reversed(path.split("/")[:-1]):
        if (major := cuda_major_named(part)) is not None:
            return major
    return None
