"""The manifest, ``<dist>.dist-info/slimwheel.json``: what repair and build did, for run time to read.

The model lives in ``slimwheel.runtime.manifest``, standard library only, so that the run-time loader
(and the copy of it ``repair --embed-loader`` writes into a package) reads it without slimwheel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from slimwheel.errors import InputError
from slimwheel.runtime.manifest import MANIFEST_NAME, SCHEMA, Manifest, ManifestError, ManifestLibrary

if TYPE_CHECKING:
    from slimwheel.wheel import Wheel

__all__ = ["MANIFEST_NAME", "SCHEMA", "Manifest", "ManifestError", "ManifestLibrary", "read_manifest"]


def read_manifest(wheel: Wheel) -> Manifest | None:
    """The manifest ``wheel`` carries, None where it has none; one that cannot be read is an
    :class:`~slimwheel.errors.InputError` naming the member."""
    from slimwheel.wheel.reader import TEXT_MEMBER_LIMIT

    member = f"{wheel.dist_info}/{MANIFEST_NAME}"
    if not wheel.has_member(member):
        return None
    try:
        return Manifest.from_json(wheel.read_member(member, limit=TEXT_MEMBER_LIMIT))
    except ManifestError as exc:
        raise InputError(wheel.filename, f"{member}: {exc}") from exc
