"""The manifest, ``<dist>.dist-info/slimwheel.json``: what repair and build did, for run time to read.

It lists every NVIDIA library the package's files need, transitive ones included, in load order (each
after the libraries it requires), with the distribution that provides it, the requirement written to
Requires-Dist, and the folder (relative to the site-packages root that holds the provider).

It lives in the run-time package because ``preload`` reads it and ``repair --embed-loader`` copies
that package into other projects: standard library only, ``json`` imported when a manifest is read
or written. ``slimwheel.manifest`` is the same module under its public name.
"""

from __future__ import annotations

from ._record import Record

__all__ = ["MANIFEST_NAME", "SCHEMA", "Manifest", "ManifestError", "ManifestLibrary"]

SCHEMA = 1
MANIFEST_NAME = "slimwheel.json"


class ManifestError(ValueError):
    """A manifest that cannot be read: not JSON, a newer schema, or a field of the wrong kind."""


class ManifestLibrary(Record):
    __slots__ = (
        "cuda_major",
        "distribution",
        "folder",
        "min_version",
        "name",
        "needed_by",
        "optional",
        "requirement",
        "requires",
        "soname",
    )  # fmt: skip
    name: str  # soname stem: "cudss"
    soname: str  # "libcudss.so.1"
    distribution: str  # "nvidia-cudss-cu13"
    requirement: str  # what went into Requires-Dist: "nvidia-cudss-cu13>=1.0.0.35,<2"
    folder: str  # "nvidia/cu13/lib", relative to the site-packages root holding the provider
    requires: tuple[str, ...]  # names of the NVIDIA libraries this one needs (listed earlier)
    needed_by: tuple[str, ...]  # the package's own files that link it (installed paths)
    min_version: str | None  # the distribution version linked against (the range's floor)
    optional: bool  # loaded only on request (cuDSS's comm and threading layers)
    # The CUDA major of the release, in a manifest of several majors (repair --cuda 12,13: each major's
    # libraries behind its extra); None in a manifest of one, whose ``Manifest.cuda_major`` says it.
    cuda_major: int | None

    def __init__(
        self,
        *,
        name: str,
        soname: str,
        distribution: str,
        requirement: str,
        folder: str,
        requires: tuple[str, ...] = (),
        needed_by: tuple[str, ...] = (),
        min_version: str | None = None,
        optional: bool = False,
        cuda_major: int | None = None,
    ) -> None:
        self._set(
            name=name, soname=soname, distribution=distribution, requirement=requirement, folder=folder,
            requires=tuple(requires), needed_by=tuple(needed_by), min_version=min_version, optional=optional,
            cuda_major=cuda_major,
        )  # fmt: skip

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "soname": self.soname,
            "distribution": self.distribution,
            "requirement": self.requirement,
            "folder": self.folder,
            "requires": list(self.requires),
            "needed_by": list(self.needed_by),
            "min_version": self.min_version,
            "optional": self.optional,
            **({} if self.cuda_major is None else {"cuda_major": self.cuda_major}),
        }


# What the written wheel counts on that its files alone do not say, so that a later ``check`` or
# ``verify`` judges it as the repair that wrote it did; each is left out of the JSON when empty.
_COUNTED_ON = ("kept_copies", "unreplaced_copies", "left_to_host", "preloaded")


class Manifest(Record):
    __slots__ = (
        "cuda_major",
        "extra",
        "generator",
        "kept_copies",
        "left_to_host",
        "libraries",
        "preloaded",
        "unreplaced_copies",
    )  # fmt: skip
    cuda_major: int | None
    libraries: tuple[ManifestLibrary, ...]
    generator: str
    # Vendored NVIDIA copies (wheel member paths) kept on purpose: --only/--exclude, named by the
    # package's code, behind an extra (--keep-extras-optional). check reports them as warnings.
    kept_copies: tuple[str, ...]
    # Vendored NVIDIA copies that stay because no NVIDIA wheel of the CUDA major replaces them (CUDA
    # 10's libcudart.so.10.2). verify accepts both kinds loaded from inside the wheel.
    unreplaced_copies: tuple[str, ...]
    left_to_host: tuple[str, ...]  # library names --exclude left to the host (nvinfer)
    preloaded: tuple[str, ...]  # distributions counted as loaded first (--preloaded torch)
    extra: dict[str, object]  # fields a newer writer added, kept on a round trip; not compared

    def __init__(
        self,
        *,
        cuda_major: int | None,
        libraries: tuple[ManifestLibrary, ...],
        generator: str = "",
        kept_copies: tuple[str, ...] = (),
        unreplaced_copies: tuple[str, ...] = (),
        left_to_host: tuple[str, ...] = (),
        preloaded: tuple[str, ...] = (),
        extra: dict[str, object] | None = None,
    ) -> None:
        self._set(
            cuda_major=cuda_major, libraries=tuple(libraries), generator=generator,
            kept_copies=tuple(kept_copies), unreplaced_copies=tuple(unreplaced_copies),
            left_to_host=tuple(left_to_host), preloaded=tuple(preloaded), extra=dict(extra or {}),
        )  # fmt: skip

    def _fields(self) -> tuple[object, ...]:
        return (self.cuda_major, self.libraries, self.generator, *(getattr(self, k) for k in _COUNTED_ON))

    def to_dict(self) -> dict[str, object]:
        counted_on = {key: list(getattr(self, key)) for key in _COUNTED_ON if getattr(self, key)}
        return {
            "schema": SCHEMA,
            "generator": self.generator,
            "cuda_major": self.cuda_major,
            "libraries": [library.to_dict() for library in self.libraries],
            **counted_on,
            **self.extra,
        }

    def to_json(self) -> str:
        import json

        return json.dumps(self.to_dict(), indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str | bytes) -> Manifest:
        import json

        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ManifestError(f"not JSON ({exc})") from exc
        except RecursionError as exc:  # arrays nested deeper than the parser goes: no manifest of ours
            raise ManifestError("not a slimwheel manifest (JSON nested too deeply)") from exc
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
                    cuda_major=None if item.get("cuda_major") is None else int(item["cuda_major"]),
                )
                for item in data.get("libraries", ())
            )
            cuda = data.get("cuda_major")
            cuda_major = None if cuda is None else int(cuda)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ManifestError(f"malformed library entry ({exc!r})") from exc
        counted_on = {}
        for key in _COUNTED_ON:
            names = data.get(key, [])
            if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
                raise ManifestError(f"{key}: not a list of strings")
            counted_on[key] = tuple(names)
        known = {"schema", "generator", "cuda_major", "libraries", *_COUNTED_ON}
        return cls(
            cuda_major=cuda_major,
            libraries=libraries,
            generator=str(data.get("generator", "")),
            extra={k: v for k, v in data.items() if k not in known},
            **counted_on,
        )
