"""Sonames and copies decided by the shipped catalog (NVIDIA's real wheels), never by a file-name pattern:
gcc-built copies named as auditwheel names them, repaired against the catalog slimwheel ships."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from slimwheel.analysis import analyse_wheel, named_like_copies
from slimwheel.catalog.learn import learn_from_wheels
from slimwheel.catalog.store import load_catalog, read_catalog, write_catalog
from slimwheel.cli import main
from slimwheel.elf import read_elf
from slimwheel.manifest import read_manifest
from slimwheel.wheel import Wheel
from tests.support.elfbuild import compile_shared, patchelf
from tests.support.index_server import IndexServer
from tests.support.wheels import make_wheel

TAG = "cp311-cp311-manylinux_2_17_x86_64"


def _vendoring_wheel(
    tmp_path: Path, copy_name: str, *, original: str | None = None, as_big_as: str | None = None
) -> Path:
    """``pkg/_ext.so`` linked against ``pkg.libs/<copy_name>`` (SONAME the hashed name, as auditwheel
    leaves it). ``original``: the version node the copy defines (what auditwheel keeps of its soname).
    ``as_big_as``: a soname whose smallest build in the shipped catalog the copy is padded to (zeros
    after its last byte, which the loader never reads), as a real copy is, which repair leaves unread."""
    build = tmp_path / "build"
    copy = compile_shared(
        build / copy_name,
        {"copy.c": "int vendored_entry(void) { return 7; }\n"},
        soname=copy_name,
        version_nodes={original: ["vendored_*"]} if original else None,
    )
    extension = compile_shared(
        build / "_ext.so",
        {"ext.c": "int vendored_entry(void);\nint ext_entry(void) { return vendored_entry(); }\n"},
        link=[copy],
        rpath="$ORIGIN/../pkg.libs",
    )
    wheel_dir = tmp_path / "in"
    wheel_dir.mkdir()
    return make_wheel(
        wheel_dir,
        "pkg",
        "1.0",
        {
            "pkg/__init__.py": b"",
            "pkg/_ext.so": extension.read_bytes(),
            f"pkg.libs/{copy_name}": copy.read_bytes().ljust(
                _smallest_build(as_big_as) if as_big_as else 0, b"\0"
            ),
        },
        tag=TAG,
    )


def _smallest_build(soname: str) -> int:
    sizes = [p.library.size for p in load_catalog().providers(soname=soname) if p.library.size]
    return min(sizes)


def _needed(wheel_path: Path, member: str) -> tuple[str, ...]:
    with Wheel.open(wheel_path) as wheel, wheel.seekable_member(member) as stream:
        return tuple(read_elf(stream, path=member, symbols=False).needed)


def _rpath(wheel_path: Path, member: str) -> tuple[str, ...]:
    with Wheel.open(wheel_path) as wheel, wheel.seekable_member(member) as stream:
        elf = read_elf(stream, path=member, symbols=False)
        return tuple(elf.rpath) + tuple(elf.runpath)


def _repair(
    tmp_path: Path, wheel: Path, capsys: pytest.CaptureFixture[str], *extra: str
) -> dict[str, object]:
    out = tmp_path / "out"
    code = main(["repair", str(wheel), "-w", str(out), "--json", "--isolated-environment", *extra])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    (result,) = json.loads(captured.out)["wheels"]
    assert isinstance(result, dict)
    return result


def test_a_major_minor_soname_is_restored_from_the_release_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``libnvrtc-builtins-<hash>.so.12.6.85`` goes back to ``libnvrtc-builtins.so.12.6`` (what
    nvidia-cuda-nvrtc-cu12 12.6.85 ships), with the range that soname survives: not ``.so.12``."""
    wheel = _vendoring_wheel(tmp_path, "libnvrtc-builtins-1a2b3c4d.so.12.6.85")
    result = _repair(tmp_path, wheel, capsys)
    plan = result["plan"]
    assert isinstance(plan, dict)
    assert plan["drop"] == ["pkg.libs/libnvrtc-builtins-1a2b3c4d.so.12.6.85"]
    (requirement,) = plan["requirements"]
    assert requirement["requirement"].startswith("nvidia-cuda-nvrtc-cu12>=12.6.85,<12.8.61; ")
    output = Path(str(result["output"]))
    assert _needed(output, "pkg/_ext.so") == ("libnvrtc-builtins.so.12.6",)
    check = result["check"]
    assert isinstance(check, dict)
    assert check["errors"] == 0
    assert main(["check", str(output)]) == 0


@pytest.mark.parametrize(
    ("copy_name", "soname", "requirement"),
    [
        # lightseq-tf2.4.1-cuda11.0.221 2.0.4: its extension binds no version of the runtime, and a
        # guess from the name's major (libcudart.so.11) is a soname no wheel ships: the copy was kept,
        # and check failed the output.
        ("libcudart-1a2b3c4d.so.11.0.221", "libcudart.so.11.0", "nvidia-cuda-runtime-cu11>=11.8.89,<12"),
        # CUDA 11.7's builtins: nvidia-cuda-nvrtc-cu11 ships libnvrtc-builtins.so.11.7 (11.7.99) and
        # .11.8 (11.8.89); the name says which, though no release has its version.
        (
            "libnvrtc-builtins-1a2b3c4d.so.11.7.50",
            "libnvrtc-builtins.so.11.7",
            "nvidia-cuda-nvrtc-cu11>=11.7.99,<11.8.89",
        ),
    ],
)
def test_an_unread_copy_takes_the_soname_its_old_file_name_spells(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    copy_name: str,
    soname: str,
    requirement: str,
) -> None:
    """A copy repair drops unread, known by its soname alone (no release has the version its name
    keeps), whose consumers bind no version naming its soname: the release's soname that the copy's
    old file name (``libcudart.so.11.0.221``) refines is the one to load, not the major alone."""
    monkeypatch.setenv("SLIMWHEEL_CACHE_DIR", str(tmp_path / "cache"))  # no export list read before
    wheel = _vendoring_wheel(tmp_path, copy_name, as_big_as=soname)
    with Wheel.open(wheel) as opened:
        assert list(named_like_copies(opened, load_catalog())) == [f"pkg.libs/{copy_name}"]  # left unread
    result = _repair(tmp_path, wheel, capsys, "--offline")
    plan = result["plan"]
    assert isinstance(plan, dict)
    assert plan["drop"] == [f"pkg.libs/{copy_name}"]
    (added,) = plan["requirements"]
    assert added["requirement"].startswith(f"{requirement}; ")
    assert added["version_source"] == "vendored copy (by-soname)"
    output = Path(str(result["output"]))
    assert _needed(output, "pkg/_ext.so") == (soname,)
    assert main(["check", str(output)]) == 0


@pytest.mark.parametrize(
    ("soname", "distribution", "folder"),
    [
        ("libnvinfer_lean.so.11", "tensorrt-lean-cu13-libs", "tensorrt_lean_libs"),
        ("libnvinfer_dispatch.so.11", "tensorrt-dispatch-cu13-libs", "tensorrt_dispatch_libs"),
    ],
)
def test_tensorrt_lean_and_dispatch_runtimes_come_from_their_wheels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], soname: str, distribution: str, folder: str
) -> None:
    """tensorrt-lean-cu13-bindings 11.4.0.106 links ``libnvinfer_lean.so.11`` and requires nothing
    that ships it: the catalog knew only TensorRT's sdist-only wheels, and repair refused it ("only
    TensorRT installed on the host provides it"). The lean and dispatch runtimes have wheels."""
    wheel = _fresh_build_wheel(tmp_path, [soname])
    result = _repair(tmp_path, wheel, capsys, "--offline", "--cuda", "13")
    plan = result["plan"]
    assert isinstance(plan, dict)
    (added,) = plan["requirements"]
    assert added["requirement"].startswith(f"{distribution}>="), added
    assert f"$ORIGIN/../{folder}" in _rpath(Path(str(result["output"])), "pkg/_ext.so")
    assert main(["check", str(result["output"]), "--offline"]) == 0


def test_a_copy_no_nvidia_wheel_ships_stays(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CUDA 10.2's runtime was never a pip wheel: its copy is the only thing the extension can load."""
    wheel = _vendoring_wheel(tmp_path, "libcudart-1a2b3c4d.so.10.2.89", original="libcudart.so.10.2")
    result = _repair(tmp_path, wheel, capsys)
    plan = result["plan"]
    assert isinstance(plan, dict)
    assert plan["drop"] == []
    assert plan["requirements"] == []
    assert any("kept: no NVIDIA wheel ships libcudart.so.10.2" in line for line in plan["left_alone"])
    output = Path(str(result["output"]))
    assert _needed(output, "pkg/_ext.so") == ("libcudart-1a2b3c4d.so.10.2.89",)
    with Wheel.open(output) as repaired:
        assert repaired.has_member("pkg.libs/libcudart-1a2b3c4d.so.10.2.89")
    assert main(["check", str(output)]) == 0


def test_an_icd_loader_is_nvidias_only_where_the_copy_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pyopencl 2026.1.4 vendors ocl-icd's ``libOpenCL.so.1`` (auditwheel's file version ``1.0.0``),
    whose settings NVIDIA's Khronos loader does not read: a soname others build too is not taken for
    nvidia-cuda-opencl's on its own. A copy whose file version is an NVIDIA release's is dropped."""
    ocl_icd = _vendoring_wheel(tmp_path / "ocl-icd", "libOpenCL-1a2b3c4d.so.1.0.0")
    assert main(["show", str(ocl_icd), "--json"]) == 0
    (shown,) = json.loads(capsys.readouterr().out)["wheels"]
    assert shown["vendored"] == []
    (finding,) = [f for f in shown["findings"] if f["kind"] == "not-nvidia-build"]
    assert finding["path"] == "pkg.libs/libOpenCL-1a2b3c4d.so.1.0.0"
    assert "an OpenCL ICD loader" in finding["message"]
    plan = _repair(tmp_path / "ocl-icd", ocl_icd, capsys)["plan"]
    assert isinstance(plan, dict)
    assert plan["drop"] == []
    assert plan["requirements"] == []

    # The same bytes as an NVIDIA release's file (here a catalog learned from a wheel of them) are.
    copy = tmp_path / "ocl-icd" / "build" / "libOpenCL-1a2b3c4d.so.1.0.0"
    release = make_wheel(
        tmp_path,
        "nvidia-cuda-opencl",
        "13.0.85",
        {"nvidia/cu13/lib/libOpenCL.so.1": copy.read_bytes()},
        tag="py3-none-manylinux_2_17_x86_64",
    )
    catalog = tmp_path / "catalog.json.gz"
    write_catalog(learn_from_wheels([release]), catalog)
    (tmp_path / "exact").mkdir()
    exact = make_wheel(
        tmp_path / "exact",
        "pkg",
        "1.0",
        {"pkg/__init__.py": b"", "pkg/libOpenCL.so.1": copy.read_bytes()},
        tag=TAG,
    )
    assert main(["show", str(exact), "--json", "--catalog", str(catalog)]) == 0
    (shown,) = json.loads(capsys.readouterr().out)["wheels"]
    (vendored,) = shown["vendored"]
    assert vendored["identified"]["distribution"] == "nvidia-cuda-opencl"
    assert vendored["identified"]["confidence"] == "exact"
    # Only its content can tell, so repair reads such a copy rather than dropping it unread by name.
    with Wheel.open(ocl_icd) as opened:
        assert named_like_copies(opened, read_catalog(catalog)) == {}


def _cupti(folder: Path, version: int) -> bytes:
    """A CUPTI-like ``libcupti.so.12`` whose cuptiGetVersion gives ``version``."""
    source = f"int cuptiGetVersion(unsigned *v) {{ *v = {version}; return 0; }}\n"
    return compile_shared(
        folder / "libcupti.so.12", {"cupti.c": source}, soname="libcupti.so.12"
    ).read_bytes()


def _cupti_catalog(tmp_path: Path, library: bytes) -> Path:
    """A catalog learned from one nvidia-cuda-cupti-cu12 wheel (12.99.1) that ships ``library``."""
    release = make_wheel(
        tmp_path,
        "nvidia-cuda-cupti-cu12",
        "12.99.1",
        {"nvidia/cuda_cupti/lib/libcupti.so.12": library},
        tag="py3-none-manylinux_2_17_x86_64",
    )
    catalog = tmp_path / "catalog.json.gz"
    write_catalog(learn_from_wheels([release]), catalog)
    return catalog


def test_a_copy_named_by_its_full_version_is_known_by_the_soname_of_the_release_it_matches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """triton 3.9.0 ships CUPTI as ``libcupti.so``, ``libcupti.so.12`` and ``libcupti.so.2025.1.1``
    (the toolkit's real file name), loaded by path. A copy repair drops is not read, so its name was all
    repair had: "no NVIDIA wheel ships libcupti.so.2025.1.1", and --force kept that one copy. Its
    bytes are a release's file, and carry that file's soname."""
    library = _cupti(tmp_path / "build", 26)
    catalog = _cupti_catalog(tmp_path, library)
    copies = ["pkg/cupti/libcupti.so.12", "pkg/cupti/libcupti.so.2025.1.1"]
    wheel = _wheel_in(tmp_path, "pkg", {"pkg/__init__.py": b"", **dict.fromkeys(copies, library)})
    with Wheel.open(wheel) as opened:
        unread = named_like_copies(opened, read_catalog(catalog))
        assert sorted(unread) == copies
        report = analyse_wheel(opened, read_catalog(catalog), unread=unread, jobs=1)
    assert {copy.path: copy.original_soname for copy in report.vendored} == dict.fromkeys(
        copies, "libcupti.so.12"
    )
    result = _repair(tmp_path, wheel, capsys, "--catalog", str(catalog), "--force")
    plan = result["plan"]
    assert isinstance(plan, dict)
    assert sorted(plan["drop"]) == copies
    assert not any("no NVIDIA wheel ships" in line for line in plan["left_alone"])
    # Its NVIDIA wheel comes in its place, and the loader loads it only when asked (nothing links it).
    (requirement,) = plan["requirements"]
    assert requirement["requirement"].startswith("nvidia-cuda-cupti-cu12>=12.99.1,<13; ")
    manifest = plan["manifest"]
    assert isinstance(manifest, dict)
    assert [(m["soname"], m["optional"], m["needed_by"]) for m in manifest["libraries"]] == [
        ("libcupti.so.12", True, [])
    ]
    assert main(["check", str(result["output"]), "--catalog", str(catalog)]) == 0


def test_a_copy_named_by_a_release_file_name_is_known_by_its_soname_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """onnxruntime-ep-nv-tensorrt-rtx-cu13 0.5 ships ``libcudart.so.13.4.36`` (the toolkit's real
    file name; no release's bytes), which repair does not read: "no NVIDIA wheel ships
    libcudart.so.13.4.36", and the copy was kept. The name is a release's soname with its version."""
    catalog = _cupti_catalog(tmp_path, _cupti(tmp_path / "build" / "release", 26))
    built = _cupti(tmp_path / "build" / "own", 27)  # other bytes: no release's file
    copy = "pkg/cupti/libcupti.so.12.99.7"
    wheel = _wheel_in(tmp_path, "pkg", {"pkg/__init__.py": b"", copy: built})
    with Wheel.open(wheel) as opened:
        unread = named_like_copies(opened, read_catalog(catalog))
        assert sorted(unread) == [copy]
        report = analyse_wheel(opened, read_catalog(catalog), unread=unread, jobs=1)
    (vendored,) = report.vendored
    assert vendored.original_soname == "libcupti.so.12"
    assert vendored.identified is not None
    assert vendored.identified.confidence.value == "by-soname"
    plan = _repair(tmp_path, wheel, capsys, "--catalog", str(catalog), "--force")["plan"]
    assert isinstance(plan, dict)
    assert plan["drop"] == [copy]
    assert not any("no NVIDIA wheel ships" in line for line in plan["left_alone"])


def test_a_copy_whose_real_file_name_extends_its_soname_is_of_that_release(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """onnxruntime-ep-nv-tensorrt-rtx-cu13 0.5.0 ships ``libtensorrt_rtx.so.1.7.1`` (soname
    ``libtensorrt_rtx.so.1``): the file name names release 1.7.1.116, read or unread, as auditwheel's
    names do. It was matched by soname alone, and the floor came from the symbols (1.4.0.76), older
    than the release the wheel was built with."""
    catalog = _cupti_catalog(tmp_path, _cupti(tmp_path / "build" / "release", 26))
    built = _cupti(tmp_path / "build" / "own", 27)  # other bytes: no release's file
    copy = "pkg/cupti/libcupti.so.12.99.1"
    wheel = _wheel_in(tmp_path, "pkg", {"pkg/__init__.py": b"", copy: built})
    with Wheel.open(wheel) as opened:
        for unread in (frozenset(), frozenset(named_like_copies(opened, read_catalog(catalog)))):
            report = analyse_wheel(opened, read_catalog(catalog), unread=unread, jobs=1)
            (vendored,) = report.vendored
            assert vendored.identified is not None
            assert (vendored.identified.confidence.value, vendored.identified.version) == (
                "by-name",
                "12.99.1",
            )
    plan = _repair(tmp_path, wheel, capsys, "--catalog", str(catalog), "--force")["plan"]
    assert _linked(plan) == ("12.99.1", "vendored copy (by-name)")


def _linked(plan: object) -> tuple[str, str]:
    """The one requirement's linked version and where it came from."""
    assert isinstance(plan, dict)
    (requirement,) = plan["requirements"]
    return requirement["linked_version"], requirement["version_source"]


def test_a_consumer_of_a_copy_named_otherwise_is_linked_to_its_release(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The EP library needs ``libtensorrt_rtx.so.1``, which it finds only once the package loaded
    ``libtensorrt_rtx.so.1.7.1`` by path: no DT_NEEDED resolves to the copy, and the requirement
    repair added for the consumer ignored what the copy said of the release."""
    catalog = _cupti_catalog(tmp_path, _cupti(tmp_path / "build" / "release", 26))
    copy = tmp_path / "build" / "own" / "libcupti.so.12"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(_cupti(tmp_path / "build" / "own", 27))
    consumer = compile_shared(
        tmp_path / "build" / "libuse.so",
        {"use.c": "int cuptiGetVersion(unsigned *);\nint use(unsigned *v) { return cuptiGetVersion(v); }\n"},
        link=[copy],
    )
    files = {
        "pkg/__init__.py": b"",
        "pkg/libuse.so": consumer.read_bytes(),
        "pkg/libcupti.so.12.99.1": copy.read_bytes(),
    }
    wheel = _wheel_in(tmp_path, "pkg", files)
    plan = _repair(tmp_path, wheel, capsys, "--catalog", str(catalog))["plan"]
    assert isinstance(plan, dict)
    assert plan["drop"] == ["pkg/libcupti.so.12.99.1"]
    assert _linked(plan) == ("12.99.1", "vendored copy (by-name)")


@pytest.mark.parametrize("major", [12, 13])
def test_a_copy_named_for_a_release_both_majors_ship_is_of_the_wheels_major(
    major: int, tmp_path: Path
) -> None:
    """tensorrt-rtx-cu12-libs and tensorrt-rtx-cu13-libs are both 1.7.1.116: the CUDA 12 EP's copy was
    called CUDA 13's, and repair kept it ("this repair is for CUDA 12"), 210 MiB."""
    build = tmp_path / "build"
    releases = []
    for each in (12, 13):
        library = compile_shared(
            build / f"cu{each}" / "libfake.so.1",
            {"f.c": f"int fake(void) {{ return {each}; }}\n"},
            soname="libfake.so.1",
        )
        releases.append(
            make_wheel(
                tmp_path,
                f"fakelib-cu{each}-libs",
                "1.7.1.116",
                {"fakelib_libs/libfake.so.1": library.read_bytes()},
                tag="py3-none-manylinux_2_17_x86_64",
            )
        )
    catalog = learn_from_wheels(releases)
    copy = compile_shared(
        build / "own" / "libfake.so.1", {"f.c": "int fake(void) { return 0; }\n"}, soname="libfake.so.1"
    )
    extension = compile_shared(
        build / "_ext.so", {"e.c": "int fake(void);\nint ext(void) { return fake(); }\n"}, link=[copy]
    )
    patchelf(extension, "--add-needed", f"libcudart.so.{major}")
    files = {
        "pkg/__init__.py": b"",
        "pkg/_ext.so": extension.read_bytes(),
        "pkg/libfake.so.1.7.1": copy.read_bytes(),
    }
    wheel = _wheel_in(tmp_path, "pkg", files)
    with Wheel.open(wheel) as opened:
        (vendored,) = analyse_wheel(opened, catalog, jobs=1).vendored
    assert vendored.identified is not None
    assert (vendored.identified.distribution, vendored.identified.confidence.value) == (
        f"fakelib-cu{major}-libs",
        "by-name",
    )


def test_a_cuda_major_the_copies_contradict_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wheel = _vendoring_wheel(tmp_path, "libcudart-1a2b3c4d.so.12.4.127", original="libcudart.so.12")
    out = tmp_path / "out"
    code = main(["repair", str(wheel), "-w", str(out), "--cuda", "13", "--isolated-environment"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1, err
    assert "--cuda 13 does not fit the wheel: no CUDA 13 wheel ships libcudart.so.12" in err
    assert not out.exists() or not any(out.iterdir())

    # Forced, the copies the major contradicts are kept, never dropped without a replacement.
    result = _repair(tmp_path, wheel, capsys, "--cuda", "13", "--force")
    plan = result["plan"]
    assert isinstance(plan, dict)
    assert plan["drop"] == []
    assert plan["requirements"] == []


def _fresh_build_wheel(
    tmp_path: Path,
    sonames: list[str],
    requires: tuple[str, ...] = (),
    copies: dict[str, str] | None = None,
    rpath: str = "$ORIGIN/../pkg.libs",
) -> Path:
    """``pkg/_ext.so`` linked against libraries with ``sonames`` that the wheel does not carry (built
    against NVIDIA's pip wheels), plus ``copies``: vendored file name -> its version node."""
    build = tmp_path / "build"
    linked = [
        compile_shared(
            build / soname, {f"lib{i}.c": f"int entry_{i}(void) {{ return {i}; }}\n"}, soname=soname
        )
        for i, soname in enumerate(sonames)
    ]
    files: dict[str, bytes] = {"pkg/__init__.py": b""}
    for i, (name, node) in enumerate((copies or {}).items(), start=len(sonames)):
        copy = compile_shared(
            build / name,
            {f"lib{i}.c": f"int entry_{i}(void) {{ return {i}; }}\n"},
            soname=name,
            version_nodes={node: ["entry_*"]},
        )
        linked.append(copy)
        files[f"pkg.libs/{name}"] = copy.read_bytes()
    calls = "".join(f"int entry_{i}(void);\n" for i in range(len(linked)))
    body = " + ".join(f"entry_{i}()" for i in range(len(linked))) or "0"
    extension = compile_shared(
        build / "_ext.so",
        {"ext.c": f"{calls}int ext_entry(void) {{ return {body}; }}\n"},
        link=linked,
        rpath=rpath,
    )
    files["pkg/_ext.so"] = extension.read_bytes()
    wheel_dir = tmp_path / "in"
    wheel_dir.mkdir()
    return make_wheel(wheel_dir, "pkg", "1.0", files, tag=TAG, requires=requires)


def test_an_entry_into_site_packages_itself_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """open3d 0.20's ``open3d/pybind...so`` lists ``$ORIGIN/../``: site-packages, the root of the
    install tree, which is where its own search path is made relative from."""
    wheel = _fresh_build_wheel(tmp_path, ["libcudart.so.12"], rpath="$ORIGIN/../")
    result = _repair(tmp_path, wheel, capsys)
    output = Path(str(result["output"]))
    with Wheel.open(output) as repaired, repaired.seekable_member("pkg/_ext.so") as stream:
        rpath = read_elf(stream, path="pkg/_ext.so", symbols=False).rpath
    assert rpath == ("$ORIGIN/..", "$ORIGIN/../nvidia/cuda_runtime/lib")
    assert main(["check", str(output)]) == 0


def test_optional_puts_a_library_loaded_on_request_behind_an_extra(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """CuPy 14 loads cuTENSOR only when asked to, and offers no extra for it: ``--optional cutensor``
    requires cutensor-cu12 only under a new extra, which METADATA offers, the manifest marks and check
    simulates; the library the package always loads stays a requirement of every install."""
    wheel = _fresh_build_wheel(tmp_path, ["libcudart.so.12", "libcutensor.so.2"])
    result = _repair(tmp_path, wheel, capsys, "--optional", "cutensor=Tensor_Ops", "--optional", "cudnn")
    plan = result["plan"]
    assert isinstance(plan, dict)
    lines = {r["distribution"]: (r["requirement"], r["extra"]) for r in plan["requirements"]}
    marker = 'sys_platform == "linux" and platform_machine == "x86_64"'
    assert lines["cutensor-cu12"][0].endswith(f'; {marker} and extra == "tensor-ops"')
    assert lines["cutensor-cu12"][1] == "tensor-ops"
    assert lines["nvidia-cuda-runtime-cu12"] == (lines["nvidia-cuda-runtime-cu12"][0], "")
    assert lines["nvidia-cuda-runtime-cu12"][0].endswith(f"; {marker}")
    assert any("--optional cudnn: repair adds no requirement" in w for w in plan["warnings"])
    output = Path(str(result["output"]))
    with Wheel.open(output) as repaired:
        metadata = repaired.metadata_bytes().decode().splitlines()
        manifest = json.loads(repaired.read_member("pkg-1.0.dist-info/slimwheel.json"))
    assert "Provides-Extra: tensor-ops" in metadata
    assert f"Requires-Dist: {lines['cutensor-cu12'][0]}" in metadata
    optional = {library["soname"]: library for library in manifest["libraries"] if library["optional"]}
    assert "libcutensor.so.2" in optional  # with what it needs in turn (cuBLASLt), as optional
    assert "libcudart.so.12" not in optional
    assert optional["libcutensor.so.2"]["requirement"].endswith('; extra == "tensor-ops"')
    assert main(["check", str(output), "--json"]) == 0
    (checked,) = json.loads(capsys.readouterr().out)["wheels"]
    (through,) = [f for f in checked["findings"] if f["kind"] == "found-through-extra"]
    assert "only the extra 'tensor-ops' installs" in through["message"]


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("cutensor=a b", "'a b' is not an extra's name"),
        ("cutensor>=2", "expected LIB or LIB=EXTRA (no version)"),
        ("=cutensor", "expected LIB or LIB=EXTRA"),
    ],
)
def test_optional_takes_a_library_and_an_extras_name_only(
    spec: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wheel = _fresh_build_wheel(tmp_path, ["libcutensor.so.2"])
    code = main(["repair", str(wheel), "-w", str(tmp_path / "out"), "--optional", spec])
    assert code == 2
    assert says in capsys.readouterr().err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def _linked_with_sibling(build: Path, name: str, entry: str, rpath: str) -> tuple[Path, Path]:
    """``name``, defining ``entry``, linked against a stand-in for CUDA 12's runtime
    (``libcudart.so.12``) and ``libsib.so``, a library of its own it finds through ``rpath``."""
    runtime = compile_shared(
        build / "libcudart.so.12", {"rt.c": "int cuda_rt(void) { return 1; }\n"}, soname="libcudart.so.12"
    )
    sibling = compile_shared(
        build / "libsib.so", {"sib.c": "int sib(void) { return 2; }\n"}, soname="libsib.so"
    )
    consumer = compile_shared(
        build / name,
        {"use.c": f"int cuda_rt(void); int sib(void); int {entry}(void) {{ return cuda_rt() + sib(); }}\n"},
        soname=name if name.startswith("lib") else None,
        link=[runtime, sibling],
        rpath=rpath,
    )
    return consumer, sibling


def _wheel_in(tmp_path: Path, distribution: str, files: dict[str, bytes], **options: Any) -> Path:
    (tmp_path / "in").mkdir()
    return make_wheel(tmp_path / "in", distribution, "1.0", files, tag=TAG, **options)


def test_a_library_of_the_data_scheme_lands_outside_site_packages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``pkg-1.0.data/data/lib/libtool.so`` installs into the environment's prefix (``<prefix>/lib``):
    check follows its ``$ORIGIN`` there (its sibling is found), repair writes no RPATH from there into
    site-packages (none serves every Python), and so the wheel, which it cannot make load, is refused.
    Nor does it drop the sibling's empty RUNPATH entry there: that file's search path is left alone."""
    tool, sibling = _linked_with_sibling(tmp_path / "build", "libtool.so", "tool", "$ORIGIN")
    patchelf(sibling, "--set-rpath", ":")
    wheel = _wheel_in(
        tmp_path,
        "pkg",
        {
            "pkg/__init__.py": b"",
            "pkg-1.0.data/data/lib/libtool.so": tool.read_bytes(),
            "pkg-1.0.data/data/lib/libsib.so": sibling.read_bytes(),
        },
    )
    assert main(["check", str(wheel), "--json", "--offline"]) == 1
    (checked,) = json.loads(capsys.readouterr().out)["wheels"]
    errors = [(f["path"], f["soname"]) for f in checked["findings"] if f["severity"] == "error"]
    assert errors == [
        ("pkg-1.0.data/data/lib/libsib.so", None),  # RUNPATH ':' has an empty entry
        ("pkg-1.0.data/data/lib/libtool.so", "libcudart.so.12"),
    ]
    assert not [f for f in checked["findings"] if f["soname"] == "libsib.so"]  # found by its $ORIGIN
    out = tmp_path / "out"
    assert main(["repair", str(wheel), "-w", str(out), "--json", "--isolated-environment"]) == 1
    (result,) = json.loads(capsys.readouterr().out)["wheels"]
    (left,) = result["plan"]["left_alone"]
    assert left.startswith("pkg-1.0.data/data/lib/libtool.so: installs outside site-packages, in the ")
    assert "<prefix>/lib" in left
    assert result["plan"]["edits"] == []
    assert not out.exists() or not any(out.iterdir())
    # The input could not load it either (no requirement brought it in): not an error repair made.
    assert result["check"]["introduced"] == []
    assert [(e["path"], e["soname"]) for e in result["check"]["inherited"]] == errors


def test_a_wheels_own_folder_in_the_nvidia_namespace_stays_on_its_search_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """nvidia-dali installs its own libraries into ``nvidia/dali``: an ``$ORIGIN`` entry there is the
    wheel's, not a stale guess at an NVIDIA wheel's folder, and stays when the file gets its provider's."""
    extension, own = _linked_with_sibling(
        tmp_path / "build", "_ext.so", "PyInit__ext", "$ORIGIN:$ORIGIN/../cublas/lib"
    )
    wheel = _wheel_in(
        tmp_path,
        "nvidia-foo",
        {
            "nvidia/foo/__init__.py": b"",
            "nvidia/foo/_ext.so": extension.read_bytes(),
            "nvidia/foo/libsib.so": own.read_bytes(),
        },
    )
    result = _repair(tmp_path, wheel, capsys)
    output = Path(str(result["output"]))
    with Wheel.open(output) as repaired, repaired.seekable_member("nvidia/foo/_ext.so") as stream:
        rpath = read_elf(stream, path="nvidia/foo/_ext.so", symbols=False).rpath
    # nvidia/cublas/lib is an NVIDIA wheel's folder (cuBLAS 12's): kept after the provider's, as before.
    assert rpath == ("$ORIGIN", "$ORIGIN/../cuda_runtime/lib", "$ORIGIN/../cublas/lib")
    assert main(["check", str(output)]) == 0


@pytest.mark.parametrize(
    ("requires", "options", "cublas"),
    [
        ((), (), 'sys_platform == "linux" and platform_machine == "x86_64"'),
        ((), ("--optional", "cutensor"), 'platform_machine == "x86_64" and extra == "cutensor"'),
        (('cuda-toolkit[cublas]==13.*; extra == "ctk"',), (), None),  # the author's extra brings it
    ],
)
def test_a_library_a_provider_needs_but_does_not_require_is_required(
    requires: tuple[str, ...],
    options: tuple[str, ...],
    cublas: str | None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """cutensor-cu13's libcutensor.so.2 needs libcublasLt.so.13 (from nvidia/cu13/lib), but cutensor-cu13
    requires no nvidia-cublas: a wheel that needs cuTENSOR alone gets cuBLAS too, under the same extra,
    unless an install of the wheel brings it already."""
    wheel = _fresh_build_wheel(tmp_path, ["libcutensor.so.2"], requires=requires)
    plan = _repair(tmp_path, wheel, capsys, "--cuda", "13", *options)["plan"]
    assert isinstance(plan, dict)
    added = {r["distribution"]: r for r in plan["requirements"]}
    assert "cutensor-cu13" in added
    if cublas is None:
        assert "nvidia-cublas" not in added
        return
    assert added["nvidia-cublas"]["requirement"].startswith("nvidia-cublas>=13.0.0.19,<14; ")
    assert added["nvidia-cublas"]["requirement"].endswith(cublas)
    assert (
        "cutensor-cu13 needs libcublasLt.so.13 and does not require nvidia-cublas"
        in (added["nvidia-cublas"]["version_source"])
    )


def test_check_says_when_a_provider_needs_what_no_requirement_brings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A wheel that requires cutensor-cu13 alone: its file finds libcutensor.so.2, which does not load
    without cuBLAS. check warns and names the wheel to require; on repair's output it says nothing."""
    wheel = _fresh_build_wheel(
        tmp_path, ["libcutensor.so.2"], requires=("cutensor-cu13>=2.3,<3",), rpath="$ORIGIN/../cutensor/lib"
    )
    assert main(["check", str(wheel), "--json", "--offline"]) == 0
    (checked,) = json.loads(capsys.readouterr().out)["wheels"]
    (gap,) = [f for f in checked["findings"] if f["kind"] == "provider-needs-unrequired"]
    assert (gap["path"], gap["soname"], gap["severity"]) == ("pkg/_ext.so", "libcutensor.so.2", "warning")
    assert "whose file needs libcublasLt.so.13" in gap["message"]
    assert "require nvidia-cublas too" in gap["message"]
    output = Path(str(_repair(tmp_path, wheel, capsys)["output"]))
    assert main(["check", str(output), "--json", "--offline"]) == 0
    (repaired,) = json.loads(capsys.readouterr().out)["wheels"]
    assert not [f for f in repaired["findings"] if f["kind"] == "provider-needs-unrequired"]


def test_a_providers_needs_are_read_for_its_own_cuda_major(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """custatevec-cu12 and custatevec-cu13 both install cuquantum/lib/libcustatevec.so.1: what the one
    found needs is read from its own major's release (cuBLAS 12), not the newest (qiskit-aer-gpu 0.18.2
    was told of libcublas.so.13)."""
    wheel = _fresh_build_wheel(
        tmp_path, ["libcustatevec.so.1"], requires=("custatevec-cu12",), rpath="$ORIGIN/../cuquantum/lib"
    )
    assert main(["check", str(wheel), "--json", "--offline"]) == 0
    (checked,) = json.loads(capsys.readouterr().out)["wheels"]
    gaps = [f["message"] for f in checked["findings"] if f["kind"] == "provider-needs-unrequired"]
    assert gaps
    assert all(".so.12," in message and "nvidia-cublas-cu12" in message for message in gaps), gaps


def test_one_range_holds_for_every_library_of_a_distribution(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """cutensor-cu12 2.8.0 ships no libcutensorMg.so.2 and 2.8.1 ships it again: the one requirement
    for both libraries leaves 2.8.0 out and goes on to the next major, where capping at 2.8.0 would
    shut out every newer cuTENSOR."""
    wheel = _fresh_build_wheel(tmp_path, ["libcutensor.so.2", "libcutensorMg.so.2"])
    result = _repair(tmp_path, wheel, capsys, "--cuda", "12", "--linked-version", "cutensorMg=2.0.0")
    plan = result["plan"]
    assert isinstance(plan, dict)
    # cuTENSOR's own need of cuBLASLt, which cutensor-cu12 does not require, comes second.
    requirement, cublas = plan["requirements"]
    assert cublas["distribution"] == "nvidia-cublas-cu12"
    assert requirement["requirement"].startswith("cutensor-cu12>=2.0.0,!=2.8.0,<3; ")
    assert requirement["library"] == "cutensor, cutensorMg"
    assert "2.8.0 left out: it drops libcutensorMg.so.2" in requirement["range_reason"]
    assert plan["kept_requirements"] == []
    assert main(["check", str(result["output"])]) == 0


@pytest.mark.parametrize(
    ("requirement", "passes"), [("cutensor-cu12>=2.0.0,<3", False), ("cutensor-cu12>=2.0.0,!=2.8.0,<3", True)]
)
def test_check_tries_every_release_a_range_allows_and_none_it_leaves_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], requirement: str, passes: bool
) -> None:
    """What makes leaving 2.8.0 out necessary, and enough: check installs each release the range allows."""
    wheel = _fresh_build_wheel(
        tmp_path,
        ["libcutensor.so.2", "libcutensorMg.so.2"],
        requires=(requirement,),
        rpath="$ORIGIN/../cutensor/lib",
    )
    code = main(["check", str(wheel), "--cuda", "12", "--json"])
    report = json.loads(capsys.readouterr().out)
    errors = [f["message"] for w in report["wheels"] for f in w["findings"] if f["severity"] == "error"]
    assert (code, errors == []) == (0 if passes else 1, passes), errors
    if not passes:
        assert any("libcutensorMg.so.2" in e and "2.8.0" in e for e in errors), errors


def test_a_provider_required_only_under_an_extra_stays_behind_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """onnxruntime-gpu and gpt4all declare their NVIDIA wheels only under extras, for libraries they
    load only when asked to: a plain install never loaded them, so repair keeps the extra, reaches the
    provider's folder, and check says the file loads only with the extra (a warning)."""
    wheel = _fresh_build_wheel(
        tmp_path, ["libcudnn.so.9"], requires=('nvidia-cudnn-cu12>=9.1; extra == "cudnn"',)
    )
    assert main(["check", str(wheel)]) == 1  # even with the extra, the RPATH does not reach it
    assert "needs libcudnn.so.9: not found" in capsys.readouterr().out
    result = _repair(tmp_path, wheel, capsys)
    plan = result["plan"]
    assert isinstance(plan, dict)
    assert plan["requirements"] == []
    assert plan["made_hard"] == []
    (kept,) = plan["kept_optional"]
    assert kept.startswith("nvidia-cudnn-cu12: stays behind the extra 'cudnn', as no copy of it is dropped")
    (library,) = plan["manifest"]["libraries"]
    assert (library["requirement"], library["optional"]) == ('nvidia-cudnn-cu12>=9.1; extra == "cudnn"', True)
    assert main(["check", str(result["output"]), "--json"]) == 0
    (checked,) = json.loads(capsys.readouterr().out)["wheels"]
    (finding,) = [f for f in checked["findings"] if f["kind"] == "found-through-extra"]
    assert finding["severity"] == "warning"
    assert "only the extra 'cudnn' installs (pip install 'pkg[cudnn]')" in finding["message"]
    assert [p["extras"] for p in checked["optional_providers"]][:1] == [["cudnn"]]


def test_a_provider_an_extra_names_as_a_toolkit_component_stays_behind_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """CuPy 14 offers its CUDA libraries as ``cuda-toolkit[cublas,...]==12.*; extra == "ctk"`` (else
    they come from the host): the extra names the component, so the provider stays behind it. The
    text output keeps the requirement's brackets (rich would read them as markup)."""
    wheel = _fresh_build_wheel(
        tmp_path, ["libcublas.so.12"], requires=('cuda-toolkit[cublas]==12.*; extra == "ctk"',)
    )
    result = _repair(tmp_path, wheel, capsys)
    plan = result["plan"]
    assert isinstance(plan, dict)
    assert plan["requirements"] == []
    (kept,) = plan["kept_optional"]
    assert kept.startswith(
        "nvidia-cublas-cu12: stays behind the extra 'ctk' (through cuda-toolkit[cublas]==12.*;"
    )
    libraries = {library["name"]: library for library in plan["manifest"]["libraries"]}
    cublas = libraries["cublas"]
    assert (cublas["requirement"], cublas["optional"]) == ('cuda-toolkit[cublas]==12.*; extra == "ctk"', True)
    assert main(["repair", str(wheel), "--dry-run", "--isolated-environment"]) == 0
    assert "(through cuda-toolkit[cublas]==12.*; " in capsys.readouterr().out


def _cupylike_index(tmp_path: Path, index_server: Callable[..., IndexServer]) -> str:
    """An index with cupylike 13.0 (no extras) and 14.0, whose extra ``ctk`` brings cuBLAS in through
    cuda-toolkit, as CuPy 14's does: the URL of its simple index."""
    directory = tmp_path / "index"
    directory.mkdir()
    make_wheel(directory, "cupylike", "13.0", {"cupylike/__init__.py": b""})
    ctk = ('cuda-toolkit[cublas]==12.*; extra == "ctk"', 'pytest; extra == "test"')
    make_wheel(directory, "cupylike", "14.0", {"cupylike/__init__.py": b""}, requires=ctk)
    # A library package whose every install brings cuBLAS (as libraft-cu13 requires cuda-toolkit's).
    toolkit = ("cuda-toolkit[cublas]==12.*",)
    make_wheel(directory, "libraftlike-cu12", "1.0", {"libraftlike/__init__.py": b""}, requires=toolkit)
    # A framework named like no library package, whose import loads the cuBLAS it requires (torch).
    make_wheel(directory, "torchlike", "2.0", {"torchlike/__init__.py": b""}, requires=toolkit)
    # cuBLAS two levels down, as jax[cuda13] brings NVIDIA's wheels through jax-cuda13-plugin[with-cuda].
    plugin = ('jaxlike-cuda12-plugin[with-cuda]==1.0; extra == "cuda12"',)
    make_wheel(directory, "jaxlike", "1.0", {"jaxlike/__init__.py": b""}, requires=plugin)
    with_cuda = ('nvidia-cublas-cu12>=12.1; extra == "with-cuda"',)
    files = {"jaxlike_cuda12_plugin/__init__.py": b""}
    make_wheel(directory, "jaxlike-cuda12-plugin", "1.0", files, requires=with_cuda)
    return index_server(directory).simple_url


def test_a_provider_an_extra_brings_through_another_requirement_is_required_behind_that_extra(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], index_server: Callable[..., IndexServer]
) -> None:
    """rapids-singlecell-cu13 installs its CUDA libraries only with its extra 'rapids', through
    ``cupy-cuda13x[ctk]`` (a requirement the catalog does not know, whose extra ``ctk`` requires
    cuda-toolkit's components): check reads that requirement's own on the index and finds cuBLAS
    there, and repair requires it behind the same extras ('everything' brings 'gpu'), not in every
    install; check's example install names the plainest extra."""
    url = _cupylike_index(tmp_path, index_server)
    requires = (
        "numpy",
        'cupylike[ctk]>=13; extra == "gpu"',
        'pkg[gpu]; extra == "everything"',
        'pytest; extra == "test"',
    )
    wheel = _fresh_build_wheel(tmp_path, ["libcublas.so.12"], requires=requires)
    assert main(["check", str(wheel), "-i", url, "--json"]) == 1  # the RPATH does not reach it
    (checked,) = json.loads(capsys.readouterr().out)["wheels"]
    through = {
        (p["distribution"], tuple(p["extras"]), tuple(p["through"])) for p in checked["optional_providers"]
    }
    assert ("nvidia-cublas-cu12", ("everything", "gpu"), ("cupylike[ctk]>=13",)) in through
    (missing,) = [f for f in checked["findings"] if f["soname"] == "libcublas.so.12"]
    words = (
        "installs it in nvidia/cublas/lib (only with the extra 'everything' or 'gpu', through "
        "cupylike[ctk]>=13)"
    )
    assert words in missing["message"], missing["message"]
    result = _repair(tmp_path, wheel, capsys, "-i", url)
    plan = result["plan"]
    assert isinstance(plan, dict)
    (added,) = plan["requirements"]
    assert (added["distribution"], added["extra"]) == ("nvidia-cublas-cu12", "everything")
    assert added["requirement"].endswith(' and (extra == "everything" or extra == "gpu")'), added[
        "requirement"
    ]
    (kept,) = plan["kept_optional"]
    assert kept.startswith(
        "nvidia-cublas-cu12: required with the extra 'everything' or 'gpu' only, which brings it in already "
        "(through cupylike[ctk]>=13), as no copy of it is dropped"
    ), kept
    libraries = {library["name"]: library for library in plan["manifest"]["libraries"]}
    assert all(library["optional"] for library in libraries.values()), libraries
    assert libraries["cublas"]["requirement"].endswith('; extra == "everything"'), libraries
    assert main(["check", str(result["output"]), "-i", url, "--json"]) == 0
    (checked,) = json.loads(capsys.readouterr().out)["wheels"]
    (finding,) = [f for f in checked["findings"] if f["kind"] == "found-through-extra"]
    assert "only the extra 'everything' or 'gpu' installs (pip install 'pkg[gpu]')" in finding["message"]
    # A wheel whose RPATH reaches the provider already loads with the extra: check says through what.
    reaching = _fresh_build_wheel(
        tmp_path / "reaching", ["libcublas.so.12"], requires=requires, rpath="$ORIGIN/../nvidia/cublas/lib"
    )
    assert main(["check", str(reaching), "-i", url, "--json"]) == 0
    (checked,) = json.loads(capsys.readouterr().out)["wheels"]
    (finding,) = [f for f in checked["findings"] if f["kind"] == "found-through-extra"]
    words = (
        "only the extra 'everything' or 'gpu', through cupylike[ctk]>=13, installs (pip install 'pkg[gpu]')"
    )
    assert words in finding["message"], finding["message"]


def test_offline_a_provider_an_extra_brings_through_another_requirement_is_required_always(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], index_server: Callable[..., IndexServer]
) -> None:
    """Without the index (--offline), what cupylike's extra brings is not known: the provider is
    required in every install, as before; so too where the requirement's newest release brings no
    NVIDIA wheel (cupylike<14), where the extra is for the package's developers (cuvs-cu13 brings
    cupy-cuda13x[ctk] with 'test' only), and where a plain install brings it already through another
    requirement (pylibraft-cu13's libraft-cu13 requires cuda-toolkit[cublas,...])."""
    url = _cupylike_index(tmp_path, index_server)
    gpu = 'cupylike[ctk]>=13; extra == "gpu"'
    for case, (requires, flags) in enumerate(
        (
            ((gpu,), ("--offline",)),
            (('cupylike[ctk]<14; extra == "gpu"',), ("-i", url)),
            (('cupylike[ctk]>=13; extra == "tests"',), ("-i", url)),
            ((gpu, "libraftlike-cu12>=1"), ("-i", url)),
        )
    ):
        wheel = _fresh_build_wheel(tmp_path / str(case), ["libcublas.so.12"], requires=requires)
        plan = _repair(tmp_path / str(case), wheel, capsys, *flags)["plan"]
        assert isinstance(plan, dict)
        (added,) = plan["requirements"]
        assert (added["distribution"], added["extra"]) == ("nvidia-cublas-cu12", ""), added
        assert plan["kept_optional"] == []


def _check_cublas(
    capsys: pytest.CaptureFixture[str], wheel: Path, *flags: str
) -> tuple[int | None, dict[str, Any], list[dict[str, Any]]]:
    """``check --json`` of ``wheel`` with ``flags``: its exit status, its one wheel's document, and the
    findings about ``libcublas.so.12``."""
    code = main(["check", str(wheel), "--json", *flags])
    (checked,) = json.loads(capsys.readouterr().out)["wheels"]
    return code, checked, [f for f in checked["findings"] if f["soname"] == "libcublas.so.12"]


def test_check_counts_a_provider_every_install_brings_through_another_requirement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], index_server: Callable[..., IndexServer]
) -> None:
    """pylibraft-cu13's every install brings cuBLAS through libraft-cu13's ``cuda-toolkit[cublas,...]``:
    check says it is installed off the file's search path and which RPATH reaches it, not that no
    Requires-Dist brings it in; offline, where the index is not read, it says what it said before;
    where the RPATH reaches it, it warns that only that requirement brings it, and repair requires it."""
    url = _cupylike_index(tmp_path, index_server)
    wheel = _fresh_build_wheel(tmp_path, ["libcublas.so.12"], requires=("libraftlike-cu12>=1",))
    code, checked, (finding,) = _check_cublas(capsys, wheel, "-i", url)
    assert code == 1
    providers = {(p["distribution"], tuple(p["through"])) for p in checked["providers"]}
    assert ("nvidia-cublas-cu12", ("libraftlike-cu12>=1",)) in providers, providers
    assert not checked["optional_providers"]
    by = {(r["distribution"], r["required_by"]) for r in checked["requirements"]}
    assert ("cuda-toolkit", "libraftlike-cu12>=1") in by, by
    assert finding["kind"] == "unresolved-needed", finding
    words = "nvidia-cublas-cu12 installs it in nvidia/cublas/lib: add RPATH '$ORIGIN/../nvidia/cublas/lib'"
    assert words in finding["message"], finding["message"]
    hint = "or, if importing libraftlike-cu12 loads it first, count on that (--preloaded libraftlike-cu12)"
    assert hint in finding["message"], finding["message"]
    # Counted on: libraftlike's import loads the cuBLAS its requirements bring; or, named, cuBLAS's wheel.
    code, _, (finding,) = _check_cublas(capsys, wheel, "-i", url, "--preloaded", "libraftlike-cu12")
    assert (code, finding["kind"]) == (0, "found-preloaded"), finding
    words = "which libraftlike-cu12 brings in and loads, is loaded first (import libraftlike-cu12"
    assert words in finding["message"], finding["message"]
    code, _, (finding,) = _check_cublas(capsys, wheel, "-i", url, "--preloaded", "nvidia-cublas-cu12")
    assert (code, finding["kind"]) == (0, "found-preloaded"), finding
    assert finding["message"].endswith("(import nvidia-cublas-cu12 before this file is loaded)"), finding
    code, _, (finding,) = _check_cublas(capsys, wheel, "--offline")
    assert (code, finding["kind"]) == (1, "missing-requirement"), finding
    # Where its RPATH reaches the folder, it loads: a warning that only libraftlike brings it in,
    # which repair settles by requiring the provider itself.
    reaching = _fresh_build_wheel(
        tmp_path / "reaching",
        ["libcublas.so.12"],
        requires=("libraftlike-cu12>=1",),
        rpath="$ORIGIN/../nvidia/cublas/lib",
    )
    code, _, found = _check_cublas(capsys, reaching, "-i", url)
    assert code == 0
    assert sorted(f["kind"] for f in found) == ["found-through-requirement", "split-install"], found
    (finding,) = [f for f in found if f["kind"] == "found-through-requirement"]
    assert "which only libraftlike-cu12>=1 brings in, through its own requirements" in finding["message"]
    result = _repair(tmp_path / "reaching", reaching, capsys, "-i", url)
    plan = result["plan"]
    assert isinstance(plan, dict)
    (added,) = plan["requirements"]
    assert (added["distribution"], added["extra"]) == ("nvidia-cublas-cu12", ""), added
    code, _, found = _check_cublas(capsys, Path(str(result["output"])), "-i", url)
    assert code == 0
    assert "found-through-requirement" not in {f["kind"] for f in found}, found


def test_check_follows_a_requirement_two_levels_down_to_the_nvidia_wheels_it_brings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], index_server: Callable[..., IndexServer]
) -> None:
    """roughpy-jax-cuda13-plugin 1.2.0 requires ``jax[cuda13]``, whose extra requires
    ``jax-cuda13-plugin[with-cuda]``, whose extra requires NVIDIA's wheels: check read one level and
    said "no Requires-Dist brings it in" of its libcudart.so.13; two levels are read now."""
    url = _cupylike_index(tmp_path, index_server)
    wheel = _fresh_build_wheel(tmp_path, ["libcublas.so.12"], requires=("jaxlike[cuda12]>=1",))
    code, checked, (finding,) = _check_cublas(capsys, wheel, "-i", url)
    assert (code, finding["kind"]) == (1, "unresolved-needed"), finding
    providers = {(p["distribution"], tuple(p["through"])) for p in checked["providers"]}
    assert ("nvidia-cublas-cu12", ("jaxlike[cuda12]>=1",)) in providers, providers
    assert "nvidia-cublas-cu12 installs it in nvidia/cublas/lib: add RPATH" in finding["message"], finding


def test_a_preloaded_framework_brings_the_nvidia_wheels_its_import_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], index_server: Callable[..., IndexServer]
) -> None:
    """A torch extension needs the CUDA runtime torch requires and loads: with ``--preloaded torch``,
    check reads torch's requirements (whatever its name) and counts what they bring as loaded with
    it; without the flag, torch's requirements are not read, and the runtime is a requirement to add."""
    url = _cupylike_index(tmp_path, index_server)
    wheel = _fresh_build_wheel(tmp_path, ["libcublas.so.12"], requires=("torchlike>=2",))
    code, _, (finding,) = _check_cublas(capsys, wheel, "-i", url, "--preloaded", "torchlike")
    assert (code, finding["kind"]) == (0, "found-preloaded"), finding
    assert "which torchlike brings in and loads" in finding["message"], finding["message"]
    code, _, (finding,) = _check_cublas(capsys, wheel, "-i", url)
    assert (code, finding["kind"]) == (1, "missing-requirement"), finding
    # repair still requires it itself: the wheel written loads it whatever torch's next release requires.
    plan = _repair(tmp_path, wheel, capsys, "-i", url, "--preloaded", "torchlike")["plan"]
    assert isinstance(plan, dict)
    (added,) = plan["requirements"]
    assert (added["distribution"], added["extra"]) == ("nvidia-cublas-cu12", ""), added


def test_a_provider_behind_an_extra_is_made_hard_when_its_vendored_copy_is_dropped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The copy served a plain install: dropping it makes its provider a hard requirement, in the
    author's range; ``--keep-extras-optional`` keeps the extra and the copy."""
    wheel = _fresh_build_wheel(
        tmp_path,
        [],
        requires=('nvidia-cudnn-cu12>=9.1; extra == "cudnn"',),
        copies={"libcudnn.so.9": "libcudnn.so.9"},
    )
    result = _repair(tmp_path, wheel, capsys)
    plan = result["plan"]
    assert isinstance(plan, dict)
    assert plan["drop"] == ["pkg.libs/libcudnn.so.9"]
    (requirement,) = plan["requirements"]
    assert requirement["requirement"].startswith("nvidia-cudnn-cu12>=9.1,<10; ")
    assert requirement["version_source"] == "the lower bound of the wheel's Requires-Dist"
    (made_hard,) = plan["made_hard"]
    assert made_hard.startswith("nvidia-cudnn-cu12: the wheel asked for it only with the extra 'cudnn'")
    assert main(["check", str(result["output"])]) == 0

    capsys.readouterr()
    out = tmp_path / "optional"
    argv = ["repair", str(wheel), "-w", str(out), "--isolated-environment", "--keep-extras-optional"]
    assert main([*argv, "--json"]) == 0
    (kept,) = json.loads(capsys.readouterr().out)["wheels"]
    assert kept["plan"]["drop"] == []
    assert kept["plan"]["requirements"] == []
    assert kept["plan"]["kept_copies"] == ["pkg.libs/libcudnn.so.9"]


def test_the_wheels_own_requirement_names_the_major_and_the_linked_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """libnvToolsExt.so.1 ships in CUDA 11 and 12 wheels alike; the wheel's pin on a CUDA 11 runtime
    says which, and its ``==`` pin is the version it was linked against."""
    wheel = _fresh_build_wheel(
        tmp_path,
        ["libcudart.so.11.0"],
        requires=("nvidia-cuda-runtime-cu11==11.7.99",),
        copies={"libnvToolsExt-1a2b3c4d.so.1.0.0": "libnvToolsExt.so.1"},
    )
    result = _repair(tmp_path, wheel, capsys)
    plan = result["plan"]
    assert isinstance(plan, dict)
    assert plan["cuda_major"] == 11
    assert plan["kept_requirements"] == ["nvidia-cuda-runtime-cu11==11.7.99"]
    (added,) = plan["requirements"]
    assert added["distribution"] == "nvidia-nvtx-cu11"
    cudart = next(lib for lib in plan["manifest"]["libraries"] if lib["name"] == "cudart")
    assert cudart["min_version"] == "11.7.99"
    assert main(["check", str(result["output"])]) == 0


def test_only_what_must_change_is_touched(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file with no NVIDIA need keeps its dynamic section byte for byte (libpng's RUNPATH stays a
    RUNPATH); a plugin that dlopens NVIDIA libraries by soname keeps the RPATH entries that reach
    them; a file whose RPATH already reaches its provider keeps it, though the drop empties a folder
    it names (that entry can only miss); ``$ORIGINAL`` is not ``$ORIGIN``."""
    build = tmp_path / "build"
    copy = compile_shared(
        build / "libcudss.8f0e2a1b.so.1",
        {"cudss.c": "int cudssGetProperty(int p, int *v) { *v = p; return 0; }\n"},
        soname="libcudss.so.1",
        version_nodes={"libcudss.so.1": ["cudss*"]},
    )
    extension = compile_shared(
        build / "_ext.so",
        {
            "ext.c": "int cudssGetProperty(int, int *);\n"
            "int ext(void) { int v; return cudssGetProperty(1, &v); }\n"
        },
        link=[copy],
        rpath="$ORIGINAL/lib:$ORIGIN/../pkg.libs",
    )
    reaching = compile_shared(
        build / "_reaching.so",
        {
            "reaching.c": "int cudssGetProperty(int, int *);\n"
            "int r(void) { int v; return cudssGetProperty(2, &v); }\n"
        },
        link=[copy],
        rpath="$ORIGIN/../pkg.libs:$ORIGIN/../nvidia/cu13/lib",
    )
    png = compile_shared(
        build / "libpng16.so.16",
        {"png.c": "int png_entry(void) { return 16; }\n"},
        soname="libpng16.so.16",
        rpath="$ORIGIN",
        new_dtags=True,
    )
    plugin = compile_shared(
        build / "_plugin.so",
        {"plugin.c": "int plugin_entry(void) { return 0; }\n"},
        rpath="$ORIGIN/../nvidia/cu13/lib:$ORIGIN/../nvidia/cublas/lib:$ORIGIN/..",
    )
    files = {
        "pkg/__init__.py": b"",
        "pkg/_ext.so": extension.read_bytes(),
        "pkg/libpng16.so.16": png.read_bytes(),
        "pkg/_plugin.so": plugin.read_bytes(),
        "pkg/_reaching.so": reaching.read_bytes(),
        "pkg.libs/libcudss.8f0e2a1b.so.1": copy.read_bytes(),
    }
    wheel = _wheel_in(tmp_path, "pkg", files)
    result = _repair(tmp_path, wheel, capsys, "--cuda", "13")
    plan = result["plan"]
    assert isinstance(plan, dict)
    assert [edit["path"] for edit in plan["edits"]] == ["pkg/_ext.so"]
    output = Path(str(result["output"]))
    with Wheel.open(output) as repaired:
        for name in ("pkg/libpng16.so.16", "pkg/_plugin.so", "pkg/_reaching.so"):
            assert repaired.read_member(name) == files[name], name
        with repaired.seekable_member("pkg/_ext.so") as stream:
            facts = read_elf(stream, path="pkg/_ext.so", symbols=False)
    assert "libcudss.so.1" in facts.needed
    # $ORIGINAL is no token glibc expands: kept as written; the emptied pkg.libs goes; the provider's
    # folder follows.
    assert facts.rpath == ("$ORIGINAL/lib", "$ORIGIN/../nvidia/cu13/lib")
    assert main(["check", str(output)]) == 0


def test_checks_advice_follows_the_wheels_cuda_major(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``libcudart.so.12`` makes it a CUDA 12 wheel: the advice for ``libcutensor.so.2`` (in cu12 and
    cu13 wheels alike) names cutensor-cu12, not the newest major's."""
    wheel = _fresh_build_wheel(tmp_path, ["libcudart.so.12", "libcutensor.so.2"])
    assert main(["check", str(wheel), "--json", "--offline"]) == 1
    findings = json.loads(capsys.readouterr().out)["wheels"][0]["findings"]
    advice = {f["soname"]: f["message"] for f in findings if f["kind"] == "missing-requirement"}
    assert "add Requires-Dist: cutensor-cu12>=" in advice["libcutensor.so.2"]
    assert "add Requires-Dist: nvidia-cuda-runtime-cu12>=" in advice["libcudart.so.12"]
    assert (
        "`slimwheel repair` sets the oldest that exports what the files import" in advice["libcudart.so.12"]
    )


def test_a_wheel_for_several_cuda_majors_is_refused_with_a_way_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """bitsandbytes ships one library per CUDA major and picks one at run time: requiring every
    major's runtime would install them all, so repair says what it found and what to do; with --cuda N
    it repairs for that major and leaves the other's sonames to the host, and the wheel passes check."""
    wheel = _fresh_build_wheel(tmp_path, ["libcudart.so.11.0", "libcudart.so.13"])
    out = tmp_path / "out"
    assert main(["repair", str(wheel), "-w", str(out), "--isolated-environment"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert (
        "need the libraries of several CUDA majors (CUDA 11: libcudart.so.11.0; CUDA 13: libcudart.so.13)"
        in err
    )
    # One file needs both majors' runtimes: no --cuda 11,13 to offer.
    assert "--cuda N repairs one major, the files of the others left alone; or build one wheel per" in err
    assert not out.exists() or not any(out.iterdir())
    # check's advice for the wheel as it is: not to require every major's wheels in one install.
    assert main(["check", str(wheel)]) == 1
    said = capsys.readouterr().out
    assert (
        said.count("the wheel is built for CUDA 11 and 13, whose wheels one install should not all bring")
        == 2
    )
    assert "`slimwheel repair --cuda 11,13` does the former where each file is one major's build" in said
    assert "`--cuda 11` leaves the other majors' libraries to the host" in said
    assert "add Requires-Dist" not in said
    flags = ["--isolated-environment", "--cuda", "13", "--linked-version", "cudart=13.0.96", "--json"]
    assert main(["repair", str(wheel), "-w", str(out), *flags]) == 0
    (result,) = json.loads(capsys.readouterr().out)["wheels"]
    assert [r["distribution"] for r in result["plan"]["requirements"]] == ["nvidia-cuda-runtime"]
    assert result["plan"]["left_to_host"] == ["libcudart.so.11.0"]
    assert result["check"]["errors"] == 0
    # Checked again, told nothing: the manifest says what was left to the host.
    assert main(["check", result["output"]]) == 0
    assert "left to the host (--exclude libcudart.so.11.0)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("runtime", "distribution"), [("11.0", "nvidia-nccl-cu11"), ("12", "nvidia-nccl-cu12")]
)
def test_a_copy_known_by_soname_alone_is_shown_as_the_wheels_cuda_majors(
    tmp_path: Path, runtime: str, distribution: str
) -> None:
    """cupy-cuda110 8.6 bundles a ``libnccl.so.2`` of no release's bytes; NCCL's CUDA 11, 12 and 13
    wheels all ship that soname, and show named the copy nvidia-nccl-cu13's. The runtime the wheel's
    extension links (``libcudart.so.11.0``) names its major, as repair takes it."""
    build = tmp_path / "build"
    cudart = compile_shared(
        build / "cudart" / f"libcudart.so.{runtime}",
        {"rt.c": "int cudaGetDeviceCount(int *n) { *n = 0; return 0; }\n"},
        soname=f"libcudart.so.{runtime}",
    )
    nccl = compile_shared(
        build / "nccl" / "libnccl.so.2",
        {"nccl.c": "int ncclGetVersion(int *v) { *v = 1; return 0; }\n"},
        soname="libnccl.so.2",
    )
    extension = compile_shared(
        build / "_ext.so",
        {"ext.c": "int cudaGetDeviceCount(int *);\nint ext(int *n) { return cudaGetDeviceCount(n); }\n"},
        link=[cudart],
    )
    files = {
        "pkg/__init__.py": b"",
        "pkg/_ext.so": extension.read_bytes(),
        "pkg/.data/lib/libnccl.so.2": nccl.read_bytes(),
    }
    wheel = _wheel_in(tmp_path, "pkg", files)
    with Wheel.open(wheel) as opened:
        report = analyse_wheel(opened, load_catalog(use_user=False), jobs=1)
    (copy,) = report.vendored
    assert copy.identified is not None
    assert copy.identified.confidence.value == "by-soname"
    assert copy.identified.distribution == distribution
    assert copy.identified.cuda_major == int(runtime.split(".", maxsplit=1)[0])


# A remote-GPU client's one library under NVIDIA's names (chidori-gpu 0.1.5 ships it as libcublas.so.13,
# libcudart.so.13 and four more): each defines cuBLAS's, cuDNN's and the runtime's API, to forward the
# calls to a machine that has the GPU.
_INTERPOSER_C = """
int cudaMalloc(void **p, unsigned long n) { *p = (void *)n; return n == 0; }
int cublasCreate_v2(void **h) { *h = h; return 0; }
int cudnnCreate(void **h) { *h = h; return 0; }
"""


@pytest.mark.parametrize("forwards", [True, False], ids=["interposer", "small-copy"])
def test_a_small_library_that_defines_other_nvidia_apis_is_no_copy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], forwards: bool
) -> None:
    """Named for cudart, a fraction of NVIDIA's size, and defining cuBLAS's and cuDNN's API too: the
    wheel's own library, which stays (repair dropped chidori-gpu's six and required NVIDIA's instead,
    which serve no remote GPU). A small file that defines only the runtime's API is still taken for a
    copy, as a build of the library is."""
    source = _INTERPOSER_C if forwards else "int cudaMalloc(void **p, unsigned long n) { return n == 0; }\n"
    library = compile_shared(
        tmp_path / "build" / "libcudart.so.13", {"shim.c": source}, soname="libcudart.so.13"
    )
    extension = compile_shared(
        tmp_path / "build" / "_ext.so",
        {
            "ext.c": "int cudaMalloc(void **, unsigned long);\n"
            "int ext(void **p) { return cudaMalloc(p, 8); }\n"
        },
        link=[library],
        rpath="$ORIGIN",
    )
    wheel = _wheel_in(
        tmp_path,
        "pkg",
        {
            "pkg/__init__.py": b"",
            "pkg/_ext.so": extension.read_bytes(),
            # 300 kB: under half of libcudart.so.13's smallest build (704 kB), not of cudart64_13.dll's.
            "pkg/libcudart.so.13": library.read_bytes().ljust(300_000, b"\0"),
        },
    )
    with Wheel.open(wheel) as opened:
        # Far smaller than NVIDIA's builds, it is read even where repair leaves copies unread.
        assert "pkg/libcudart.so.13" not in named_like_copies(opened, load_catalog())
    assert main(["show", str(wheel), "--json"]) == 0
    (shown,) = json.loads(capsys.readouterr().out)["wheels"]
    found = [f["message"] for f in shown["findings"] if f["kind"] == "not-nvidia-build"]
    if not forwards:
        assert found == []
        assert [copy["path"] for copy in shown["vendored"]] == ["pkg/libcudart.so.13"]
        return
    assert shown["vendored"] == []
    (message,) = found
    assert message.startswith("libcudart.so.13 here is 300,000 bytes, NVIDIA's smallest build of it 704,288")
    assert "defines the API of cublas, cudnn too" in message
    plan = _repair(tmp_path, wheel, capsys, "--offline")["plan"]
    assert isinstance(plan, dict)
    assert plan["drop"] == []
    assert plan["requirements"] == []


def test_a_wheel_for_several_cuda_majors_is_repaired_for_them_all(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """cuda-cccl 1.2.1's shape: ``cu12/`` and ``cu13/`` hold one build each, each needing its major's
    runtime. ``--cuda 12,13`` links each to its own major's wheel and puts each requirement behind
    that major's extra (the wheel's own ``cuda12``, else ``cu13``), and the written wheel passes check,
    told nothing."""
    build = tmp_path / "build"
    files: dict[str, bytes] = {"pkg/__init__.py": b""}
    for major, soname in (("12", "libcudart.so.12"), ("13", "libcudart.so.13")):
        runtime = compile_shared(
            build / major / soname, {"rt.c": "int cudaGetDeviceCount(int *n) { *n = 0; return 0; }\n"},
            soname=soname,
        )  # fmt: skip
        extension = compile_shared(
            build / major / "_ext.so",
            {"ext.c": "int cudaGetDeviceCount(int *);\nint ext(int *n) { return cudaGetDeviceCount(n); }\n"},
            link=[runtime],
        )
        files[f"pkg/cu{major}/_ext.so"] = extension.read_bytes()
    wheel_dir = tmp_path / "in"
    wheel_dir.mkdir()
    wheel = make_wheel(wheel_dir, "pkg", "1.0", files, tag=TAG, requires=('numpy; extra == "cuda12"',))
    assert main(["repair", str(wheel), "-w", str(tmp_path / "refused"), "--offline"]) == 2
    assert "--cuda 12,13 links each file to its own major's wheels" in capsys.readouterr().err
    result = _repair(tmp_path, wheel, capsys, "--offline", "--cuda", "12,13")
    plan = result["plan"]
    assert isinstance(plan, dict)
    assert plan["cuda_majors"] == [12, 13]
    assert [(r["distribution"], r["extra"]) for r in plan["requirements"]] == [
        ("nvidia-cuda-runtime-cu12", "cuda12"),
        ("nvidia-cuda-runtime", "cu13"),
    ]
    output = Path(str(result["output"]))
    with Wheel.open(output) as repaired:
        metadata = repaired.metadata()
        assert sorted(metadata.get_all("Provides-Extra") or ()) == ["cu13", "cuda12"]
        required = metadata.get_all("Requires-Dist") or ()
        searched = {}
        for major in ("12", "13"):
            with repaired.seekable_member(f"pkg/cu{major}/_ext.so") as stream:
                searched[major] = read_elf(stream, path="_ext.so", symbols=False).rpath
        manifest = read_manifest(repaired)
    assert any(
        line.startswith("nvidia-cuda-runtime-cu12>=") and 'extra == "cuda12"' in line for line in required
    )
    assert any(line.startswith("nvidia-cuda-runtime>=") and 'extra == "cu13"' in line for line in required)
    assert searched == {
        "12": ("$ORIGIN/../../nvidia/cuda_runtime/lib",),
        "13": ("$ORIGIN/../../nvidia/cu13/lib",),
    }
    assert manifest is not None
    assert manifest.cuda_major is None
    assert [lib.soname for lib in manifest.libraries] == ["libcudart.so.12", "libcudart.so.13"]
    assert main(["check", str(output), "--offline"]) == 0
    capsys.readouterr()
    # One --linked-version a major, each applied to the major it is a release of.
    linked = _repair(
        tmp_path / "linked", wheel, capsys, "--offline", "--cuda", "12,13",
        "--linked-version", "cudart=12.8.90", "--linked-version", "cudart=13.4.49",
    )["plan"]  # fmt: skip
    assert isinstance(linked, dict)
    assert [(r["linked_version"], r["version_source"]) for r in linked["requirements"]] == [
        ("12.8.90", "--linked-version"),
        ("13.4.49", "--linked-version"),
    ]
