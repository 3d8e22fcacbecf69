"""How repair words the problems that keep it from writing a wheel: one line per cause."""

from __future__ import annotations

from slimwheel.check.words import problem_lines
from slimwheel.repair.pipeline import CheckProblem

_TORCH = (
    "it is torch's (torch/lib), which this wheel does not require: if `import torch` runs before this "
    "wheel's libraries load, count on that (--preloaded torch), else require torch"
)


def _torch_problem(path: str, soname: str, searched: str) -> CheckProblem:
    message = f"needs {soname}: not found (searched {searched}; {_TORCH})"
    return CheckProblem("unresolved-needed", path, soname, message, _TORCH)


def test_one_cause_is_one_line_whatever_each_file_searched() -> None:
    problems = [
        _torch_problem("pkg/a.so", "libc10.so", "pkg"),
        _torch_problem("pkg/a.so", "libtorch.so", "pkg"),
        _torch_problem("pkg/b.so", "libc10.so", "nvidia/cu13/lib, pkg"),
        _torch_problem("pkg/b.so", "libtorch.so", "nvidia/cu13/lib, pkg"),
    ]
    assert problem_lines(problems, verbose=False) == [
        (
            "2 files (pkg/a.so, pkg/b.so)",
            "needs libc10.so, libtorch.so: not found (they are torch's (torch/lib), which this wheel does "
            "not require: if `import torch` runs before this wheel's libraries load, count on that "
            "(--preloaded torch), else require torch)",
        )
    ]
    # -v: each file's search path, so one line per search path.
    assert [where for where, _ in problem_lines(problems, verbose=True)] == ["pkg/a.so", "pkg/b.so"]


def test_files_that_miss_different_sonames_for_one_cause_say_between_them() -> None:
    problems = [
        _torch_problem("pkg/a.so", "libc10.so", "pkg"),
        _torch_problem("pkg/b.so", "libtorch_python.so", "pkg"),
    ]
    ((where, message),) = problem_lines(problems, verbose=False)
    assert where == "2 files (pkg/a.so, pkg/b.so)"
    assert message.startswith("needs libc10.so, libtorch_python.so between them: not found (they are torch's")


def test_problems_without_a_cause_group_by_message_as_before() -> None:
    elsewhere = (
        "needs libcudss.so.0: not found (searched pkg; nvidia-cudss-cu12 installs it in nvidia/cu12/lib)"
    )
    problems = [
        CheckProblem("unresolved-needed", "pkg/a.so", "libcudss.so.0", elsewhere),
        CheckProblem("unresolved-needed", "pkg/b.so", "libcudss.so.0", elsewhere),
        _torch_problem("pkg/a.so", "libc10.so", "pkg"),
        CheckProblem("bad-rpath", "pkg/c.so", None, "RPATH '' has an empty entry"),
    ]
    assert problem_lines(problems, verbose=False) == [
        ("2 files (pkg/a.so, pkg/b.so)", elsewhere),
        ("pkg/a.so", f"needs libc10.so: not found ({_TORCH})"),
        ("pkg/c.so", "RPATH '' has an empty entry"),
    ]


def _host_product(path: str, soname: str, stem: str) -> CheckProblem:
    cause = (
        "it is part of TensorRT, and no NVIDIA wheel the catalog knows ships that soname: only TensorRT "
        f"installed on the host provides it (--exclude {stem} leaves it to the host)"
    )
    return CheckProblem(
        "unresolved-needed", path, soname, f"needs {soname}: not found (searched x; {cause})", cause
    )


def test_a_product_on_the_host_is_one_line_naming_every_exclude() -> None:
    """onnxruntime-gpu 1.16.3's TensorRT provider needs three TensorRT 8 libraries, each hint naming its
    own --exclude: one line, which names the three flags."""
    problems = [
        _host_product("ort/trt.so", "libnvonnxparser.so.8", "nvonnxparser"),
        _host_product("ort/trt.so", "libnvinfer.so.8", "nvinfer"),
        _host_product("ort/trt.so", "libnvinfer_plugin.so.8", "nvinfer_plugin"),
    ]
    assert problem_lines(problems, verbose=False) == [
        (
            "ort/trt.so",
            "needs libnvinfer.so.8, libnvinfer_plugin.so.8, libnvonnxparser.so.8: not found (they are part "
            "of TensorRT, and no NVIDIA wheel the catalog knows ships those sonames: only TensorRT installed "
            "on the host provides them (--exclude nvinfer --exclude nvinfer_plugin --exclude nvonnxparser "
            "leave them to the host))",
        )
    ]
    ((_, one),) = problem_lines(problems[:1], verbose=False)
    assert one.endswith("(--exclude nvonnxparser leaves it to the host))")


def _in_folder(path: str, soname: str, wheel: str, folder: str = "nvidia/cu13/lib") -> CheckProblem:
    cause = f"{wheel} installs it in {folder}"
    message = f"needs {soname}: not found (no RPATH/RUNPATH folder inside site-packages; {cause})"
    return CheckProblem("unresolved-needed", path, soname, message, cause)


def test_the_wheels_that_install_sonames_in_one_folder_share_a_line() -> None:
    """moreau-cuda13 0.4.1: two files miss seven sonames of six CUDA 13 wheels, all of them installed in
    nvidia/cu13/lib (six lines before); a soname of another folder keeps its own line."""
    problems = [
        _in_folder("m/a.so", "libcudart.so.13", "nvidia-cuda-runtime"),
        _in_folder("m/a.so", "libcublas.so.13", "nvidia-cublas"),
        _in_folder("m/a.so", "libcublasLt.so.13", "nvidia-cublas"),
        _in_folder("m/b.so", "libcudart.so.13", "nvidia-cuda-runtime"),
        _in_folder("m/b.so", "libcublas.so.13", "nvidia-cublas"),
        _in_folder("m/b.so", "libcublasLt.so.13", "nvidia-cublas"),
        _in_folder("m/b.so", "libcudnn.so.9", "nvidia-cudnn-cu13", "nvidia/cudnn/lib"),
    ]
    assert problem_lines(problems, verbose=False) == [
        (
            "2 files (m/a.so, m/b.so)",
            "needs libcublas.so.13, libcublasLt.so.13, libcudart.so.13: not found (nvidia-cublas, "
            "nvidia-cuda-runtime install them in nvidia/cu13/lib)",
        ),
        ("m/b.so", "needs libcudnn.so.9: not found (nvidia-cudnn-cu13 installs it in nvidia/cudnn/lib)"),
    ]
    # One wheel, several of its sonames: it installs them.
    ((_, one),) = problem_lines(problems[1:3], verbose=False)
    assert one.endswith("(nvidia-cublas installs them in nvidia/cu13/lib)")
