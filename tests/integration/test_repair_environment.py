"""plan_repair is pure on a snapshot of the build environment: the linked version and the providers'
own needs come from plain data gathered once, and the same snapshot gives the same plan."""

from __future__ import annotations

from pathlib import Path

from slimwheel.analysis import analyse_wheel
from slimwheel.catalog.store import read_catalog
from slimwheel.repair import RepairOptions, RepairPlan, plan_repair
from slimwheel.repair.environment import BuildEnvironment, EnvironmentFacts
from slimwheel.wheel import Wheel
from tests.support.fixtures_elf import ElfZoo
from tests.support.solver import fat_solver_wheel


def test_the_plan_reads_the_environment_only_through_its_snapshot(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path
) -> None:
    catalog = read_catalog(own_catalog)
    fat = fat_solver_wheel(tmp_path / "fat", elf_zoo, "auditwheel")
    # A site-packages with cuDSS 1.0.0.35 installed the way pip lays it out.
    site = tmp_path / "site"
    lib = site / "nvidia" / "cu13" / "lib"
    lib.mkdir(parents=True)
    (lib / "libcudss.so.1").write_bytes(elf_zoo.libcudss.read_bytes())
    info = site / "nvidia_cudss_cu13-1.0.0.35.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: nvidia-cudss-cu13\nVersion: 1.0.0.35\n")
    environment = BuildEnvironment.of([str(site)], "the test site")
    facts = environment.snapshot(provider.library.path for provider in catalog.iter_libraries())
    assert isinstance(facts, EnvironmentFacts)
    assert facts.installed_version("nvidia-cudss-cu13") == "1.0.0.35"
    assert facts.needed_by_file("nvidia/cu13/lib/libcudss.so.1") == tuple(
        BuildEnvironment.of([str(site)], "again").needed_by_file("nvidia/cu13/lib/libcudss.so.1") or ()
    )
    with Wheel.open(fat) as wheel:
        report = analyse_wheel(wheel, catalog)
        requires, dist_info = wheel.requires_dist(), wheel.dist_info
    options = RepairOptions(cuda_major=13)

    def plan() -> object:
        return plan_repair(
            report, catalog, requires_dist=requires, dist_info=dist_info, options=options, environment=facts
        )

    planned = plan()
    # The file system is gone: the snapshot alone gives the same plan.
    (lib / "libcudss.so.1").unlink()
    assert plan() == planned
    assert isinstance(planned, RepairPlan)
    (cudss,) = [r for r in planned.requirements if r.distribution == "nvidia-cudss-cu13"]
    assert (cudss.linked_version, cudss.version_source) == ("1.0.0.35", "installed (the test site)")
    assert not any("not installed here" in w for w in planned.warnings if w.startswith("cudss"))
