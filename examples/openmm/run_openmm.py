"""Run OpenMM on each GPU platform it can load, and say which NVIDIA libraries it mapped from where.

Used by examples/openmm/README.md, once with the published openmm and openmm-cuda-13 wheels and once
with the ones `slimwheel repair` wrote. For each of CUDA and OpenCL: the PME energy of one periodic
system of 2,197 charged particles against the Reference (CPU) platform's, then 500 Langevin steps;
the plugin libraries OpenMM could not load, with the loader's reason; and each NVIDIA library file
the process mapped (cuFFT and NVRTC for the CUDA platform, the OpenCL ICD loader for OpenCL).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import openmm as mm  # type: ignore[import-not-found]
from openmm import unit

SIDE = 13  # particles per box edge
SPACING = 0.3  # nm
WATCHED = ("libcufft", "libnvrtc", "libOpenCL", "libcudart", "libOpenMMCUDA", "libOpenMMOpenCL")


def build_system() -> tuple[mm.System, list[mm.Vec3]]:
    box = SIDE * SPACING
    system = mm.System()
    system.setDefaultPeriodicBoxVectors(mm.Vec3(box, 0, 0), mm.Vec3(0, box, 0), mm.Vec3(0, 0, box))
    force = mm.NonbondedForce()
    force.setNonbondedMethod(mm.NonbondedForce.PME)  # reciprocal space through cuFFT on CUDA
    force.setCutoffDistance(1.0)
    positions = []
    for i in range(SIDE):
        for j in range(SIDE):
            for k in range(SIDE):
                system.addParticle(39.9)
                charge = 0.5 if (i + j + k) % 2 else -0.5
                force.addParticle(charge, 0.3, 0.5)
                positions.append(mm.Vec3(i * SPACING, j * SPACING, k * SPACING))
    system.addForce(force)
    return system, positions


def energy_and_steps(system: mm.System, positions: list[mm.Vec3], platform_name: str) -> tuple[float, float]:
    integrator = mm.LangevinMiddleIntegrator(300 * unit.kelvin, 1 / unit.picosecond, 0.002 * unit.picoseconds)
    integrator.setRandomNumberSeed(1)
    context = mm.Context(system, integrator, mm.Platform.getPlatformByName(platform_name))
    context.setPositions(positions)
    start = context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)
    if platform_name == "Reference":
        return start, float("nan")
    integrator.step(500)
    end = context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)
    return start, end


def mapped_libraries() -> list[str]:
    files = {line.split()[-1] for line in Path("/proc/self/maps").read_text().splitlines() if "/" in line}
    return sorted(f for f in files if any(name in Path(f).name for name in WATCHED))


def ldd_lines(library: Path) -> list[str]:
    if not library.exists():
        return [f"{library}: not installed"]
    out = subprocess.run(["ldd", str(library)], capture_output=True, text=True, check=False).stdout
    return [line.strip() for line in out.splitlines() if any(name in line for name in WATCHED)]


def say(*lines: str) -> None:
    sys.stdout.write("\n".join(lines) + "\n")


def main() -> int:
    plugins = Path(mm.version.openmm_library_path) / "plugins"
    say(f"openmm {mm.__version__} from {Path(mm.__file__).parent}")
    names = [mm.Platform.getPlatform(i).getName() for i in range(mm.Platform.getNumPlatforms())]
    say(f"platforms: {', '.join(names)}")
    for failure in mm.Platform.getPluginLoadFailures():
        say(f"plugin load failure: {failure}")
    for name in ("libOpenMMCUDA.so", "libOpenMMAmoebaCUDA.so", "libOpenMMOpenCL.so"):
        say(f"ldd {name}:", *(f"  {line}" for line in ldd_lines(plugins / name)))
    system, positions = build_system()
    reference, _ = energy_and_steps(system, positions, "Reference")
    say(f"Reference: PME energy {reference:.3f} kJ/mol")
    failed = 0
    for platform_name in ("CUDA", "OpenCL"):
        try:
            start, end = energy_and_steps(system, positions, platform_name)
        except Exception as error:  # noqa: BLE001 - OpenMM's C++ errors come as OpenMMException or Exception
            say(f"{platform_name}: FAILED: {error}")
            failed += 1
            continue
        relative = abs(start - reference) / abs(reference)
        say(
            f"{platform_name}: PME energy {start:.3f} kJ/mol (relative difference to Reference "
            f"{relative:.1e}), after 500 steps {end:.3f}"
        )
        failed += relative > 1e-3
    say("mapped:", *(f"  {path}" for path in mapped_libraries()))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
