"""The catalog on disk: a compact gzip'd JSON snapshot, and where snapshots are found.

Precedence, lowest first: the snapshot shipped inside the package, the user's copy that
``slimwheel catalog update`` writes, then ``--catalog FILE``. Each one overlays the ones before it.
Snapshots hold file names, sizes and hashes only: no URLs, so no index host is ever written down.

A library entry may also carry what its ELF said (``confirmed`` soname, ``build_id``, ``needed``: its
DT_NEEDED list). These keys are optional within schema 1: a catalog written before they existed loads
with them unknown, and an older slimwheel reading a newer catalog ignores them.
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from slimwheel.catalog.model import Catalog, CudaMajorSource, LibraryFile, Release, WheelFacts
from slimwheel.errors import CatalogError
from slimwheel.names import is_private_copy_name

__all__ = [
    "SCHEMA",
    "catalog_from_dict",
    "catalog_to_dict",
    "load_catalog",
    "read_catalog",
    "shipped_catalog_path",
    "user_catalog_path",
    "write_catalog",
]

SCHEMA = "slimwheel.catalog/1"
_SHIPPED_NAME = "snapshot.json.gz"


def catalog_to_dict(catalog: Catalog) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "generated": catalog.generated,
        "releases": [_release_to_dict(r) for r in sorted(catalog.releases, key=lambda r: r.key)],
    }


def _release_to_dict(release: Release) -> dict[str, Any]:
    return {
        "distribution": release.distribution,
        "version": release.version,
        "cuda": release.cuda_major,
        "cuda_from": release.cuda_major_source.value,
        "requires": list(release.requires_dist),
        "requires_python": release.requires_python,
        "wheels": [
            {
                "filename": wheel.filename,
                "platforms": list(wheel.platform_tags),
                "size": wheel.size,
                "sha256": wheel.sha256,
                "libs": [_library_to_dict(lib) for lib in wheel.libraries],
            }
            for wheel in release.wheels
        ],
    }


def _library_to_dict(library: LibraryFile) -> dict[str, Any]:
    data: dict[str, Any] = {"path": library.path, "size": library.size, "sha256": library.sha256}
    data["soname"] = library.soname
    if library.soname_confirmed:
        data["confirmed"] = True
    if library.build_id:
        data["build_id"] = library.build_id
    if library.needed is not None:
        data["needed"] = list(library.needed)
    return data


def catalog_from_dict(data: Mapping[str, Any], *, origin: str) -> Catalog:
    if data.get("schema") != SCHEMA:
        raise CatalogError(
            f"{origin}: not a slimwheel catalog (schema {data.get('schema')!r}, expected {SCHEMA!r})",
            hint="run `slimwheel catalog update` to write a fresh one",
        )
    try:
        releases = tuple(_release_from_dict(item) for item in data["releases"])
    except (KeyError, TypeError, ValueError) as exc:
        raise CatalogError(
            f"{origin}: malformed catalog entry ({exc})", hint="run `slimwheel catalog update`"
        ) from exc
    return Catalog(releases, origin=origin, generated=data.get("generated"))


def _release_from_dict(item: Mapping[str, Any]) -> Release:
    return Release(
        distribution=str(item["distribution"]),
        version=str(item["version"]),
        cuda_major=None if item.get("cuda") is None else int(item["cuda"]),
        cuda_major_source=CudaMajorSource(item.get("cuda_from", CudaMajorSource.UNKNOWN.value)),
        requires_dist=tuple(str(r) for r in item.get("requires", ())),
        requires_python=item.get("requires_python"),
        wheels=tuple(
            WheelFacts(
                filename=str(wheel["filename"]),
                platform_tags=tuple(str(t) for t in wheel.get("platforms", ())),
                size=wheel.get("size"),
                sha256=wheel.get("sha256"),
                libraries=tuple(
                    LibraryFile(
                        path=str(lib["path"]),
                        size=lib.get("size"),
                        sha256=lib.get("sha256"),
                        soname=str(lib["soname"]),
                        soname_confirmed=bool(lib.get("confirmed", False)),
                        build_id=lib.get("build_id"),
                        needed=None if lib.get("needed") is None else tuple(str(n) for n in lib["needed"]),
                    )
                    for lib in wheel.get("libs", ())
                    # learned before private copies were left out (see libraries_from_record)
                    if not is_private_copy_name(str(lib["path"]))
                ),
            )
            for wheel in item.get("wheels", ())
        ),
    )


def read_catalog(path: Path, *, origin: str | None = None) -> Catalog:
    """Read a snapshot (gzip'd or plain JSON)."""
    label = origin or str(path)
    try:
        raw = path.read_bytes()
        text = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
        data = json.loads(text)
    except FileNotFoundError as exc:
        raise CatalogError(
            f"{label}: no such catalog file", hint="check the path given to --catalog"
        ) from exc
    except (OSError, EOFError, ValueError, RecursionError) as exc:
        raise CatalogError(
            f"{label}: unreadable catalog ({exc})", hint="run `slimwheel catalog update`"
        ) from exc
    if not isinstance(data, dict):
        raise CatalogError(f"{label}: not a slimwheel catalog", hint="run `slimwheel catalog update`")
    return catalog_from_dict(data, origin=label)


def write_catalog(catalog: Catalog, path: Path) -> None:
    """Write a gzip'd snapshot reproducibly (no timestamp in the gzip header), atomically."""
    payload = json.dumps(catalog_to_dict(catalog), separators=(",", ":"), sort_keys=True).encode()
    compressed = gzip.compress(payload, compresslevel=9, mtime=0)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(compressed)
        Path(temporary).chmod(0o644)  # mkstemp makes it private; a catalog is public data
        Path(temporary).replace(path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def shipped_catalog_path() -> Path:
    return Path(str(resources.files("slimwheel.catalog").joinpath(_SHIPPED_NAME)))


def user_catalog_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where ``catalog update`` writes: ``$SLIMWHEEL_CATALOG``, else the user's data folder."""
    env = os.environ if environ is None else environ
    if env.get("SLIMWHEEL_CATALOG"):
        return Path(env["SLIMWHEEL_CATALOG"])
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "slimwheel" / "catalog.json.gz"


def load_catalog(
    extra: Path | None = None,
    *,
    use_shipped: bool = True,
    use_user: bool = True,
    environ: Mapping[str, str] | None = None,
) -> Catalog:
    """The shipped snapshot, overlaid by the user's copy, overlaid by ``extra`` (``--catalog``).

    ``SLIMWHEEL_SHIPPED_CATALOG=off`` leaves the shipped snapshot out (an air-gapped mirror that
    knows only its own wheels; tests).
    """
    env = os.environ if environ is None else environ
    catalog = Catalog(())
    shipped = shipped_catalog_path()
    use_shipped = use_shipped and env.get("SLIMWHEEL_SHIPPED_CATALOG", "").lower() not in ("off", "0", "no")
    if use_shipped and shipped.is_file():
        catalog = catalog.overlaid_by(read_catalog(shipped, origin="shipped snapshot"))
    user = user_catalog_path(environ)
    if use_user and user.is_file():
        catalog = catalog.overlaid_by(read_catalog(user, origin=f"user catalog {user}"))
    if extra is not None:
        catalog = catalog.overlaid_by(read_catalog(extra))
    return catalog
