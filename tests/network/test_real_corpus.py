"""Real published wheels that vendor, link or load NVIDIA libraries, repaired as they are.

The corpus (tests/support/corpus.py) pins each file by name and sha256; it is downloaded once through
slimwheel's index client (the index resolved the way pip resolves it) into slimwheel's cache, where
later runs find it without a request (about 1.4 GiB in all, most of it vllm, transformer-engine-cu13,
onnxruntime-gpu and the cupy wheels).

For each wheel, ``slimwheel repair WHEEL -w OUT --json`` runs in-process, and one of two outcomes is
accepted:

* it refuses: exit 1 or 2, a reason on stderr, nothing written into OUT;
* it repairs: exit 0, one wheel in OUT, and ``slimwheel check`` on that wheel exits 0.

Wheels marked ``must_repair`` (they vendor only what NVIDIA's wheels provide) must be repaired.

A repaired wheel must also still reach, through each file's RPATH/RUNPATH, every folder inside
site-packages its input reached, unless it is a folder of the wheel left without libraries, or an
``nvidia/`` folder where the file now reaches NVIDIA's wheels through folders repair chose. check
cannot see this (libraries loaded with dlopen are in no DT_NEEDED), yet losing them breaks the wheel.

Then ``slimwheel verify`` installs each repaired wheel into a fresh venv with its real dependencies
from the real index (pip's own configuration and cache) and imports it. That test is also marked
``install`` (deselect with ``-m 'not install'``) and is skipped for wheels whose install downloads more
than ``VERIFY_LIMIT_MB`` (torch and its CUDA wheels, cupy's eight NVIDIA wheels).
"""

from __future__ import annotations

import contextlib
import io
import json
import posixpath
import re
import subprocess
import sys
import tempfile
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from packaging.utils import canonicalize_name

from slimwheel.cli import main
from slimwheel.elf import ELF_MAGIC, read_elf
from slimwheel.wheel import Wheel
from tests.support.corpus import CORPUS, VERIFY_LIMIT_MB, CorpusWheel, fetch

pytestmark = [pytest.mark.network, pytest.mark.slow]


@dataclass(frozen=True)
class RepairOutcome:
    entry: CorpusWheel
    source: Path
    out_dir: Path
    code: int | None  # None when main raised
    stdout: str
    stderr: str
    crash: str | None  # the traceback, when main raised (it must never)

    @property
    def document(self) -> dict[str, Any] | None:
        try:
            parsed: dict[str, Any] = json.loads(self.stdout)
        except ValueError:
            return None
        return parsed

    @property
    def written(self) -> list[Path]:
        return sorted(self.out_dir.iterdir()) if self.out_dir.exists() else []

    def describe(self, lines: int = 20) -> str:
        said = self.stderr.splitlines()
        more = [f"... {len(said) - lines} more lines"] if len(said) > lines else []
        return "\n".join(
            [f"{self.entry.filename} ({self.entry.vendors}): repair exited {self.code}", *said[:lines], *more]
        )


def _run_main(argv: list[str]) -> tuple[int | None, str, str, str | None]:
    """``main(argv)`` in this process, its stdout and stderr captured (usable outside a test function,
    where capsys is not)."""
    out, err = io.StringIO(), io.StringIO()
    code: int | None = None
    crash = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except Exception:  # noqa: BLE001 - reported by the test, with the traceback
            crash = traceback.format_exc()
    return code, out.getvalue(), err.getvalue(), crash


@pytest.fixture(scope="module", params=CORPUS, ids=lambda entry: entry.id)
def repaired(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> RepairOutcome:
    entry: CorpusWheel = request.param
    source = fetch(entry)
    before = (source.stat().st_size, source.stat().st_mtime_ns)
    out_dir = tmp_path_factory.mktemp(entry.id) / "wheelhouse"
    code, stdout, stderr, crash = _run_main(
        ["repair", str(source), "-w", str(out_dir), "--json", *entry.options, *entry.repair_options]
    )
    assert (source.stat().st_size, source.stat().st_mtime_ns) == before, "repair modified its input"
    return RepairOutcome(entry, source, out_dir, code, stdout, stderr, crash)


def test_repair_refuses_cleanly_or_passes_check(repaired: RepairOutcome) -> None:
    assert repaired.crash is None, f"{repaired.entry.filename}: repair raised\n{repaired.crash}"
    assert repaired.code in (0, 1, 2), repaired.describe()
    if repaired.entry.must_repair:
        assert repaired.code == 0, repaired.describe()
    if repaired.entry.cuda_major is not None:
        # A refusal after planning (exit 1) still prints the plan; a usage error (exit 2) prints none.
        planned = [
            w["plan"]["cuda_major"] for w in (repaired.document or {}).get("wheels", []) if "plan" in w
        ]
        assert planned == [repaired.entry.cuda_major], repaired.describe()
    if repaired.entry.kept_optional is not None:  # a refusal after planning prints the plan too
        kept = [
            line.split(":")[0]
            for w in (repaired.document or {}).get("wheels", [])
            if "plan" in w
            for line in w["plan"]["kept_optional"]
        ]
        assert kept == list(repaired.entry.kept_optional), repaired.describe()
    if repaired.entry.drops is not None:  # a refusal after planning prints the plan too
        dropped = [len(w["plan"]["drop"]) for w in (repaired.document or {}).get("wheels", []) if "plan" in w]
        assert dropped == [repaired.entry.drops], repaired.describe()
    if repaired.code != 0:
        assert repaired.stderr.strip(), f"{repaired.entry.filename}: exit {repaired.code} without a reason"
        assert "Traceback" not in repaired.stderr, repaired.describe()
        assert repaired.written == [], (
            f"{repaired.describe()}\nexited {repaired.code} but wrote {[p.name for p in repaired.written]}"
        )
        return

    document = repaired.document
    assert document is not None, f"repair --json printed no JSON document:\n{repaired.stdout[:2000]}"
    assert document["schema"] == "slimwheel.repair/1"
    (result,) = document["wheels"]
    output = Path(result["output"])
    assert repaired.written == [output], (repaired.written, output)
    assert result["size_after"] == output.stat().st_size
    if repaired.entry.adds is not None:
        added = [requirement["distribution"] for requirement in result["plan"]["requirements"]]
        assert added == list(repaired.entry.adds), repaired.describe()
    for requirement in result["plan"]["requirements"]:  # an extra --optional asked for, or none
        if requirement["distribution"] in (repaired.entry.kept_optional or ()):
            assert requirement["extra"], repaired.describe()
            assert f'extra == "{requirement["extra"]}"' in requirement["requirement"], repaired.describe()
        else:
            assert not requirement["extra"], repaired.describe()
    if repaired.entry.edits is not None:
        edited = [edit["path"] for edit in result["plan"]["edits"]]
        assert edited == list(repaired.entry.edits), repaired.describe()
    linked = {r["distribution"]: r["linked_version"] for r in result["plan"]["requirements"]}
    for distribution, floor in repaired.entry.floors:
        assert linked.get(distribution) == floor, repaired.describe()
    # Repair only takes away or edits a few bytes: re-deflating what it edited must not grow the wheel
    # (ISA-L's fast level alone made xformers 14%, spconv 19% bigger). 1% plus the new metadata.
    assert result["size_after"] <= result["size_before"] * 1.01 + (64 << 10), (
        f"{repaired.entry.filename}: {result['size_before']} -> {result['size_after']} bytes"
    )
    if repaired.entry.max_growth is not None:
        assert result["size_after"] - result["size_before"] <= repaired.entry.max_growth, (
            f"{repaired.entry.filename}: {result['size_before']} -> {result['size_after']} bytes"
        )

    # With no flags: the manifest records what repair counted on (--preloaded, --exclude, kept copies),
    # and check counts on it too, so the wheel written passes check as it is.
    code, stdout, stderr, crash = _run_main(["check", str(output), "--json"])
    assert crash is None, f"check raised\n{crash}"
    errors = [
        f"{finding['kind']} {finding['path']}: {finding['message']}"
        for report in json.loads(stdout)["wheels"]
        for finding in report["findings"]
        if finding["severity"] == "error"
    ]
    assert code == 0, (
        f"{repaired.entry.filename} ({repaired.entry.vendors}): repair exited 0 but check (no flags) on "
        f"its output exited {code}:\n" + "\n".join(errors) + stderr
    )


def _pip_resolves(wheel: str) -> set[str]:
    """The distributions ``pip install WHEEL`` would install into an empty environment (pip's own
    resolver against the index pip is configured for; ``--dry-run``: nothing is installed)."""
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.json"
        command = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        command += ["--dry-run", "--ignore-installed", "--only-binary=:all:", "--report", str(report), wheel]
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        return {
            canonicalize_name(item["metadata"]["name"]) for item in json.loads(report.read_text())["install"]
        }


def test_what_a_plain_install_brings_leaves_the_extras_out(repaired: RepairOutcome) -> None:
    """pip itself must agree that a plain install of the repaired wheel installs none of the providers
    left (or put, with --optional) behind an extra, and that the extras --optional added bring theirs."""
    gated = set(repaired.entry.kept_optional or ())
    if repaired.code != 0 or not gated:
        pytest.skip("no provider behind an extra")
    if repaired.entry.no_resolve:
        pytest.skip(repaired.entry.no_resolve)
    (output,) = repaired.written
    plain = _pip_resolves(str(output))
    assert canonicalize_name(repaired.entry.project) in plain
    assert not plain & gated, sorted(plain & gated)
    document = repaired.document or {}
    behind = [
        (r["extra"], r["distribution"])
        for w in document.get("wheels", [])
        for r in w["plan"]["requirements"]
        if r["extra"]
    ]
    if behind:
        with_extras = _pip_resolves(f"{output}[{','.join(sorted({extra for extra, _ in behind}))}]")
        assert {distribution for _, distribution in behind} <= with_extras, sorted(with_extras)


@pytest.mark.install
def test_repaired_wheel_verifies(repaired: RepairOutcome) -> None:
    if repaired.code != 0 or len(repaired.written) != 1:
        pytest.skip(f"repair exited {repaired.code}, wrote {len(repaired.written)} files: nothing to install")
    if repaired.entry.no_verify:
        pytest.skip(repaired.entry.no_verify)
    if repaired.entry.install_mb > VERIFY_LIMIT_MB:
        pytest.skip(
            f"installing it downloads about {repaired.entry.install_mb} MB (over {VERIFY_LIMIT_MB} MB)"
        )
    (output,) = repaired.written
    imports = [argument for name in repaired.entry.verify_imports for argument in ("--import", name)]
    against = ["--against", str(repaired.source)] if repaired.entry.verify_against else []
    code, stdout, stderr, crash = _run_main(["verify", str(output), "--json", *imports, *against])
    assert crash is None, f"verify raised\n{crash}"
    document: dict[str, Any] = json.loads(stdout)
    assert code == 0, (
        f"{repaired.entry.filename}: verify exited {code}\n"
        + json.dumps(document["against"]["new"] if against else document.get("problems"), indent=1)
        + f"\nimports: {json.dumps(document.get('imports'))[:3000]}\n{stderr}"
    )
    if against:
        # It fails alone, as the published wheel does: else the entry's reason is stale.
        assert document["against"]["shared"], f"nothing fails alone: {repaired.entry.verify_against}"
        return
    assert all(library["ok"] for library in document["libraries"]), document["libraries"]
    # Stand-ins take the driver's place here: every NVIDIA library the files need is judged.
    assert document["unjudged"] == [], document["unjudged"]


def _search_folders(wheel_path: Path) -> tuple[dict[str, set[str]], set[str]]:
    """Per ELF member, the folders inside site-packages its ``$ORIGIN`` RPATH/RUNPATH entries reach;
    and the folders that hold ELF files."""
    reached: dict[str, set[str]] = {}
    with Wheel.open(wheel_path) as wheel:
        for member in wheel.members:
            if member.is_dir or ".so" not in posixpath.basename(member.name):
                continue
            with wheel.seekable_member(member.name) as stream:
                if stream.read(4) != ELF_MAGIC:
                    continue
                stream.seek(0)
                facts = read_elf(stream, path=member.name, symbols=False)
            folders = set()
            for entry in (*facts.rpath, *facts.runpath):
                for origin in ("$ORIGIN", "${ORIGIN}"):
                    if entry == origin or entry.startswith(origin + "/"):
                        relative = entry[len(origin) :].lstrip("/")
                        folder = posixpath.normpath(posixpath.join(posixpath.dirname(member.name), relative))
                        if folder != ".." and not folder.startswith("../"):
                            folders.add(folder)
            reached[member.name] = folders
    return reached, {posixpath.dirname(name) for name in reached}


def _parents(folder: str) -> list[str]:
    """``a/b/c`` -> ``a/b``, ``a``."""
    found = []
    while "/" in folder:
        folder = posixpath.dirname(folder)
        found.append(folder)
    return found


def test_repair_keeps_the_folders_its_input_reached(repaired: RepairOutcome) -> None:
    if repaired.code != 0 or len(repaired.written) != 1:
        pytest.skip(f"repair exited {repaired.code} and wrote {len(repaired.written)} files")
    (output,) = repaired.written
    before, input_folders = _search_folders(repaired.source)
    after, library_folders = _search_folders(output)
    # A folder above the wheel's ELF files may hold another distribution's (openmm-cuda-13's plugins
    # reach OpenMM.libs/lib, where openmm installs libOpenMM.so): it must stay reached.
    above = {parent for folder in input_folders for parent in _parents(folder)}
    lost = []
    for member, folders in sorted(after.items()):
        now_nvidia = any(folder.startswith("nvidia/") for folder in folders)
        for folder in sorted(before.get(member, set()) - folders):
            emptied = (
                not folder.startswith("nvidia/") and folder not in library_folders and folder not in above
            )
            if emptied or (folder.startswith("nvidia/") and now_nvidia):
                continue
            lost.append(f"{member}: no longer reaches {folder}/ (now: {sorted(folders) or 'nothing'})")
    assert lost == [], f"{repaired.entry.filename} ({repaired.entry.vendors}):\n" + "\n".join(lost)


NVRTC_PROBE = r"""
import ctypes, json
import cumm.core_cc  # the repaired extension: its NVIDIA libraries come through its RPATH

def mapped(name):
    with open("/proc/self/maps") as maps:
        return sorted({line.split()[-1] for line in maps if name in line and "/" in line})

nvrtc = ctypes.CDLL(mapped("libnvrtc.so")[0])
program = ctypes.c_void_p()
source = b'extern "C" __global__ void add_one(float *x) { x[threadIdx.x] += 1.0f; }'
created = nvrtc.nvrtcCreateProgram(ctypes.byref(program), source, b"add_one.cu", 0, None, None)
options = (ctypes.c_char_p * 1)(b"--gpu-architecture=compute_80")
compiled = nvrtc.nvrtcCompileProgram(program, 1, options)
size = ctypes.c_size_t()
nvrtc.nvrtcGetPTXSize(program, ctypes.byref(size))
ptx = ctypes.create_string_buffer(size.value)
nvrtc.nvrtcGetPTX(program, ptx)
print(json.dumps({
    "created": created, "compiled": compiled, "ptx": ptx.value.decode(errors="replace"),
    "nvrtc": mapped("libnvrtc.so"), "builtins": mapped("libnvrtc-builtins"),
}))
"""


@pytest.mark.install
@pytest.mark.parametrize(
    ("project", "requirement", "major"),
    [
        ("cumm-cu126", "nvidia-cuda-nvrtc-cu12>=12.6.85,<13;", 12),
        ("cumm-cu116", "nvidia-cuda-nvrtc-cu11>=11.7.99,<12;", 11),
    ],
)
def test_nvrtc_compiles_a_kernel_from_the_repaired_wheel(
    tmp_path: Path, project: str, requirement: str, major: int
) -> None:
    """cumm-cu126 vendors ``libnvrtc-builtins-<hash>.so.12.6.85``, which its extension needs without
    binding anything of it. Repaired, the need is gone and the requirement is NVRTC 12's whole range
    (it stopped before 12.8, which shut out a torch pinning a newer NVRTC). cumm-cu116 vendors CUDA
    11.6's builtins, which no wheel ships: the copy goes with the need (it was kept). Installed by pip
    with their real dependencies (the newest NVRTC of the major), the extension imports and NVRTC (no
    GPU needed) compiles a kernel to PTX with the builtins of its own release, from its wheel."""
    import subprocess
    import sys

    from tests.support.corpus import CORPUS
    from tests.support.venvs import make_venv

    (entry,) = [e for e in CORPUS if e.project == project]
    out = tmp_path / "wheelhouse"
    code, _, stderr, crash = _run_main(["repair", str(fetch(entry)), "-w", str(out)])
    assert crash is None, crash
    assert code == 0, stderr
    (repaired,) = out.glob("*.whl")
    with Wheel.open(repaired) as wheel:
        (extension,) = [m for m in wheel.members if m.name.startswith("cumm/core_cc.")]
        with wheel.seekable_member(extension.name) as stream:
            needed = read_elf(stream, path=extension.name, symbols=False).needed
        requires = wheel.requires_dist()
        copies = [m.name for m in wheel.members if "libnvrtc-builtins" in m.name]
    assert not [name for name in needed if "builtins" in name], needed
    assert copies == [], copies
    assert any(line.startswith(requirement) for line in requires), requires
    python = make_venv(tmp_path / "venv")
    # pip's own configuration and cache: the index it resolves, as a user's install would.
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "--disable-pip-version-check", "install",
         "--no-input", str(repaired)],
        capture_output=True, text=True, check=False, timeout=900,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr[-3000:]
    probe = subprocess.run(
        [str(python), "-c", NVRTC_PROBE],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        cwd=tmp_path,
    )
    assert probe.returncode == 0, probe.stderr[-3000:]
    result = json.loads(probe.stdout)
    assert (result["created"], result["compiled"]) == (0, 0), result
    assert ".entry add_one" in result["ptx"]
    (builtins,) = [Path(p).name for p in result["builtins"]]
    assert re.fullmatch(rf"libnvrtc-builtins\.so\.{major}\.\d+", builtins), builtins
    assert all("/nvidia/cuda_nvrtc/lib/" in p for p in (*result["nvrtc"], *result["builtins"])), result


JAX_PROBE = r"""
import json
from jax_cuda12_plugin import _versions  # nanobind module; its CUDA calls go through trampolines

version = _versions.cuda_runtime_get_version()  # first call: dlopen("libcudart.so.12") via its RPATH
with open("/proc/self/maps") as maps:
    cudart = sorted({line.split()[-1] for line in maps if "libcudart.so" in line and "/" in line})
print(json.dumps({"version": version, "cudart": cudart}))
"""


@pytest.mark.install
def test_the_jax_plugin_still_loads_nvidia_wheels_through_its_trampolines(tmp_path: Path) -> None:
    """jax-cuda12-plugin needs no NVIDIA library in DT_NEEDED: it dlopens them by soname from its
    trampolines, which searches the plugin's DT_RPATH. Repaired, its files are byte for byte the
    same, and in a fresh venv the first CUDA call finds libcudart.so.12 in site-packages/nvidia."""
    import subprocess
    import sys

    from tests.support.corpus import CORPUS
    from tests.support.venvs import make_venv, site_packages

    (entry,) = [e for e in CORPUS if e.project == "jax-cuda12-plugin"]
    source = fetch(entry)
    out = tmp_path / "wheelhouse"
    code, _, stderr, crash = _run_main(["repair", str(source), "-w", str(out)])
    assert crash is None, crash
    assert code == 0, stderr
    (repaired,) = out.glob("*.whl")
    with Wheel.open(source) as before, Wheel.open(repaired) as after:
        for member in before.members:
            if member.name.endswith(".so"):
                assert after.read_member(member.name) == before.read_member(member.name), member.name
    python = make_venv(tmp_path / "venv")
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "--disable-pip-version-check", "install",
         "--no-input", "--no-deps", str(repaired), "nvidia-cuda-runtime-cu12>=12.1.105,<13"],
        capture_output=True, text=True, check=False, timeout=900,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr[-3000:]
    probe = subprocess.run(
        [str(python), "-c", JAX_PROBE], capture_output=True, text=True, check=False, timeout=300, cwd=tmp_path
    )
    assert probe.returncode == 0, probe.stderr[-3000:]
    result = json.loads(probe.stdout)
    assert result["version"] >= 12000, result
    site = site_packages(python)
    assert result["cudart"] == [str(site / "nvidia" / "cuda_runtime" / "lib" / "libcudart.so.12")], result


def test_check_names_the_requirement_in_turn_that_installs_each_missing_library(tmp_path: Path) -> None:
    """cuopt-cu12 needs libcuopt_client.so, which a requirement of its requirement libcuopt-cu12
    installs. Without --preloaded, check cannot count on it, and says which distribution installs
    it and which flag counts on its import, for each of the three libcuopt-* libraries."""
    (entry,) = [e for e in CORPUS if e.project == "cuopt-cu12"]
    code, stdout, stderr, crash = _run_main(["check", str(fetch(entry))])
    assert crash is None, crash
    assert code == 1, stderr
    said = stdout + stderr
    for distribution, folder in (
        ("libcuopt-client", "libcuopt_client/lib64"),
        ("libcuopt-mathopt-cu12", "libcuopt_mathopt/lib64"),
        ("libcuopt-routing-cu12", "libcuopt_routing/lib64"),
    ):
        assert f"{distribution} installs it in {folder}" in said, said[-3000:]
        assert f"(--preloaded {distribution})" in said
