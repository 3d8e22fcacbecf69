"""Reading RECORD for library files, the way the run-time loader does (without importlib.metadata)."""

from __future__ import annotations

from pathlib import Path

from slimwheel.runtime import WheelIndex
from slimwheel.runtime._index import _record_libraries

RECORD = (
    b"nvidia/cu13/lib/libcudss.so.1,sha256=abc,167000000\n"
    b"nvidia/cu13/lib/libcudss_commlayer_nccl.so.1,sha256=def,990465\r\n"
    b"nvidia/cu13/include/cudss.h,sha256=ghi,100\n"
    b"torch/lib/libtorch_cuda.so,sha256=jkl,\n"
    b"mypkg/_mylib.so,sha256=mno,10\n"  # "lib" inside a name: not lib*.so
    b'"odd,name/libx.so.1",sha256=pqr,1\n'  # quoted csv path: left out
    b"libtop.so.2.1,,\n"
    b"nvidia/cu13/lib/libcudss.so.1.txt,sha256=stu,5\n"
    b"nvidia_cudss_cu13-1.0.0.35.dist-info/RECORD,,\n"
)


def test_record_lines_naming_libraries() -> None:
    assert _record_libraries(RECORD) == [
        ("nvidia/cu13/lib/libcudss.so.1", 167000000),
        ("nvidia/cu13/lib/libcudss_commlayer_nccl.so.1", 990465),
        ("torch/lib/libtorch_cuda.so", None),
        ("libtop.so.2.1", None),
    ]


def _install(site: Path, folder: str, record: bytes, files: dict[str, bytes]) -> None:
    (site / folder).mkdir(parents=True)
    (site / folder / "RECORD").write_bytes(record)
    for name, data in files.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_bytes(data)


def test_index_across_paths(tmp_path: Path) -> None:
    first, second = tmp_path / "target", tmp_path / "site-packages"
    lib = "nvidia/cudnn/lib/libcudnn.so.9"
    # cuDNN cu12 and cu13 both list one path; the file on disk is cu13's (its RECORD size matches).
    _install(second, "nvidia_cudnn_cu12-9.1.0.70.dist-info", f"{lib},sha256=a,3\n".encode(), {})
    _install(second, "nvidia_cudnn_cu13-9.19.0.56.dist-info", f"{lib},sha256=b,5\n".encode(), {lib: b"12345"})
    _install(first, "nvidia_cudss_cu13-1.0.0.35.dist-info", RECORD, {"nvidia/cu13/lib/libcudss.so.1": b"x"})
    index = WheelIndex(["", "relative/dir", str(first), str(second), str(first), str(tmp_path / "missing")])
    assert index.sites == [str(first), str(second)]
    assert index.skipped == ["'' (the current directory)", "relative/dir"]
    (cudss,) = index.files(["libcudss.so.1"])  # listed files that are not on disk are left out
    assert (cudss.distribution, cudss.version, cudss.site) == ("nvidia-cudss-cu13", "1.0.0.35", str(first))
    assert index.cuda_major(cudss) == (13, "distribution name")
    (cudnn,) = index.files(["libcudnn.so.9"])
    assert cudnn.distribution == "nvidia-cudnn-cu13"
    assert index.owner(str(second / lib)) == cudnn
    assert index.dist_info("NVIDIA_cudss-cu13") == str(first / "nvidia_cudss_cu13-1.0.0.35.dist-info")
