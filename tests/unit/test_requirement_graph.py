"""The requirement graph (``slimwheel.requirements``) on a hand-built catalog: one expansion that
check, repair, the targets command and verify all query. Each case names the real metadata that
taught it (cuda-toolkit's extras, cuDSS's unpinned cuBLAS, NVIDIA's major-pinned metapackages)."""

from __future__ import annotations

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from slimwheel.catalog.model import Catalog, CudaMajorSource, Release
from slimwheel.platforms import Platform
from slimwheel.requirements import (
    ReleaseRequirements,
    RequirementGraph,
    brought_in,
    expand_requirements,
    installed_with,
    is_development_extra,
    marker_environment,
    merge_specifiers,
    read_requirements,
)

LINUX = marker_environment(Platform("linux", "x86_64"), "3.12")
WINDOWS = marker_environment(Platform("win", "amd64"), "3.12")


def _release(name: str, version: str, major: int | None, *requires: str) -> Release:
    return Release(name, version, major, CudaMajorSource.NAME_SUFFIX, requires, ())


CATALOG = Catalog(
    (
        # cuda-toolkit: a metapackage whose libraries come only as extras, pinned to its own version
        _release(
            "cuda-toolkit",
            "12.8.1",
            12,
            'nvidia-cublas-cu12==12.8.4.1; extra == "cublas"',
            'nvidia-cuda-runtime-cu12==12.8.90; extra == "cudart"',
        ),
        _release(
            "cuda-toolkit",
            "13.0.2",
            13,
            'nvidia-cublas==13.1.0.3; extra == "cublas"',
            'nvidia-cuda-runtime==13.0.96; extra == "cudart"',
        ),
        _release("nvidia-cublas-cu12", "12.6.4.1", 12),
        _release("nvidia-cublas-cu12", "12.8.4.1", 12),
        _release("nvidia-cublas-cu12", "12.9.1.4", 12),
        _release("nvidia-cublas-cu12", "12.10.0.1rc1", 12),  # a pre-release pip does not pick
        _release("nvidia-cuda-runtime-cu12", "12.8.90", 12),
        _release("nvidia-cublas", "13.1.0.3", 13),
        _release("nvidia-cuda-runtime", "13.0.96", 13),
        # cuDSS for CUDA 12 asks for cuBLAS without an upper bound; 0.7 asked for an older one
        _release("nvidia-cudss-cu12", "0.7.1.6", 12, "nvidia-cublas-cu12<12.8"),
        _release("nvidia-cudss-cu12", "1.0.0.35", 12, "nvidia-cublas-cu12>=12.8"),
        # a requirement only on Windows (NVIDIA's wheels have such markers)
        _release("nvidia-cufft-cu12", "11.3.3.83", 12, 'nvidia-nvjitlink-cu12; sys_platform == "win32"'),
        _release("nvidia-nvjitlink-cu12", "12.8.93", 12),
        # a cycle (cuSOLVER and cuSPARSE each name the other in some releases)
        _release("nvidia-cusolver-cu12", "11.7.3.90", 12, "nvidia-cusparse-cu12"),
        _release("nvidia-cusparse-cu12", "12.5.8.93", 12, "nvidia-cusolver-cu12"),
    ),
    origin="test",
)


def _graph(*lines: str, environment: dict[str, str] = LINUX, major: int | None = None) -> RequirementGraph:
    roots = [("the wheel", Requirement(line)) for line in lines]

    def admits(release: Release) -> bool:
        return not release.parsed_version.is_prerelease and major in (None, release.cuda_major)

    return expand_requirements(CATALOG, roots, environment, admits)


def _reachable(graph: RequirementGraph) -> dict[str, list[str]]:
    return {name: [r.version for r in releases] for name, releases in graph.reachable().items()}


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        # an extra asked for brings its pinned library in; one not asked for does not
        (["cuda-toolkit[cublas]==12.*"], {"cuda-toolkit": ["12.8.1"], "nvidia-cublas-cu12": ["12.8.4.1"]}),
        (["cuda-toolkit==12.*"], {"cuda-toolkit": ["12.8.1"]}),
        # extras of two requirements on one name are both followed
        (
            ["cuda-toolkit[cublas]==13.*", "cuda-toolkit[cudart]"],
            {
                "cuda-toolkit": ["13.0.2"],
                "nvidia-cublas": ["13.1.0.3"],
                "nvidia-cuda-runtime": ["13.0.96"],
            },
        ),
        # every release a range admits is expanded (a union), so both cuDSS's cuBLAS ranges count
        (
            ["nvidia-cudss-cu12"],
            {
                "nvidia-cudss-cu12": ["0.7.1.6", "1.0.0.35"],
                "nvidia-cublas-cu12": ["12.6.4.1", "12.8.4.1", "12.9.1.4"],
            },
        ),
        # ...but a release the package's own requirement rules out is never expanded (0.7's cuBLAS
        # range is not followed), and the package's own range on a transitive name narrows it. It
        # stays a union of ranges: 12.6 is in, as the wheel's own line admits it, though with
        # cuDSS 1.0's >=12.8 pip could not pick it (check covers more than pip can do, never less)
        (
            ["nvidia-cudss-cu12>=1", "nvidia-cublas-cu12<12.9"],
            {"nvidia-cudss-cu12": ["1.0.0.35"], "nvidia-cublas-cu12": ["12.6.4.1", "12.8.4.1"]},
        ),
        (
            ["nvidia-cudss-cu12>=1", "nvidia-cublas-cu12>=12.9"],
            {"nvidia-cudss-cu12": ["1.0.0.35"], "nvidia-cublas-cu12": ["12.9.1.4"]},
        ),
        # markers are evaluated for the target, not for this interpreter
        (["nvidia-cufft-cu12"], {"nvidia-cufft-cu12": ["11.3.3.83"]}),
        # a cycle ends
        (
            ["nvidia-cusolver-cu12"],
            {"nvidia-cusolver-cu12": ["11.7.3.90"], "nvidia-cusparse-cu12": ["12.5.8.93"]},
        ),
        # a distribution the catalog does not know is left to pip
        (["torch>=2", "nvidia-cuda-runtime-cu12"], {"nvidia-cuda-runtime-cu12": ["12.8.90"]}),
    ],
)
def test_reachable_releases(lines: list[str], expected: dict[str, list[str]]) -> None:
    assert _reachable(_graph(*lines)) == expected


def test_the_target_decides_markers_and_the_cuda_major() -> None:
    on_windows = _reachable(_graph("nvidia-cufft-cu12", environment=WINDOWS))
    assert on_windows["nvidia-nvjitlink-cu12"] == ["12.8.93"]
    assert _reachable(_graph("cuda-toolkit[cublas]", major=13)) == {
        "cuda-toolkit": ["13.0.2"],
        "nvidia-cublas": ["13.1.0.3"],
    }


def test_edges_say_who_asked_and_what_was_admitted() -> None:
    graph = _graph("nvidia-cudss-cu12==1.0.0.35", "nvidia-cudss-cu12==1.0.0.35")
    assert [(e.required_by, e.text, e.versions) for e in graph.edges] == [
        ("the wheel", "nvidia-cudss-cu12==1.0.0.35", ("1.0.0.35",)),  # the repeated line is weighed once
        ("nvidia-cudss-cu12 1.0.0.35", "nvidia-cublas-cu12>=12.8", ("12.8.4.1", "12.9.1.4")),
    ]
    extra = _graph("cuda-toolkit[cudart]==12.8.1").edges_to("nvidia-cuda-runtime-cu12")
    assert [e.required_by for e in extra] == ["cuda-toolkit[cudart] 12.8.1"]
    assert not _graph("nvidia-cublas-cu12>=13").edges[0].admitted  # no release: the caller reports it


CUDSS, CUBLAS, TOOLKIT = "nvidia-cudss-cu12", "nvidia-cublas-cu12", "cuda-toolkit"


@pytest.mark.parametrize(
    ("lines", "prefer", "expected", "conflicts"),
    [
        # the newest consistent set, and the lowest: ranges merged across every requirement in force
        ([CUDSS], "newest", {CUDSS: "1.0.0.35", CUBLAS: "12.9.1.4"}, ()),
        ([CUDSS], "lowest", {CUDSS: "0.7.1.6", CUBLAS: "12.6.4.1"}, ()),
        ([CUDSS, f"{CUBLAS}<12.9"], "newest", {CUDSS: "1.0.0.35", CUBLAS: "12.8.4.1"}, ()),
        ([CUDSS, f"{CUBLAS}>=12.7"], "lowest", {CUDSS: "1.0.0.35", CUBLAS: "12.8.4.1"}, ()),
        # an extra's requirement is in force only once the extra is asked for
        ([f"{TOOLKIT}[cublas]==12.*"], "lowest", {TOOLKIT: "12.8.1", CUBLAS: "12.8.4.1"}, ()),
        ([f"{TOOLKIT}==12.*", CUBLAS], "newest", {TOOLKIT: "12.8.1", CUBLAS: "12.9.1.4"}, ()),
        # the pin cuda-toolkit's extra makes contradicts the package's own range: a conflict, named
        ([f"{TOOLKIT}[cublas]==12.8.1", f"{CUBLAS}>=12.9"], "newest", {TOOLKIT: "12.8.1"}, (CUBLAS,)),
    ],
)
def test_select(lines: list[str], prefer: str, expected: dict[str, str], conflicts: tuple[str, ...]) -> None:
    selection = _graph(*lines).select("newest" if prefer == "newest" else "lowest")
    assert {name: release.version for name, release in selection.chosen.items()} == expected
    assert selection.conflicts == conflicts
    for name in conflicts:
        asked = {edge.required_by for edge in selection.constraints[name]}
        assert asked == {"the wheel", f"{TOOLKIT}[cublas] 12.8.1"}


def test_select_honours_a_further_filter() -> None:
    """The targets command picks only releases with a wheel for the platform."""
    selection = _graph("nvidia-cudss-cu12").select("newest", usable=lambda r: r.version != "12.9.1.4")
    assert selection.chosen["nvidia-cublas-cu12"].version == "12.8.4.1"


def test_installed_with_follows_extras_and_the_wheels_references_to_its_own() -> None:
    """nvmath-python's extra cu12 names nvmath-python[sysctk12]: pip installs that extra's lines too."""
    lines = [
        "numpy",
        'cutensor-cu12<3; extra == "sysctk12"',
        'nvmath-python[sysctk12]; extra == "cu12"',
        'nvidia-cublas-cu12; extra == "cu12"',
        'nvidia-cublas; extra == "cu13"',
        'pywin32; platform_system == "Windows"',
    ]
    existing = read_requirements(lines, marker_environment(Platform("linux", "x86_64"), "3.11"))

    def names(extras: tuple[str, ...]) -> list[str]:
        return [w.name for w in installed_with(existing, "NVMath_Python", extras)]

    assert names(()) == ["numpy"]
    assert names(("cu12",)) == ["numpy", "nvidia-cublas-cu12", "cutensor-cu12"]
    assert names(("CU13",)) == ["numpy", "nvidia-cublas"]
    assert names(("sysctk12",)) == ["numpy", "cutensor-cu12"]


@pytest.mark.parametrize("environment", [LINUX, WINDOWS], ids=["linux", "windows"])
def test_release_requirements_answer_as_brought_in_each_time(environment: dict[str, str]) -> None:
    """Lines read once, verdicts kept by marker: the same answers as reading each line anew, for
    every release, plainly and with each extra its markers name, asked twice."""
    reader = ReleaseRequirements(environment)
    for _ in range(2):
        for release in CATALOG.releases:
            for extra in ("", "cublas", "cudart", "nvjitlink"):
                expected = [str(r) for r in brought_in(release.requires_dist, environment, extra)]
                assert [str(r) for r in reader.of(release, extra)] == expected
    toolkit = CATALOG.release("cuda-toolkit", "12.8.1")
    assert toolkit is not None
    cublas = [str(r) for r in reader.of(toolkit, "cublas")]
    assert cublas == ['nvidia-cublas-cu12==12.8.4.1; extra == "cublas"']
    assert reader.of(toolkit) == ()


def test_a_reader_for_another_environment_is_refused() -> None:
    roots = [("the wheel", Requirement("nvidia-cudss-cu12"))]
    with pytest.raises(ValueError, match="another marker environment"):
        expand_requirements(CATALOG, roots, LINUX, brought=ReleaseRequirements(WINDOWS))
    shared = ReleaseRequirements(LINUX)
    alone = expand_requirements(CATALOG, roots, LINUX)
    assert expand_requirements(CATALOG, roots, LINUX, brought=shared) == alone


def test_release_requirements_read_urls_and_bad_lines_as_brought_in() -> None:
    """A URL's ``;`` is not a marker's; a line pip refuses brings nothing; the markers decide alone."""
    odd = _release(
        "odd-meta",
        "1.0",
        12,
        "nvidia-cublas-cu12 @ https://files.example/cublas;build=1.whl ; extra == 'cublas'",
        'nvidia-cuda-runtime-cu12 @ https://files.example/cudart.whl ; python_version >= "3.0"',
        "nvidia-nvjitlink-cu12 ; extra == ",  # refused by pip
        'nvidia-curand-cu12; platform_machine == "x86_64" and extra == "curand"',
        "nvidia-cufft-cu12 (>=11)",
    )
    reader = ReleaseRequirements(LINUX)
    for extra in ("", "cublas", "curand"):
        expected = [str(r) for r in brought_in(odd.requires_dist, LINUX, extra)]
        assert [str(r) for r in reader.of(odd, extra)] == expected
    assert [r.name for r in reader.of(odd)] == ["nvidia-cuda-runtime-cu12", "nvidia-cufft-cu12"]
    assert [r.name for r in reader.of(odd, "cublas")] == ["nvidia-cublas-cu12"]
    assert [r.name for r in reader.of(odd, "curand")] == ["nvidia-curand-cu12"]


@pytest.mark.parametrize(
    ("ours", "authors", "merged"),
    [
        # ONNX Runtime's 'nvidia-cuda-runtime~=13.0; extra == "cuda"', made hard: written once.
        ((">=13.0", "<14"), "~=13.0", "~=13.0"),
        ((">=13.0.48", "<14"), "~=13.0", ">=13.0.48,~=13.0"),
        ((">=9.0.0.312", "<10"), ">=9.8", ">=9.8,<10"),
        ((">=9.8", "<10"), ">=9.8", ">=9.8,<10"),
        ((">=12.0.1", "<13"), "==12.4.*", "==12.4.*"),
        ((">=12.0.1", "<13"), "~=12.4.1", "~=12.4.1"),
        ((">=12.0.1", "<13"), "==12.6.77", "==12.6.77"),
        ((">=12.6", "<13"), ">12.6", ">12.6,<13"),
        ((">=12.6", "<13"), "<=13", ">=12.6,<13,<=13"),  # 13 itself: the author's allows it, ours not
        ((">=12.6", "<13"), "<13", ">=12.6,<13"),
        ((">=12.6", "<13"), "!=12.7", ">=12.6,!=12.7,<13"),
        (("==12.6.77",), ">=12", "==12.6.77"),
        ((">=12.6", "<13"), ">=12,<12.9,!=12.7", ">=12.6,!=12.7,<12.9"),
        # A release left out (cutensor-cu12 2.8.0): kept unless the author's range cannot reach it.
        ((">=2.0.0", "!=2.8.0", "<3"), "", ">=2.0.0,!=2.8.0,<3"),
        ((">=2.0.0", "!=2.8.0", "<3"), "!=2.8.0", ">=2.0.0,!=2.8.0,<3"),
        ((">=2.0.0", "!=2.8.0", "<3"), "<2.8", ">=2.0.0,<2.8"),
        ((">=2.0.0", "!=2.8.0", "<3"), "<=2.8.0", ">=2.0.0,!=2.8.0,<=2.8.0"),
        ((">=2.0.0", "!=2.8.0", "<3"), ">=2.8.1", ">=2.8.1,<3"),
        ((">=2.0.0", "!=2.8.0", "<3"), "~=2.7.0", "~=2.7.0"),
        (("==12.6.77",), "==12.6.77", "==12.6.77"),
        ((">=12.6", "<13"), "", ">=12.6,<13"),
    ],
)
def test_merge_specifiers_leaves_out_what_the_authors_range_implies(
    ours: tuple[str, ...], authors: str, merged: str
) -> None:
    result = merge_specifiers(ours, SpecifierSet(authors))
    assert ",".join(result) == merged
    # The same versions either way.
    for version in (
        "11.8",
        "12.0.1",
        "12.4.1",
        "12.6",
        "12.6.77",
        "12.7",
        "12.9",
        "13",
        "13.0.48",
        "13.5",
        "14",
        "2.0.0",
        "2.7.9",
        "2.8.0",
        "2.8.1",
        "3",
    ):
        naive = SpecifierSet(",".join((*ours, *(str(s) for s in SpecifierSet(authors)))))
        assert SpecifierSet(",".join(result)).contains(version) is naive.contains(version), version


@pytest.mark.parametrize(
    ("extra", "development"),
    [
        ("test", True),
        ("Tests", True),
        ("testing", True),
        ("dev", True),
        ("dev-tools", True),
        ("docs", True),
        ("lint", True),
        ("benchmarks", True),
        ("rapids", False),
        ("all", False),
        ("cuda", False),
        ("ctk", False),
        ("gpu", False),
        ("contest", False),
        ("devices", False),
    ],
)
def test_an_extra_for_developers_is_known_by_its_name_or_its_first_word(
    extra: str, development: bool
) -> None:
    """cuvs-cu13 brings cupy-cuda13x[ctk] with 'test' only: what such an extra brings says nothing of
    where the package's users get their libraries."""
    assert is_development_extra(extra) is development
