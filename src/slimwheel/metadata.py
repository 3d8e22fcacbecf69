"""Edits of a wheel's core metadata (``METADATA``) that keep every other byte: the ``Name`` header's
value replaced, ``Requires-Dist`` and ``Provides-Extra`` lines added after the last header. The build
backend renames and requires with it; repair adds the requirements it plans."""

from __future__ import annotations

import re
from collections.abc import Sequence

from packaging.utils import canonicalize_name

from slimwheel.errors import InputError

__all__ = ["extra_requirement", "is_extra_name", "metadata_with"]

# PEP 508's identifier, which an extra's name is and pip accepts inside ``pkg.whl[...]``.
_EXTRA_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?")


def is_extra_name(text: str) -> bool:
    return bool(_EXTRA_NAME.fullmatch(text))


def extra_requirement(line: str, extra: str) -> str:
    """``line`` required only under ``extra``: ``pkg==1; extra == "torch"`` (its own marker kept)."""
    from packaging.requirements import Requirement

    requirement = Requirement(line)
    marker = f'extra == "{extra}"'
    if requirement.marker is not None:
        marker = f"({requirement.marker}) and {marker}"
    requirement.marker = None
    return f"{requirement}; {marker}"


def metadata_with(
    metadata: bytes,
    *,
    name: str | None = None,
    requires: Sequence[str] = (),
    extras: Sequence[tuple[str, Sequence[str]]] = (),
) -> bytes:
    """METADATA with the ``Name`` header's value replaced (None: kept) and ``Requires-Dist`` lines
    added after the last header; per extra, ``Provides-Extra`` (unless the metadata offers it already)
    and its requirements, gated by it (:func:`extra_requirement`). Lines already there are not added
    twice; every other byte is kept."""
    newline = b"\r\n" if b"\r\n" in metadata else b"\n"
    head, separator, body = metadata.partition(newline + newline)
    lines = head.split(newline)
    while lines and not lines[-1]:  # headers only, ending in a newline: no empty header line kept
        lines.pop()
    if name is not None:
        for index, line in enumerate(lines):
            if line.lower().startswith(b"name:"):
                lines[index] = b"Name: " + name.encode()
                break
        else:
            raise InputError("METADATA", "has no Name header", hint="rebuild the wheel")
    present = {line.split(b":", 1)[1].strip() for line in lines if line.lower().startswith(b"requires-dist:")}
    offered = {
        canonicalize_name(line.split(b":", 1)[1].strip().decode("utf-8", "replace"))
        for line in lines
        if line.lower().startswith(b"provides-extra:")
    }
    lines += [f"Requires-Dist: {r}".encode() for r in requires if r.encode() not in present]
    for extra, extra_requires in extras:
        if canonicalize_name(extra) not in offered:
            lines.append(f"Provides-Extra: {extra}".encode())
        lines += [f"Requires-Dist: {extra_requirement(r, extra)}".encode() for r in extra_requires]
    return newline.join(lines) + (separator + body if separator else newline)
