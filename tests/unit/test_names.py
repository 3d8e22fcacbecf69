from __future__ import annotations

import pytest

from slimwheel.errors import UsageError
from slimwheel.names import (
    NameStyle,
    is_libpython,
    left_to_host_name,
    name_of_library,
    parse_library_file_name,
    parse_library_spec,
    soname_stem,
)


@pytest.mark.parametrize(
    ("filename", "stem", "version", "style"),
    [
        ("libcudss.so.1", "cudss", "1", NameStyle.PLAIN),
        ("libcublasLt.so.13", "cublasLt", "13", NameStyle.PLAIN),
        ("libnvrtc-builtins.so.12.6", "nvrtc-builtins", "12.6", NameStyle.PLAIN),
        ("libfoo.so", "foo", None, NameStyle.PLAIN),
        ("libcudss-1a2b3c4d.so.1.0.0", "cudss", "1.0.0", NameStyle.AUDITWHEEL),
        ("libnvrtc-672ee683.so.11.8.89", "nvrtc", "11.8.89", NameStyle.AUDITWHEEL),
        ("libnvrtc-builtins-0a1b2c3d.so.12.6", "nvrtc-builtins", "12.6", NameStyle.AUDITWHEEL),
        ("libcudart.41118559.so.12", "cudart", "12", NameStyle.RENAMED),
        ("cudss64_1.dll", "cudss", "1", NameStyle.WINDOWS),
        ("cudnn_graph64_9.dll", "cudnn_graph", "9", NameStyle.WINDOWS),
        ("nvJitLink_130_0.dll", "nvJitLink", "130_0", NameStyle.WINDOWS),
        ("nvidia/cu13/lib/libcudss.so.1", "cudss", "1", NameStyle.PLAIN),
    ],
)
def test_library_file_names(filename: str, stem: str, version: str | None, style: NameStyle) -> None:
    parsed = parse_library_file_name(filename)
    assert parsed is not None
    assert (parsed.stem, parsed.version, parsed.style) == (stem, version, style)


@pytest.mark.parametrize("filename", ["x.py", "_solver.abi3.so", "METADATA", "libcudss.a"])
def test_not_library_names(filename: str) -> None:
    assert parse_library_file_name(filename) is None


def test_renamed_copy_keeps_its_soname() -> None:
    parsed = parse_library_file_name("libcudart.41118559.so.12")
    assert parsed is not None
    assert parsed.plain_soname == "libcudart.so.12"
    auditwheel = parse_library_file_name("libcudss-1a2b3c4d.so.1.0.0")
    assert auditwheel is not None
    assert auditwheel.plain_soname is None


def test_library_specs() -> None:
    assert str(parse_library_spec("cudss>=1.0")) == "cudss>=1.0"
    assert parse_library_spec("cudss >= 1.0").specifier == ">=1.0"
    assert parse_library_spec("nvrtc-builtins").name == "nvrtc-builtins"
    assert parse_library_spec("libcudss.so.1").name == "cudss"
    assert soname_stem("libcublasLt.so.13") == "cublasLt"
    with pytest.raises(UsageError, match="bad version spec"):
        parse_library_spec("cudss>=>1")
    with pytest.raises(UsageError):
        parse_library_spec("")


@pytest.mark.parametrize(
    ("told", "name", "names"),
    [
        ("cublas", "cublas", {"libcublas.so.11": True, "libcublas.so.12": True, "libcublasLt.so.12": False}),
        ("libcublas.so.11", "libcublas.so.11", {"libcublas.so.11": True, "libcublas.so.12": False}),
        # An unversioned name, or an auditwheel copy's, is no soname to leave alone: its stem is meant.
        ("libnvinfer.so", "nvinfer", {"libnvinfer.so.10": True}),
        ("libcublas-1a2b3c4d.so.11", "cublas", {"libcublas.so.11": True}),
    ],
)
def test_what_exclude_leaves_to_the_host(told: str, name: str, names: dict[str, bool]) -> None:
    assert left_to_host_name(told) == name
    for soname, named in names.items():
        assert (name_of_library([name], soname) == name) is named, soname


@pytest.mark.parametrize(
    ("soname", "expected"),
    [
        ("libpython3.12.so.1.0", True),
        ("libpython3.13t.so.1.0", True),
        ("libpython3.so", True),
        ("libpython2.7.so.1.0", True),
        ("libpythonista.so", False),
        ("libpython3.12.so.1.0.bak", False),
        ("libboost_python312.so.1.83.0", False),
    ],
)
def test_is_libpython(soname: str, expected: bool) -> None:
    assert is_libpython(soname) is expected
