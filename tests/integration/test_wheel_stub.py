"""`check` through a wheel-stub sdist: the index serves only an sdist whose build fetches the wheel from
another index, which its ``pyproject.toml`` names (TensorRT's ``tensorrt-cu13-libs`` is one). pip's
install gets that index's wheel, so check reads that wheel's files. Both indexes are real PEP 691
servers on 127.0.0.1; the libraries are gcc-built.
"""

from __future__ import annotations

import io
import os
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from slimwheel.analysis import Resolution, Severity
from slimwheel.catalog.model import Catalog
from slimwheel.check import CheckKind, CheckReport, check_wheel
from slimwheel.index import Cache, IndexSettings
from slimwheel.index.dist_files import IndexDistFiles
from slimwheel.index.stub import SDIST_LIMIT, wheel_stub_index
from slimwheel.wheel import Wheel
from tests.support.elfbuild import compile_shared
from tests.support.index_server import IndexServer
from tests.support.wheels import make_wheel

StartServer = Callable[..., IndexServer]
TAG = "cp311-cp311-manylinux_2_17_x86_64"
RIGHT = "$ORIGIN/../trtlike_libs"
EXT_C = (
    "extern int infer(void);\nint ext_call(void) { return infer(); }\nvoid *PyInit__ext(void) { return 0; }\n"
)


def _stub_pyproject(index_url: str, backend: str = "wheel_stub.buildapi") -> str:
    return (
        f'[build-system]\nrequires = ["wheel-stub"]\nbuild-backend = "{backend}"\n\n'
        f'[tool.wheel_stub]\nindex_url = "{index_url}"\n'
    )


def _sdist(directory: Path, name: str, version: str, files: dict[str, bytes | str]) -> Path:
    """``<name>-<version>.tar.gz`` holding ``files`` under ``<name>-<version>/``, as sdists do."""
    path = directory / f"{name}-{version}.tar.gz"
    entries = [
        _file(f"{name}-{version}/{member}", content.encode() if isinstance(content, str) else content)
        for member, content in files.items()
    ]
    path.write_bytes(_tar_gz([info for info, _ in entries], {info.name: data for info, data in entries}))
    return path


@pytest.fixture(scope="module")
def libraries(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    """``libinferlike.so.11`` and an extension that needs it through RPATH ``$ORIGIN/../trtlike_libs``."""
    root = tmp_path_factory.mktemp("trtlike")
    library = compile_shared(
        root / "libinferlike.so.11",
        {"infer.c": "int infer(void) { return 11; }\n"},
        soname="libinferlike.so.11",
    )
    extension = compile_shared(root / "ext/_ext.so", {"ext.c": EXT_C}, link=[library], rpath=RIGHT)
    return library, extension.read_bytes()


def _indexes(
    tmp_path: Path,
    index_server: StartServer,
    library: Path,
    *,
    backend: str = "wheel_stub.buildapi",
    json_api: bool = True,
) -> tuple[IndexServer, IndexServer]:
    """The public index, serving trtlike-libs 11.1.0 as a wheel-stub sdist only, and the index that
    sdist names, serving its wheel."""
    public, stub = tmp_path / "public", tmp_path / "stub"
    public.mkdir()
    stub.mkdir()
    files = {"trtlike_libs/__init__.py": b"", "trtlike_libs/libinferlike.so.11": library.read_bytes()}
    make_wheel(stub, "trtlike-libs", "11.1.0", files, tag="py3-none-manylinux_2_17_x86_64")
    stub_server = index_server(stub)
    pkg_info = "Metadata-Version: 2.1\nName: trtlike-libs\nVersion: 11.1.0\n"
    pyproject = _stub_pyproject(stub_server.simple_url, backend)
    _sdist(public, "trtlike_libs", "11.1.0", {"PKG-INFO": pkg_info, "pyproject.toml": pyproject})
    return index_server(public, json_api=json_api), stub_server


def _extension_wheel(directory: Path, extension: bytes) -> Path:
    directory.mkdir()
    files = {"ext/_ext.so": extension}
    return make_wheel(directory, "ext", "1.0", files, tag=TAG, requires=["trtlike-libs>=11.1,<11.2"])


def _check_with(wheel: Path, catalog: Catalog, index_url: str, cache: Cache) -> CheckReport:
    with Wheel.open(wheel) as opened, IndexDistFiles(IndexSettings(index_url), cache=cache) as source:
        return check_wheel(opened, catalog, dist_files=source)


def test_a_wheel_stub_sdists_index_serves_the_wheel_check_reads(
    libraries: tuple[Path, bytes],
    provider_catalog: Catalog,
    index_server: StartServer,
    tmp_path: Path,
) -> None:
    """torch-tensorrt 2.14.0 requires tensorrt-cu13-libs, served as a wheel-stub sdist: check said
    its libnvinfer.so.11 was not found. The stub's index serves the wheel pip installs; check reads
    its files there, and a second run reads nothing but pages."""
    library, extension = libraries
    public, stub = _indexes(tmp_path, index_server, library)
    wheel = _extension_wheel(tmp_path / "w", extension)
    cache = Cache(tmp_path / "cache")
    report = _check_with(wheel, provider_catalog, public.simple_url, cache)
    assert not report.has_errors, report.findings
    (answer,) = report.requirement_files
    assert answer.known
    assert [(r.version, r.files) for r in answer.releases] == [
        ("11.1.0", ("trtlike_libs/libinferlike.so.11",))
    ]
    (file,) = report.files
    (needed,) = [n for n in file.needed if n.soname == "libinferlike.so.11"]
    assert [(lookup.resolution, lookup.distribution) for lookup in needed.lookups] == [
        (Resolution.REQUIREMENT, "trtlike-libs")
    ]
    assert public.request_count("/files/trtlike_libs-11.1.0.tar.gz") == 1
    assert stub.bytes_count("/files/") > 0
    # The sdist and the wheel's list are cached: the next run fetches neither again.
    listed = stub.bytes_count("/files/")
    assert not _check_with(wheel, provider_catalog, public.simple_url, cache).has_errors
    assert public.request_count("/files/trtlike_libs-11.1.0.tar.gz") == 1
    assert stub.bytes_count("/files/") == listed


def test_the_stubs_index_unreachable_is_said(
    libraries: tuple[Path, bytes],
    provider_catalog: Catalog,
    index_server: StartServer,
    closed_port: int,
    tmp_path: Path,
) -> None:
    """Where the index the stub names cannot be reached (a machine that reaches the public index only),
    the warning says which index the build would fetch the wheel from."""
    library, extension = libraries
    public, stub = _indexes(tmp_path, index_server, library)
    stub.stop()
    wheel = _extension_wheel(tmp_path / "w", extension)
    report = _check_with(wheel, provider_catalog, public.simple_url, Cache(tmp_path / "cache"))
    assert report.has_errors
    (warning,) = [f.message for f in report.findings if f.kind is CheckKind.REQUIREMENT_FILES_UNREAD]
    served = "the index serves trtlike-libs 11.1.0 as a wheel-stub sdist, whose build fetches its wheel"
    assert f"{served} from {stub.simple_url}: " in warning
    assert "cannot reach the index" in warning


def test_an_sdist_that_builds_the_project_itself_is_not_followed(
    libraries: tuple[Path, bytes], provider_catalog: Catalog, index_server: StartServer, tmp_path: Path
) -> None:
    library, extension = libraries
    public, stub = _indexes(tmp_path, index_server, library, backend="setuptools.build_meta")
    wheel = _extension_wheel(tmp_path / "w", extension)
    report = _check_with(wheel, provider_catalog, public.simple_url, Cache(tmp_path / "cache"))
    assert report.has_errors
    (warning,) = [f.message for f in report.findings if f.kind is CheckKind.REQUIREMENT_FILES_UNREAD]
    assert "no release of trtlike-libs that it allows has a wheel for" in warning
    assert stub.request_count("/simple/trtlike-libs/") == 0


@pytest.mark.parametrize("json_api", [True, False])
def test_an_sdist_bigger_than_a_stub_is_not_downloaded(
    libraries: tuple[Path, bytes],
    provider_catalog: Catalog,
    index_server: StartServer,
    tmp_path: Path,
    json_api: bool,
) -> None:
    """A wheel-stub is about 15 kB; an sdist over SDIST_LIMIT is the project's own source, not read:
    not fetched where the index lists its size (PEP 691), not past the limit where it does not."""
    library, extension = libraries
    public, stub = _indexes(tmp_path, index_server, library, json_api=json_api)
    (tarball,) = (tmp_path / "public").glob("*.tar.gz")
    pkg_info = "Metadata-Version: 2.1\nName: trtlike-libs\nVersion: 11.1.0\n"
    pyproject = _stub_pyproject(stub.simple_url)
    source = os.urandom(SDIST_LIMIT + 1)  # incompressible
    _sdist(
        tarball.parent,
        "trtlike_libs",
        "11.1.0",
        {"PKG-INFO": pkg_info, "pyproject.toml": pyproject, "a.c": source},
    )
    wheel = _extension_wheel(tmp_path / "w", extension)
    report = _check_with(wheel, provider_catalog, public.simple_url, Cache(tmp_path / "cache"))
    assert report.has_errors
    assert public.request_count("/files/") == (0 if json_api else 1)
    assert not list((tmp_path / "cache").rglob("*.tar.gz"))  # the cut download was not kept
    assert stub.request_count("/") == 0


def _tar_gz(members: list[tarfile.TarInfo], data: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        for info in members:
            archive.addfile(info, io.BytesIO(data[info.name]) if info.isfile() else None)
    return out.getvalue()


def _file(name: str, content: bytes) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(content)
    return info, content


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("stub", "http://127.0.0.1:1/simple/"),
        ("other backend", None),
        ("file url", None),
        ("plain http elsewhere", None),
        ("nested", None),
        ("symlink", None),
        ("too big", None),
        ("not toml", None),
        ("not gzip", None),
    ],
)
def test_wheel_stub_index_reads_only_a_stubs_own_pyproject(case: str, expected: str | None) -> None:
    """Hostile sdists name no index: a pyproject.toml deeper than the top folder, a link, one of more
    than 64 KiB, one that is not TOML, a URL that is not HTTPS (plain HTTP only to this machine, as
    pip allows without --trusted-host), bytes that are not a tar.gz."""
    good = _stub_pyproject("http://127.0.0.1:1/simple/").encode()
    name = "x-1.0/pyproject.toml"
    if case == "not gzip":
        assert wheel_stub_index(b"PK\x03\x04 not a tarball") is None
        return
    content = {
        "stub": good,
        "other backend": _stub_pyproject("http://127.0.0.1:1/simple/", "hatchling.build").encode(),
        "file url": _stub_pyproject("file:///etc/").encode(),
        "plain http elsewhere": _stub_pyproject("http://index.example.invalid/simple/").encode(),
        "too big": good + b"#" * (64 << 10),
        "not toml": b"[build-system\n" + good,
    }.get(case, good)
    if case == "nested":
        name = "x-1.0/sub/pyproject.toml"
    if case == "symlink":
        info = tarfile.TarInfo(name)
        info.type = tarfile.SYMTYPE
        info.linkname = "/etc/passwd"
        sdist = _tar_gz([info], {})
    else:
        info, data = _file(name, content)
        sdist = _tar_gz([info], {name: data})
    assert len(sdist) < SDIST_LIMIT
    assert wheel_stub_index(sdist) == expected


def _metapackage(
    tmp_path: Path, pkg_info_head: str = "Metadata-Version: 2.4", extra: dict[str, bytes | str] | None = None
) -> None:
    """trtlike 11.1.0 on the public index as an sdist of pure Python requiring trtlike-libs, as
    NVIDIA serves tensorrt-cu13 (its setuptools build would make a wheel with no library)."""
    pkg_info = f"{pkg_info_head}\nName: trtlike\nVersion: 11.1.0\nRequires-Dist: trtlike_libs==11.1.0\n"
    pyproject = '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
    files = {"PKG-INFO": pkg_info, "pyproject.toml": pyproject, "trtlike/__init__.py": "", **(extra or {})}
    _sdist(tmp_path / "public", "trtlike", "11.1.0", files)


def _metapackage_wheel(directory: Path, extension: bytes) -> Path:
    """ext 1.0, requiring trtlike only; its extension's RPATH reaches trtlike_libs/."""
    directory.mkdir()
    return make_wheel(directory, "ext", "1.0", {"ext/_ext.so": extension}, tag=TAG, requires=["trtlike>=11"])


def test_a_metapackage_served_as_an_sdist_of_pure_python_brings_what_it_requires(
    libraries: tuple[Path, bytes], provider_catalog: Catalog, index_server: StartServer, tmp_path: Path
) -> None:
    """fast-gpu-asr 0.2.0 requires tensorrt-cu13, a 18 kB sdist of pure Python whose PKG-INFO
    (metadata 2.4) requires tensorrt-cu13-libs, itself a wheel-stub: check did not read the sdist, and
    said of libnvinfer.so.11 only that no NVIDIA wheel ships it. Its requirements are followed now."""
    library, extension = libraries
    public, stub = _indexes(tmp_path, index_server, library)
    _metapackage(tmp_path)
    wheel = _metapackage_wheel(tmp_path / "w", extension)
    report = _check_with(wheel, provider_catalog, public.simple_url, Cache(tmp_path / "cache"))
    assert not report.has_errors, report.findings
    (file,) = report.files
    (needed,) = [n for n in file.needed if n.soname == "libinferlike.so.11"]
    assert [(lookup.resolution, lookup.distribution) for lookup in needed.lookups] == [
        (Resolution.REQUIREMENT, "trtlike-libs")
    ]
    stub.stop()  # where the stub's index cannot be reached, the warning says so and names the chain
    report = _check_with(wheel, provider_catalog, public.simple_url, Cache(tmp_path / "cache2"))
    (warning,) = [f.message for f in report.findings if f.kind is CheckKind.REQUIREMENT_FILES_UNREAD]
    assert (
        "could not read trtlike-libs's files (the index serves trtlike-libs 11.1.0 as a wheel-stub" in warning
    )
    assert "trtlike_libs==11.1.0 (required by trtlike) would install" in warning


@pytest.mark.parametrize(
    ("head", "extra"),
    [
        ("Metadata-Version: 2.1", {}),  # before PEP 643, Requires-Dist in PKG-INFO binds nothing
        ("Metadata-Version: 2.4\nDynamic: Requires-Dist", {}),
        ("Metadata-Version: 2.4", {"trtlike/_native.c": "int f(void) { return 0; }\n"}),  # builds code
    ],
)
def test_an_sdist_whose_install_is_not_known_unbuilt_is_not_followed(
    libraries: tuple[Path, bytes],
    provider_catalog: Catalog,
    index_server: StartServer,
    tmp_path: Path,
    head: str,
    extra: dict[str, bytes | str],
) -> None:
    library, extension = libraries
    public, _ = _indexes(tmp_path, index_server, library)
    _metapackage(tmp_path, head, extra)
    wheel = _metapackage_wheel(tmp_path / "w", extension)
    report = _check_with(wheel, provider_catalog, public.simple_url, Cache(tmp_path / "cache"))
    assert report.has_errors
    (warning,) = [f.message for f in report.findings if f.kind is CheckKind.REQUIREMENT_FILES_UNREAD]
    assert "no release of trtlike that it allows has a wheel for" in warning


def test_a_tensorrt_library_an_unread_requirement_installs_is_not_said_to_be_the_hosts(
    provider_catalog: Catalog, index_server: StartServer, closed_port: int, tmp_path: Path
) -> None:
    """fast-gpu-asr 0.2.0's plugins need libnvinfer.so.11, which tensorrt-cu13-libs installs from the
    index its wheel-stub names; where that index cannot be reached, check said "only TensorRT installed
    on the host provides it", and then that it could not read tensorrt-cu13-libs, which may ship it."""
    library = compile_shared(
        tmp_path / "build" / "libnvinfer.so.11",
        {"infer.c": "int infer(void) { return 11; }\n"},
        soname="libnvinfer.so.11",
    )
    extension = compile_shared(
        tmp_path / "build" / "ext" / "_ext.so", {"ext.c": EXT_C}, link=[library], rpath=RIGHT
    )
    (tmp_path / "public").mkdir()
    pkg_info = "Metadata-Version: 2.1\nName: tensorrt-cu13-libs\nVersion: 11.1.0\n"
    pyproject = _stub_pyproject(f"http://127.0.0.1:{closed_port}/simple/")
    _sdist(
        tmp_path / "public",
        "tensorrt_cu13_libs",
        "11.1.0",
        {"PKG-INFO": pkg_info, "pyproject.toml": pyproject},
    )
    public = index_server(tmp_path / "public")
    (tmp_path / "w").mkdir()
    files = {"ext/_ext.so": extension.read_bytes()}
    wheel = make_wheel(tmp_path / "w", "ext", "1.0", files, tag=TAG, requires=["tensorrt-cu13-libs>=11.1"])
    report = _check_with(wheel, provider_catalog, public.simple_url, Cache(tmp_path / "cache"))
    (error,) = [
        f.message for f in report.findings if "libnvinfer.so.11" in f.message and f.severity is Severity.ERROR
    ]
    assert "it is part of TensorRT, which tensorrt-cu13-libs installs; could not read the files of" in error
    assert "installed on the host" not in error
