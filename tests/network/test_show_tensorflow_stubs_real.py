"""`show` on a real TensorFlow 2.11 library whose CUDA stubs forward to libraries dlopen'ed at run time.

tensorflow-gpu 2.11.0's ``libtensorflow_framework.so.2`` defines and exports 438 cuBLAS, 230 cuDNN and
more functions under the libraries' own names; each keeps in a function-local ``func_ptr`` what
``dlsym`` found in the library TensorFlow's DSO loader opened by a name it builds at run time
(``libcublas.so.11``). show called them cuBLAS, cuDNN, cuFFT, cuRAND and runtime code linked in
statically, "it cannot be unlinked, only rebuilt". Only that member is read from the 561 MiB wheel
(HTTP Range requests, about 15 MiB) and kept in slimwheel's cache by its RECORD hash.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from slimwheel.analysis import FindingKind, analyse_wheel
from slimwheel.catalog.model import Catalog
from slimwheel.index import Cache, IndexClient, resolve_index_settings
from slimwheel.index.cache import atomic_writer
from slimwheel.wheel import Wheel
from tests.support.wheels import make_wheel

pytestmark = pytest.mark.network

PROJECT = "tensorflow-gpu"
WHEEL = "tensorflow_gpu-2.11.0-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
WHEEL_SHA256 = "81a9e753a2ae90305ec0067bc4ac5c87a30afd278dfa242fd29321ed4bc893ed"
MEMBER = "tensorflow/libtensorflow_framework.so.2"
MEMBER_SHA256 = "34f2ca13a34230276548a08e961c73c9df21619646f24b51bf8975f6f471e791"
# Forwarding functions by library, as `nm` counts the functions with a `_ZZ<n><name>E8func_ptr`.
FORWARDERS = {"cublas": 438, "cublasLt": 34, "cudart": 237, "cudnn": 230, "cufft": 37, "curand": 29}


def _member() -> Path:
    """The library, from slimwheel's cache or read out of the remote wheel and checked by its hash."""
    cache = Cache.default()
    path = cache.file_path(Path(MEMBER).name, sha256=MEMBER_SHA256, url="")
    if path.is_file():
        return path
    with IndexClient(resolve_index_settings(), cache=cache) as client:
        files = [f for f in client.project(PROJECT).files if f.filename == WHEEL and f.sha256 == WHEEL_SHA256]
        if not files:
            raise LookupError(f"{WHEEL} with sha256 {WHEEL_SHA256} is not listed for {PROJECT}")
        digest = hashlib.sha256()
        with client.open_wheel(files[0]) as wheel, atomic_writer(path) as out:
            for chunk in wheel.iter_member_chunks(MEMBER):
                digest.update(chunk)
                out.write(chunk)
            if digest.hexdigest() != MEMBER_SHA256:
                raise ValueError(f"{MEMBER}: sha256 {digest.hexdigest()}, pinned {MEMBER_SHA256}")
    return path


def test_tensorflows_stubs_are_run_time_loads_not_static_code(tmp_path: Path) -> None:
    wheel = make_wheel(
        tmp_path, "tensorflow_gpu", "2.11.0", {MEMBER: _member().read_bytes()}, tag="cp310-cp310-linux_x86_64"
    )
    with Wheel.open(wheel) as opened:
        report = analyse_wheel(opened, Catalog(()))
    assert [(code.library, code.path) for code in report.static] == []
    loads = {load.library: load for load in report.lazy_loads}
    assert {library: load.symbols for library, load in loads.items()} == FORWARDERS
    assert all(
        load.pointer == "func_ptr" and load.exported and load.path == MEMBER for load in loads.values()
    )
    assert not [f for f in report.findings if f.kind is FindingKind.STATIC_NVIDIA]
    messages = {f.message for f in report.findings if f.kind is FindingKind.DLOPEN_NVIDIA}
    assert (
        "loads cublas at run time (dlopen): 438 forwarding functions keeping what dlsym gave in a local "
        "func_ptr, exported, not cublas code"
    ) in messages
