"""The manifest, ``<dist>.dist-info/slimwheel.json``: what repair and build did, for run time to read.

It lists every NVIDIA library the package's files need, transitive ones included, in load order (each
after the libraries it requires), with the distribution that provides it, the requirement written to
Requires-Dist, and the folder (relative to the site-packages root that holds the provider).

Standard library only: the run-time loader imports this module, and must stay cheap to import.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MANIFEST_NAME", "SCHEMA", "Manifest", "ManifestError", "ManifestLibrary"]

SCHEMA = 1
MANIFEST_NAME = "slimwheel.json"


class ManifestError(ValueError):
    """A manifest that cannot be read: not JSON, a newer schema, or a field of the wrong kind."""


@dataclass(frozen=True)
class ManifestLibrary:
    name: str  # soname stem: "cudss"
    soname: str  # "libcudss.so.1"
    distribution: str  # "nvidia-cudss-cu13"
    requirement: str  # what went into Requires-Dist: "nvidia-cudss-cu13>=1.0.0.35,<2"
    folder: str  # "nvidia/cu13/lib", relative to the site-packages root holding the provider
    requires: tuple[str, ...] = ()  # names of the NVIDIA libraries this one needs (listed earlier)
    needed_by: tuple[str, ...] = ()  # the package's own files that link it (installed paths)
    min_version: str | None = None  # the distribution version linked against (the range's floor)
    optional: bool = False  # loaded only on request (cuDSS's comm and threading layers)


@dataclass(frozen=True)
class Manifest:
    cuda_major: int | None
    libraries: tuple[ManifestLibrary, ...]
    generator: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> str:
        document = {
            "schema": SCHEMA,
            "generator": self.generator,
            "cuda_major": self.cuda_major,
            "libraries": [
                {
                    "name": lib.name,
                    "soname": lib.soname,
                    "distribution": lib.distribution,
                    "requirement": lib.requirement,
                    "folder": lib.folder,
                    "requires": list(lib.requires),
                    "needed_by": list(lib.needed_by),
                    "min_version": lib.min_version,
                    "optional": lib.optional,
                }
                for lib in self.libraries
            ],
            **self.extra,
        }
        return json.dumps(document, indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str | bytes) -> Manifest:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ManifestError(f"not JSON ({exc})") from exc
        if not isinstance(data, dict):
            raise ManifestError("not a JSON object")
        schema = data.get("schema")
        if schema != SCHEMA:
            raise ManifestError(f"schema {schema!r}; this slimwheel reads schema {SCHEMA}: upgrade slimwheel")
        try:
            libraries = tuple(
                ManifestLibrary(
                    name=str(item["name"]),
                    soname=str(item["soname"]),
                    distribution=str(item["distribution"]),
                    requirement=str(item["requirement"]),
                    folder=str(item["folder"]),
                    requires=tuple(str(x) for x in item.get("requires", ())),
                    needed_by=tuple(str(x) for x in item.get("needed_by", ())),
                    min_version=None if item.get("min_version") is None else str(item["min_version"]),
                    optional=bool(item.get("optional", False)),
                )
                for item in data.get("libraries", ())
            )
        except (KeyError, TypeError) as exc:
            raise ManifestError(f"malformed library entry ({exc!r})") from exc
        cuda = data.get("cuda_major")
        known = {"schema", "generator", "cuda_major", "libraries"}
        extra = {k: v for k, v in data.items() if k not in known}
        return cls(
            cuda_major=None if cuda is None else int(cuda),
            libraries=libraries,
            generator=str(data.get("generator", "")),
            extra=extra,
        )
