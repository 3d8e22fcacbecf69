"""A copy of the NVIDIA driver's libraries that auditwheel grafted into a wheel.

gwatch-cu128 0.0.3 ships ``gwatch_cu128.libs/libcuda-f27223c5.so.580.95.05`` and
``libnvidia-ml-9933cfe9.so.580.95.05``: auditwheel, not told ``--exclude libcuda.so.1``, grafted the
build machine's driver, which works with no kernel module but its own version's. repair kept them (an
error it did not fix); with ``--force`` it dropped them and left the consumers needing
``libcuda-f27223c5.so.580.95.05``, a name no host has, and check called that the driver's and passed.

The libraries are built by gcc; the repaired wheel is installed and loaded by ``slimwheel verify``
(a stand-in answers ``libcuda.so.1`` on a machine without the driver).
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from slimwheel.analysis import Severity
from slimwheel.catalog.model import Catalog
from slimwheel.check import CheckKind, check_wheel
from slimwheel.cli import main
from slimwheel.elf import read_elf_file
from slimwheel.wheel import Wheel
from tests.support.elfbuild import compile_shared, find_tool
from tests.support.wheels import make_wheel

pytestmark = pytest.mark.skipif(find_tool("gcc") is None, reason="needs gcc")

TAG = "py3-none-manylinux_2_17_x86_64"
CUDA_COPY = "libcuda-f27223c5.so.580.95.05"
NVML_COPY = "libnvidia-ml-9933cfe9.so.580.95.05"


@pytest.fixture(scope="module")
def grafted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """``watch/libwatch.so``, which calls cuInit and nvmlInit_v2 from the copies auditwheel grafted
    (sonames rewritten to their file names) in ``watch.libs``, through RPATH ``$ORIGIN/../watch.libs``."""
    out = tmp_path_factory.mktemp("grafted")
    cuda = compile_shared(
        out / CUDA_COPY,
        {"cuda.c": "int cuInit(unsigned int flags) { return (int)flags; }\n"},
        soname=CUDA_COPY,
    )
    nvml = compile_shared(
        out / NVML_COPY, {"nvml.c": "int nvmlInit_v2(void) { return 0; }\n"}, soname=NVML_COPY
    )
    watch = compile_shared(
        out / "libwatch.so",
        {
            "watch.c": "int cuInit(unsigned int);\nint nvmlInit_v2(void);\n"
            "int watch(void) { return cuInit(0) + nvmlInit_v2(); }\n"
        },
        link=[cuda, nvml],
        rpath="$ORIGIN/../watch.libs",
    )
    return {
        "watch/__init__.py": b"",
        "watch/libwatch.so": watch.read_bytes(),
        f"watch.libs/{CUDA_COPY}": cuda.read_bytes(),
        f"watch.libs/{NVML_COPY}": nvml.read_bytes(),
    }


def _repair(
    wheel: Path, out: Path, catalog: Path, capsys: pytest.CaptureFixture[str], *extra: str
) -> dict[str, Any]:
    argv = ["repair", str(wheel), "-w", str(out), "--catalog", str(catalog), "--cuda", "13", "--json", *extra]
    code = main([*argv, "--isolated-environment"])
    result: dict[str, Any] = json.loads(capsys.readouterr().out)["wheels"][0]
    assert code == 0, result
    return result


def test_a_grafted_driver_is_dropped_and_its_consumers_need_the_hosts_soname(
    grafted: dict[str, bytes], own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "in").mkdir()
    wheel = make_wheel(tmp_path / "in", "watch", "1.0", grafted, tag=TAG)
    result = _repair(wheel, tmp_path / "out", own_catalog, capsys)
    output = Path(result["output"])
    with zipfile.ZipFile(output) as archive:
        names = set(archive.namelist())
        consumer = archive.read("watch/libwatch.so")
    assert f"watch.libs/{CUDA_COPY}" not in names
    assert f"watch.libs/{NVML_COPY}" not in names
    (tmp_path / "libwatch.so").write_bytes(consumer)
    needed = set(read_elf_file(tmp_path / "libwatch.so").needed)
    assert needed >= {"libcuda.so.1", "libnvidia-ml.so.1"}
    assert not {CUDA_COPY, NVML_COPY} & needed
    assert any("a copy of the NVIDIA driver's library, dropped" in w for w in result["plan"]["warnings"])
    assert result["check"]["errors"] == 0

    # Loaded for real: the consumer now finds libcuda.so.1 and libnvidia-ml.so.1, which a machine
    # without the driver gets from verify's stand-ins.
    empty = tmp_path / "links"
    empty.mkdir()
    code = main(["verify", str(output), "--find-links", str(empty), "--catalog", str(own_catalog), "--json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 0, document
    assert [(load["member"], load["status"]) for load in document["loads"]] == [("watch/libwatch.so", "ok")]


def test_the_package_naming_the_copy_keeps_it_unless_forced(
    grafted: dict[str, bytes], own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Code that names the copy may load it by path: kept (and check's error stays), as for a vendored
    NVIDIA copy; --force drops it."""
    files = {**grafted, "watch/_paths.py": f'DRIVER = "{CUDA_COPY}"\n'.encode()}
    (tmp_path / "in").mkdir()
    wheel = make_wheel(tmp_path / "in", "watch", "1.0", files, tag=TAG)
    argv = ["repair", str(wheel), "-w", str(tmp_path / "out"), "--catalog", str(own_catalog), "--cuda", "13"]
    assert main([*argv, "--isolated-environment", "--dry-run", "--json"]) == 1
    (planned,) = json.loads(capsys.readouterr().out)["wheels"]
    assert any(
        CUDA_COPY in line and "kept; --force drops it" in line for line in planned["plan"]["left_alone"]
    )
    forced = _repair(wheel, tmp_path / "forced", own_catalog, capsys, "--force")
    with zipfile.ZipFile(forced["output"]) as archive:
        assert f"watch.libs/{CUDA_COPY}" not in archive.namelist()


def test_a_needed_entry_of_a_grafted_drivers_name_is_not_the_hosts(
    grafted: dict[str, bytes], provider_catalog: Catalog, tmp_path: Path
) -> None:
    """Without its copy, ``libcuda-f27223c5.so.580.95.05`` is found nowhere: no host's driver installs
    a file of that name. check called it the driver's and passed what ``--force`` wrote."""
    files = {name: data for name, data in grafted.items() if not name.startswith("watch.libs/")}
    wheel = make_wheel(tmp_path, "watch", "1.0", files, tag=TAG)
    with Wheel.open(wheel) as opened:
        report = check_wheel(opened, provider_catalog)
    missed = {
        f.soname for f in report.findings if f.kind is CheckKind.UNRESOLVED and f.severity is Severity.ERROR
    }
    assert missed == {CUDA_COPY, NVML_COPY}
