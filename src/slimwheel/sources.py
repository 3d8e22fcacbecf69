"""What analysis reads from: a wheel, or loose files (one ELF file, or a folder such as a build tree).

Both offer the same small surface, so ``show`` works on a ``.whl``, a ``.so`` or a directory alike.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from functools import cached_property
from pathlib import Path
from typing import BinaryIO, Protocol, cast

from slimwheel.elf import ELF_MAGIC, read_elf
from slimwheel.errors import ElfError, InputError
from slimwheel.names import names_file
from slimwheel.wheel import CHUNK_SIZE, KeepRanges, RecordEntry, Wheel, WheelMember, encode_digest
from slimwheel.wheel.reader import describe_file_type, not_a_wheel_name, open_regular_file
from slimwheel.wheel.view import ChunkCallback, seen_by

__all__ = [
    "CODE_LIMIT",
    "ArchiveSource",
    "LooseFiles",
    "check_stored_elf_members",
    "named_by_code",
    "open_source",
]

_ZIP_MAGIC = b"PK\x03\x04"


# A bigger .py or .json file is generated data, not the code that loads a package's libraries.
CODE_LIMIT = 1 << 20


class ArchiveSource(Protocol):
    """The part of :class:`slimwheel.wheel.Wheel` that analysis uses."""

    @property
    def filename(self) -> str: ...
    @property
    def distribution(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def platform_tags(self) -> tuple[str, ...]: ...
    @property
    def file_size(self) -> int: ...
    @property
    def members(self) -> tuple[WheelMember, ...]: ...

    def record(self) -> tuple[RecordEntry, ...]: ...
    def installed_path(self, name: str) -> str: ...
    def open_member(self, name: str) -> BinaryIO: ...
    def seekable_member(
        self, name: str, *, on_chunk: ChunkCallback | None = None
    ) -> AbstractContextManager[BinaryIO]: ...
    def member_view(
        self,
        name: str,
        *,
        head: int,
        tail: int,
        keep: KeepRanges | None = None,
        on_chunk: ChunkCallback | None = None,
    ) -> AbstractContextManager[io.RawIOBase]: ...


class LooseFiles:
    """Regular files under ``root`` (or one file), named by their path relative to ``root``."""

    def __init__(self, root: Path, files: list[Path], label: str) -> None:
        self._root = root
        self._files = {path.relative_to(root).as_posix(): path for path in files}
        self.filename = label
        self.distribution = label
        self.version = ""
        self.platform_tags: tuple[str, ...] = ()

    @classmethod
    def single(cls, path: Path) -> LooseFiles:
        return cls(path.parent, [path], path.name)

    @classmethod
    def directory(cls, root: Path) -> LooseFiles:
        files = []
        for folder, _, names in os.walk(root):  # symlinks are not followed, nor listed as files
            for name in names:
                path = Path(folder) / name
                if stat.S_ISREG(path.lstat().st_mode):
                    files.append(path)
        return cls(root, sorted(files), root.name or str(root))

    @cached_property
    def members(self) -> tuple[WheelMember, ...]:
        found = []
        for name, path in self._files.items():
            size = path.stat().st_size
            found.append(WheelMember(name, size, size, 0, 0, 0))
        return tuple(found)

    @property
    def file_size(self) -> int:
        return sum(member.file_size for member in self.members)

    def record(self) -> tuple[RecordEntry, ...]:
        """sha256 of the files that look like ELF (what identification by hash needs)."""
        entries = []
        for name, path in self._files.items():
            with path.open("rb") as handle:
                if handle.read(4) != ELF_MAGIC:
                    continue
                handle.seek(0)
                digest = hashlib.sha256()
                for chunk in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(chunk)
            entries.append(RecordEntry(name, "sha256", encode_digest(digest.digest()), path.stat().st_size))
        return tuple(entries)

    def installed_path(self, name: str) -> str:
        return name

    @contextmanager
    def _open(self, name: str) -> Iterator[BinaryIO]:
        with self._files[name].open("rb") as handle:
            yield handle

    def seekable_member(
        self, name: str, *, on_chunk: ChunkCallback | None = None
    ) -> AbstractContextManager[BinaryIO]:
        self._feed(name, on_chunk)
        return self._open(name)

    def _feed(self, name: str, on_chunk: ChunkCallback | None) -> None:
        """Hand every byte of the file to ``on_chunk``, as a wheel's reader does as it inflates."""
        if on_chunk is None:
            return
        with self._files[name].open("rb") as file:
            for _ in seen_by(iter(lambda: file.read(CHUNK_SIZE), b""), on_chunk):
                pass

    def open_member(self, name: str) -> BinaryIO:
        return self._files[name].open("rb")

    def member_view(
        self,
        name: str,
        *,
        head: int = 0,
        tail: int = 0,
        keep: KeepRanges | None = None,
        on_chunk: ChunkCallback | None = None,
    ) -> AbstractContextManager[io.RawIOBase]:
        """The whole file: a loose file is read in place, so there is nothing to leave out.
        ``on_chunk`` sees every byte first, as for a wheel's member."""
        del head, tail, keep
        self._feed(name, on_chunk)
        return cast(AbstractContextManager[io.RawIOBase], self._open(name))

    def close(self) -> None:
        """Nothing stays open between reads."""

    def __enter__(self) -> LooseFiles:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def check_stored_elf_members(wheel: Wheel) -> None:
    """Check the size and CRC-32 of every stored member that is an ELF file; a WheelError (exit 2)
    names the first that does not match.

    Analysis reads a stored member in place, only the parts it needs, and so checks nothing; a
    deflated one it inflates whole, which checks its CRC-32. A member whose bytes do not match its CRC
    is damaged input either way, so show refuses both alike (exit 2, as repair does): what it would
    report about such a file is about bytes that are not the ones packed. Reads each such member
    through once, streaming.
    """
    for member in wheel.members:
        if member.is_dir or not member.is_stored or member.file_size < len(ELF_MAGIC):
            continue
        with wheel.seekable_member(member.name) as stream:
            if stream.read(len(ELF_MAGIC)) != ELF_MAGIC:
                continue
        wheel.check_crc(member.name)


def open_source(path: Path) -> Wheel | LooseFiles:
    """A wheel by its ``.whl`` name, a directory as a tree of files, anything else as one ELF file.

    A single file that is not ELF, or is truncated, is bad input (``ElfError``); inside a wheel or a
    directory the same file is a finding instead. Anything but a directory or a regular file (a FIFO,
    a socket, a device) is bad input too, refused before it is opened for reading: reading a FIFO
    would wait for a writer forever.
    """
    try:
        mode = path.stat().st_mode
    except FileNotFoundError as exc:
        raise InputError(str(path), "no such file") from exc
    except OSError as exc:
        raise InputError(str(path), f"cannot read: {exc.strerror or exc}") from exc
    if stat.S_ISDIR(mode):
        return LooseFiles.directory(path)
    if path.name.endswith(".whl"):
        return Wheel.open(path)
    if not stat.S_ISREG(mode):
        raise InputError(str(path), f"{describe_file_type(mode)}, not a regular file")
    try:
        with open_regular_file(path, InputError) as handle:
            head = handle.read(len(ELF_MAGIC))
            handle.seek(0)
            if head != ELF_MAGIC:
                raise ElfError(str(path), _not_elf(path, head))
            read_elf(handle, path=str(path), symbols=False)
    except ElfError:
        raise
    except OSError as exc:
        raise InputError(str(path), f"cannot read: {exc.strerror or exc}") from exc
    return LooseFiles.single(path)


def _not_elf(path: Path, head: bytes) -> str:
    """What a single file that is not ELF is, when that says more than "not an ELF file"."""
    if path.name.lower().endswith(".whl"):
        return not_a_wheel_name(path.name)  # .WHL: not a wheel to pip either
    if head == _ZIP_MAGIC:
        return "a zip archive, not an ELF file (a wheel's name must end in .whl)"
    return "not an ELF file"


def named_by_code(
    source: ArchiveSource, file_names: Iterable[str], *, skip: Callable[[str], bool] | None = None
) -> dict[str, str]:
    """Of ``file_names``, those the package's Python code or JSON data names as a whole file name
    (``names_file``), each with the first such file, by name, that does: where a package names the
    libraries its code loads, by path (a vendored copy) or by soname before its extension modules
    (faiss-gpu-cu12's ``_preload_library.json``). Files of CODE_LIMIT or more are generated data and
    ``.dist-info`` is left out, as are members ``skip`` names (repair's embedded loader). One file is
    held at a time (tensorflow's code is 30 MB), and none is read once every name is found, or when
    there is none to look for."""
    left = {name: name.encode() for name in sorted(set(file_names))}
    found: dict[str, str] = {}
    for path in sorted(_code_members(source, skip)) if left else ():
        with source.open_member(path) as stream:
            text = stream.read(CODE_LIMIT)
        for name, encoded in list(left.items()):
            if names_file(text, encoded):
                found[name] = path
                del left[name]
        if not left:
            break
    return found


def _code_members(source: ArchiveSource, skip: Callable[[str], bool] | None) -> Iterator[str]:
    for member in source.members:
        name = member.name
        if not name.endswith((".py", ".json")) or member.file_size >= CODE_LIMIT:
            continue
        if name.split("/", 1)[0].endswith(".dist-info") or (skip is not None and skip(name)):
            continue
        yield name
