from __future__ import annotations

from slimwheel.names import parse_library_spec
from slimwheel.platforms import DEFAULT_TARGET_PLATFORMS, Platform
from slimwheel.targets import Target, compare_plans, plan_targets, plan_to_dict
from tests.support.catalogs import sample_catalog


def _plans(*libraries: str, majors: tuple[int, ...] = (12, 13)) -> dict[tuple[int, str], dict[str, object]]:
    specs = [parse_library_spec(text) for text in libraries]
    targets = [Target(m, p) for m in majors for p in DEFAULT_TARGET_PLATFORMS]
    document = plan_to_dict(plan_targets(sample_catalog(), specs, targets), specs)
    return {(t["cuda"], t["platform"]): t for t in document["targets"]}


def test_plan_cudss_per_target() -> None:
    plans = _plans("cudss")
    linux13 = plans[(13, "manylinux_x86_64")]
    assert linux13["complete"] is True
    main = linux13["libraries"][0]  # type: ignore[index]
    assert (main["distribution"], main["version"], main["folder"], main["file"]) == (
        "nvidia-cudss-cu13",
        "1.0.0.35",
        "nvidia/cu13/lib",
        "libcudss.so.1",
    )
    # cuDSS's wheels are manylinux_2_17, but the cuBLAS wheel it requires is 2_27: the target needs 2_27.
    assert linux13["manylinux"] == "manylinux_2_27_x86_64"
    libraries: list[dict[str, str]] = linux13["libraries"]  # type: ignore[assignment]
    deps = {lib["distribution"] for lib in libraries if lib["dependency_of"]}
    assert deps == {"nvidia-cublas", "nvidia-cuda-nvrtc"}
    windows = plans[(13, "win_amd64")]
    assert windows["libraries"][0]["folder"] == "nvidia/cu13/bin"  # type: ignore[index]
    assert windows["libraries"][0]["file"] == "cudss64_1.dll"  # type: ignore[index]


def test_plan_reports_gaps() -> None:
    plans = _plans("cudss", "cusparse")
    assert plans[(13, "win_amd64")]["missing"] == ["cusparse"]
    assert plans[(13, "manylinux_x86_64")]["missing"] == []
    assert plans[(12, "manylinux_aarch64")]["libraries"][1]["folder"] == "nvidia/cusparse/lib"  # type: ignore[index]


def test_version_spec_filters_releases() -> None:
    plans = _plans("cudss<1", majors=(12,))
    assert plans[(12, "manylinux_x86_64")]["libraries"][0]["file"] == "libcudss.so.0"  # type: ignore[index]


def test_compare_plans_notices_a_closed_gap() -> None:
    specs = [parse_library_spec("cusparse")]
    targets = [Target(13, Platform("win", "amd64"))]
    before = plan_to_dict(plan_targets(sample_catalog(), specs, targets), specs)
    assert compare_plans(before, before) == []
    after = {"targets": [{**before["targets"][0], "missing": []}]}
    assert compare_plans(before, after) == ["CUDA 13 win_amd64: missing was ['cusparse'], now []"]
