"""Hostile inputs for the fuzz suite, each made from a real gcc-built base and a JSON recipe.

A recipe is what hypothesis draws and what a regression case stores (tests/fuzz/regressions/*.json):
small, readable, and independent of the bytes of one build::

    {"name": "...", "why": "...", "base": "solver-auditwheel", "filename": "x.whl",
     "ops": [{"op": "set", "name": "@metadata", "data": "Name: solver\\n"}, ...],
     "commands": ["show", "repair"], "expect": {...}}

Bases: ``solver-auditwheel``, ``solver-renamed``, ``solver-plain`` (tests/support/solver.py's fat
wheels), ``solver-repaired`` (the auditwheel one after ``repair --embed-loader``: it has a manifest
and an embedded loader), ``elf:<ElfZoo field>`` (one ELF file on its own), ``fifo`` (a named pipe).

Member names may be roles, resolved against the base: ``@metadata``, ``@wheel``, ``@record``,
``@manifest``, ``@init`` (solver/__init__.py), ``@ext`` (the extension module), ``@lib`` (the vendored
copy, else the extension), ``@member:K`` (the K-th entry), ``@distinfo/NAME``.

Data (member contents, names, extra fields) is a *spec*: a string (UTF-8 text), ``{"latin1": s}``,
``{"hex": s}``, ``{"repeat": [spec, n]}``, ``{"concat": [spec, ...]}``, ``{"zeros": n}`` (with
``"prefix"``; as a whole member it is streamed, never held in memory), ``{"random": [n, seed]}``,
``{"member": name}`` (the base member's bytes), ``{"zoo": field}`` (an ElfZoo file's bytes).

Ops, applied in order (``sync``, default true, rewrites the member's RECORD line so that the wheel stays
consistent and the edit reaches past the RECORD check):

- ``set`` / ``add`` (a second entry, even under the same name) / ``delete`` / ``rename`` (``to``);
- ``text``: ``append``/``prepend`` ``data`` to a member, or ``replace`` ``old`` with ``data``;
- ``elf``: one tests.support.elfmutate edit (``edit``, optional ``payload`` spec) of a member;
- ``record``: ``line`` (``path``, ``field`` ``hash`` or ``size``, ``value``), ``drop`` (``path``),
  ``add`` (``line``), ``set`` (``data``): RECORD edits never sync;
- ``entry``: ``field``/``value`` overrides one tests.support.zipforge.Entry field (``nth`` among
  duplicates): crc, sizes, names, extra fields, zip64, mode, offset, flags, raw data, and ``method``
  (which keeps the data as it was: the header lies);
- ``archive``: ``field``/``value`` overrides the end records (count, cd_offset, cd_size,
  comment_length, zip64_end, prefix, comment, extra_end);
- ``bytes``, after the archive is written: ``truncate``/``flip``/``insert`` at ``permille`` of the
  length, ``append``.

For an ``elf:`` base, ``elf`` and ``bytes`` ops apply to the file itself (no ``name``).
"""

from __future__ import annotations

import base64
import copy
import csv
import hashlib
import io
import json
import os
import random
import shutil
import subprocess
import sys
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from tests.support.elfmutate import mutate_elf
from tests.support.fixtures_elf import ElfZoo, build_elf_zoo
from tests.support.providers import build_provider_wheels
from tests.support.solver import fat_solver_wheel
from tests.support.zipforge import DEFLATED, Archive, Content, Entry, Zeros, entries_from_zip, write_zip

__all__ = [
    "SOLVER_FILENAME",
    "WHEEL_BASES",
    "FuzzBase",
    "apply_recipe",
    "build_fuzz_base",
    "command_environment",
    "copy_base_wheel",
    "input_kind",
    "recipe_digest",
    "spec_bytes",
]

WHEEL_BASES = ("solver-auditwheel", "solver-renamed", "solver-plain", "solver-repaired")
SOLVER_FILENAME = "solver-1.0-py3-none-manylinux_2_17_x86_64.whl"
_STRUCTURAL_BYTES = ("local_extra", "central_extra", "name_bytes", "local_name_bytes", "comment", "raw_data")
_ARCHIVE_BYTES = ("comment", "prefix")


@dataclass(frozen=True)
class FuzzBase:
    """What every recipe starts from, built once per session (about a second)."""

    root: Path
    zoo: ElfZoo
    catalog: Path  # a catalog of the fake providers only (tests/support/providers.py)
    wheels: dict[str, Path]
    environment: dict[str, str]  # the variables every command runs with (no shipped catalog...)
    empty: Path  # an empty folder: verify's --find-links

    def member_bytes(self, base: str, name: str) -> bytes:
        entries = entries_from_zip(self.wheels[base].read_bytes())
        resolved = _resolve_name(entries, name)
        for entry in entries:
            if entry.name == resolved and isinstance(entry.content, bytes):
                return entry.content
        raise KeyError(f"{base} has no member {name!r}")


def command_environment(root: Path) -> dict[str, str]:
    """The environment of every command: this one, less anything that steers slimwheel or pip,
    with the shipped catalog off, the user's catalog, cache, home and pip's config in ``root``."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("SLIMWHEEL_", "PIP_", "XDG_", "PYTHON")) and key not in ("HOME", "TMPDIR")
    }
    home = root / "home"
    for folder in (home, root / "cache", root / "xdg-cache", root / "xdg-data", root / "xdg-config"):
        folder.mkdir(parents=True, exist_ok=True)
    environment.update(
        SLIMWHEEL_SHIPPED_CATALOG="off",
        SLIMWHEEL_CATALOG=str(root / "no-user-catalog.json.gz"),
        SLIMWHEEL_CACHE_DIR=str(root / "cache"),
        HOME=str(home),
        XDG_CACHE_HOME=str(root / "xdg-cache"),
        XDG_DATA_HOME=str(root / "xdg-data"),
        XDG_CONFIG_HOME=str(root / "xdg-config"),
        PIP_CONFIG_FILE=os.devnull,
        PIP_NO_INDEX="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PYTHONDONTWRITEBYTECODE="1",
    )
    return environment


def build_fuzz_base(directory: Path) -> FuzzBase:
    """The ELF zoo, a catalog of the fake providers, the fat solver wheels and a repaired one."""
    from slimwheel.catalog.learn import learn_from_wheels
    from slimwheel.catalog.store import write_catalog

    directory.mkdir(parents=True, exist_ok=True)
    zoo = build_elf_zoo(directory / "elf")
    providers = build_provider_wheels(zoo, directory / "providers")
    catalog = directory / "catalog.json.gz"
    write_catalog(learn_from_wheels(providers.all), catalog)
    environment = command_environment(directory / "env")
    wheels = {
        f"solver-{style}": fat_solver_wheel(directory / style, zoo, style)
        for style in ("auditwheel", "renamed", "plain")
    }
    repaired = directory / "repaired"
    argv = [
        sys.executable,
        "-m",
        "slimwheel",
        "repair",
        str(wheels["solver-auditwheel"]),
        "-w",
        str(repaired),
    ]
    argv += ["--catalog", str(catalog), "--offline", "--no-index", "--isolated", "--isolated-environment"]
    argv += ["--embed-loader"]
    done = subprocess.run(argv, env=environment, capture_output=True, text=True, check=False, timeout=120)
    (output,) = repaired.glob("*.whl") or [None]
    if done.returncode != 0 or output is None:
        raise RuntimeError(f"could not build the repaired base ({done.returncode}): {done.stderr.strip()}")
    wheels["solver-repaired"] = output
    empty = directory / "empty"
    empty.mkdir(exist_ok=True)
    return FuzzBase(directory, zoo, catalog, wheels, environment, empty)


def recipe_digest(recipe: dict[str, Any]) -> str:
    """A short, stable name for a recipe (what a saved regression case is called after)."""
    text = json.dumps({k: v for k, v in recipe.items() if k not in ("name", "why")}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def input_kind(recipe: dict[str, Any]) -> str:
    """``wheel``, ``elf`` or ``fifo``: which commands make sense on the input."""
    base: str = recipe["base"]
    if base == "fifo":
        return "fifo"
    return "elf" if base.startswith("elf:") else "wheel"


def spec_bytes(spec: Any, base: FuzzBase, wheel: str | None = None) -> bytes:
    """The bytes a data spec stands for (see the module docstring)."""
    content = _spec_content(spec, base, wheel)
    if isinstance(content, Zeros):
        return content.prefix + bytes(content.size - len(content.prefix))
    return content


def _spec_content(spec: Any, base: FuzzBase, wheel: str | None) -> Content:
    if isinstance(spec, str):
        return spec.encode("utf-8")
    if not isinstance(spec, dict) or len(spec) not in (1, 2):
        raise ValueError(f"not a data spec: {spec!r}")
    if "zeros" in spec:
        prefix = spec_bytes(spec.get("prefix", ""), base, wheel)
        return Zeros(len(prefix) + int(spec["zeros"]), prefix)
    (kind, value), *_ = spec.items()
    if kind == "latin1":
        return str(value).encode("latin-1")
    if kind == "hex":
        return bytes.fromhex(value)
    if kind == "b64":
        return base64.b64decode(value)
    if kind == "repeat":
        part, count = value
        return spec_bytes(part, base, wheel) * int(count)
    if kind == "concat":
        return b"".join(spec_bytes(part, base, wheel) for part in value)
    if kind == "random":
        size, seed = value
        return random.Random(seed).randbytes(int(size))
    if kind == "member":
        if wheel is None:
            raise ValueError("a member spec needs a wheel base")
        return base.member_bytes(wheel, value)
    if kind == "zoo":
        path = getattr(base.zoo, value)
        return Path(path).read_bytes() if path is not None else b""
    raise ValueError(f"unknown data spec {kind!r}")


def _dist_info(entries: list[Entry]) -> str:
    for entry in entries:
        top = entry.name.split("/", 1)[0]
        if top.endswith(".dist-info"):
            return top
    return "solver-1.0.dist-info"


def _resolve_name(entries: list[Entry], name: str) -> str:
    if not name.startswith("@"):
        return name
    dist_info = _dist_info(entries)
    roles = {
        "@metadata": f"{dist_info}/METADATA",
        "@wheel": f"{dist_info}/WHEEL",
        "@record": f"{dist_info}/RECORD",
        "@manifest": f"{dist_info}/slimwheel.json",
        "@init": "solver/__init__.py",
    }
    if name in roles:
        return roles[name]
    if name.startswith("@distinfo/"):
        return f"{dist_info}/{name.removeprefix('@distinfo/')}"
    names = [entry.name for entry in entries]
    if name.startswith("@member:"):
        return names[int(name.removeprefix("@member:")) % len(names)] if names else "missing"
    ext = next((n for n in names if n.endswith("_solver.so")), "solver/_solver.so")
    if name == "@ext":
        return ext
    if name == "@lib":
        return next((n for n in names if "libcudss" in n.rsplit("/", 1)[-1]), ext)
    raise ValueError(f"unknown member role {name!r}")


def _record_hash(data: Content) -> tuple[str, int]:
    digest = hashlib.sha256()
    if isinstance(data, bytes):
        digest.update(data)
        size = len(data)
    else:
        digest.update(data.prefix)
        left, chunk = data.size - len(data.prefix), bytes(1 << 20)
        while left > 0:
            digest.update(chunk[: min(left, len(chunk))])
            left -= len(chunk)
        size = data.size
    text = base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode()
    return f"sha256={text}", size


def _edit_record(entries: list[Entry], edit: Any) -> None:
    """Apply ``edit(rows) -> rows`` to the RECORD entry's CSV rows (when it is still readable text)."""
    record_name = f"{_dist_info(entries)}/RECORD"
    for entry in entries:
        if entry.name != record_name or not isinstance(entry.content, bytes):
            continue
        try:
            rows = list(csv.reader(io.StringIO(entry.content.decode("utf-8"))))
        except (UnicodeDecodeError, csv.Error):
            return
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerows(edit(rows))
        entry.content = buffer.getvalue().encode("utf-8")
        return


def _sync_record(entries: list[Entry], name: str, content: Content | None) -> None:
    record_name = f"{_dist_info(entries)}/RECORD"
    if name == record_name:
        return

    def edit(rows: list[list[str]]) -> list[list[str]]:
        kept = [row for row in rows if not row or row[0] != name]
        if content is None:
            return kept
        digest, size = _record_hash(content)
        line = [name, digest, str(size)]
        replaced = [line if row and row[0] == name else row for row in rows]
        if replaced != rows:
            return replaced
        at = next((i for i, row in enumerate(kept) if row and row[0] == record_name), len(kept))
        return [*kept[:at], line, *kept[at:]]

    _edit_record(entries, edit)


def _record_op(entries: list[Entry], op: dict[str, Any], base: FuzzBase, wheel: str) -> None:
    action = op["action"]
    if action == "set":
        record_name = f"{_dist_info(entries)}/RECORD"
        for entry in entries:
            if entry.name == record_name:
                entry.content = _spec_content(op["data"], base, wheel)
        return
    path = _resolve_name(entries, op.get("path", "@init"))

    def edit(rows: list[list[str]]) -> list[list[str]]:
        if action == "drop":
            return [row for row in rows if not row or row[0] != path]
        if action == "add":
            return [*rows, next(csv.reader([op["line"]]), [])]
        column = 1 if op["field"] == "hash" else 2
        edited = []
        for row in rows:
            changed = list(row)
            if row and row[0] == path:
                changed = [*row, "", ""][:3] if len(row) < 3 else changed
                changed[column] = str(op["value"])
            edited.append(changed)
        return edited

    _edit_record(entries, edit)


def _matching(entries: list[Entry], name: str, nth: int = 0) -> Entry | None:
    found = [entry for entry in entries if entry.name == name]
    return found[nth % len(found)] if found else None


def _entry_value(field_name: str, value: Any, base: FuzzBase, wheel: str) -> Any:
    if field_name in _STRUCTURAL_BYTES:
        return spec_bytes(value, base, wheel)
    if field_name == "zip64":
        return bool(value)
    return int(value)


def _archive_op(archive: Archive, op: dict[str, Any], base: FuzzBase, wheel: str) -> None:
    name, value = op["field"], op["value"]
    if name in _ARCHIVE_BYTES:
        setattr(archive, name, spec_bytes(value, base, wheel))
    elif name == "extra_end":
        archive.extra_end.append(spec_bytes(value, base, wheel))
    elif name == "zip64_end":
        archive.zip64_end = bool(value)
    else:
        setattr(archive, name, int(value))


def _entry_op(entry: Entry, op: dict[str, Any], base: FuzzBase, wheel: str) -> None:
    field_name = op["field"]
    if field_name not in {f.name for f in fields(Entry)} or field_name in ("name", "content"):
        raise ValueError(f"no Entry field {field_name!r}")
    if field_name == "method" and entry.raw_data is None:
        entry.raw_data = entry.data()  # the data stays as it was: the method lies about it
    setattr(entry, field_name, _entry_value(field_name, op["value"], base, wheel))


def _changed_content(content: bytes, op: dict[str, Any], base: FuzzBase, wheel: str) -> bytes:
    """A ``text`` or ``elf`` op's new content for a member."""
    if op["op"] == "elf":
        payload = spec_bytes(op["payload"], base, wheel) if "payload" in op else b""
        return mutate_elf(content, op["edit"], payload)
    data = spec_bytes(op["data"], base, wheel)
    if op["action"] == "append":
        return content + data
    if op["action"] == "prepend":
        return data + content
    return content.replace(spec_bytes(op["old"], base, wheel), data)


def _member_op(
    entries: list[Entry], archive: Archive, op: dict[str, Any], base: FuzzBase, wheel: str
) -> None:
    kind = op["op"]
    if kind == "archive":
        _archive_op(archive, op, base, wheel)
        return
    if kind == "record":
        _record_op(entries, op, base, wheel)
        return
    if kind not in ("set", "add", "delete", "rename", "text", "elf", "entry"):
        raise ValueError(f"unknown op {kind!r}")
    name = _resolve_name(entries, op["name"])
    sync = bool(op.get("sync", True))
    entry = _matching(entries, name, int(op.get("nth", 0)))
    if kind in ("set", "add"):
        content = _spec_content(op["data"], base, wheel)
        method = int(op.get("method", DEFLATED))
        if entry is None or kind == "add":
            entries.append(Entry(name, content, method=method))
        else:
            entry.content, entry.method = content, method
        changes: list[tuple[str, Content | None]] = [(name, content)]
    elif entry is None:
        return
    elif kind == "entry":
        _entry_op(entry, op, base, wheel)
        return
    elif kind == "delete":
        entries.remove(entry)
        changes = [(name, None)]
    elif kind == "rename":
        target = op["to"]
        if not isinstance(target, str):
            target = spec_bytes(target, base, wheel).decode("utf-8", "surrogateescape")
        entry.name = _resolve_name(entries, target)
        changes = [(name, None), (entry.name, entry.content)]
    elif isinstance(entry.content, bytes):  # text, elf
        entry.content = _changed_content(entry.content, op, base, wheel)
        changes = [(name, entry.content)]
    else:
        return
    for changed, new_content in changes if sync else ():
        _sync_record(entries, changed, new_content)


def _bytes_op(data: bytes, op: dict[str, Any], base: FuzzBase, wheel: str | None) -> bytes:
    action = op["action"]
    at = len(data) * int(op.get("permille", 0)) // 1000
    if action == "truncate":
        return data[:at]
    if action == "flip":
        out = bytearray(data)
        for index in range(int(op.get("count", 1))):
            if at + index < len(out):
                out[at + index] ^= int(op.get("xor", 0xFF)) or 0xFF
        return bytes(out)
    if action == "insert":
        return data[:at] + spec_bytes(op["data"], base, wheel) + data[at:]
    if action == "append":
        return data + spec_bytes(op["data"], base, wheel)
    raise ValueError(f"unknown bytes action {action!r}")


def apply_recipe(recipe: dict[str, Any], base: FuzzBase, directory: Path) -> Path:
    """Write the input ``recipe`` describes into ``directory`` (created) and return its path."""
    directory.mkdir(parents=True, exist_ok=True)
    kind = input_kind(recipe)
    ops: list[dict[str, Any]] = copy.deepcopy(recipe.get("ops", []))
    if kind == "fifo":
        path = directory / str(recipe.get("filename", "x.whl"))
        os.mkfifo(path)
        return path
    if kind == "elf":
        field_name = recipe["base"].removeprefix("elf:")
        source = getattr(base.zoo, field_name)
        if source is None:
            raise ValueError(f"the zoo has no {field_name} here")
        path = directory / str(recipe.get("filename", Path(source).name))
        data = Path(source).read_bytes()
        for op in ops:
            if op["op"] == "elf":
                payload = spec_bytes(op["payload"], base) if "payload" in op else b""
                data = mutate_elf(data, op["edit"], payload)
            elif op["op"] == "bytes":
                data = _bytes_op(data, op, base, None)
            else:
                raise ValueError(f"op {op['op']!r} does not apply to an ELF file")
        path.write_bytes(data)
        return path
    wheel = recipe["base"]
    if wheel not in base.wheels:
        raise ValueError(f"unknown base {wheel!r}")
    source = base.wheels[wheel]
    entries = entries_from_zip(source.read_bytes())
    archive = Archive()
    deferred = []
    for op in ops:
        if op["op"] == "bytes":
            deferred.append(op)
        else:
            _member_op(entries, archive, op, base, wheel)
    data = write_zip(entries, archive)
    for op in deferred:
        data = _bytes_op(data, op, base, wheel)
    path = directory / str(recipe.get("filename", source.name))
    path.write_bytes(data)
    return path


def copy_base_wheel(base: FuzzBase, name: str, directory: Path) -> Path:
    """The base wheel as it is (a byte copy), for the sanity checks."""
    directory.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy2(base.wheels[name], directory / base.wheels[name].name))
