"""cuDSS on torch tensors: ``solve(A, b)`` for a ``torch.sparse_csr_tensor`` on a CUDA device.

The torch extension package of the example, a top-level package of its own as TransformerEngine's
``transformer_engine_torch`` beside ``transformer_engine``: the distribution ``cudss-solver-torch``
(``[tool.slimwheel.distributions.torch]``, built from its sdist against the torch installed where it
lands) holds only this package and requires the torch minor it was compiled against
(``torch==2.13.*``) and the core ``cudss-solver-cu13`` at its own version. A build of the whole tree
with the torch framework selected (``-C slimwheel.frameworks=torch``) has it beside ``cudss_solver``.

``_cudss_torch.so`` is a torch operator library (``TORCH_LIBRARY``, no Python inside), loaded when this
package is imported (``torch.ops.load_library``) and called as ``torch.ops.cudss_solver.solve_csr``.
The work is queued on torch's current stream of A's device; the call returns once that stream has
finished the solve.

``threading=True`` turns on cuDSS's host threading layer for the reordering in the analysis phase:
``libcudss_mtlayer_gomp.so.1`` from the cuDSS wheel, found and loaded by ``slimwheel.runtime``
(``threading="env"``: the library ``CUDSS_THREADING_LIB`` names, loaded by cuDSS itself).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch  # type: ignore[import-not-found, unused-ignore]  # not installed where mypy runs

__all__ = ["LIBRARY", "SolveInfo", "load_library", "solve", "solve_with_info", "threading_layer"]
__version__ = "0.1.0"

LIBRARY = Path(__file__).with_name("_cudss_torch.so")
# Where a local build for another torch put its own copy (build_torch_extension.py): loaded instead.
_LIBRARY_VARIABLE = "CUDSS_SOLVER_TORCH_LIBRARY"
_MATRIX_TYPES = ("general", "symmetric", "spd")
_VIEWS = ("full", "upper", "lower")


@dataclass(frozen=True)
class SolveInfo:
    """What one solve cost: seconds per cuDSS phase, each ended by a synchronization of the stream."""

    analysis: float
    factorization: float
    solve: float
    lu_nnz: int  # entries in the factors
    threading_layer: str  # "off", "env", or the path of the library cuDSS was given


def load_library(path: str | os.PathLike[str] | None = None) -> Any:
    """Register ``torch.ops.cudss_solver`` (once per process) and return that namespace."""
    chosen = path or os.environ.get(_LIBRARY_VARIABLE) or LIBRARY
    if not _registered():
        torch.ops.load_library(str(chosen))
    return torch.ops.cudss_solver


def _registered() -> bool:
    try:
        torch.ops.cudss_solver.solve_csr  # noqa: B018 - looking it up is the test
    except (AttributeError, RuntimeError):
        return False
    return True


def threading_layer(setting: bool | str) -> str:
    """The operator's ``threading_layer`` argument for ``threading=``: "off", "env" or a path."""
    if setting is False or setting == "off":
        return "off"
    if setting == "env":
        if not os.environ.get("CUDSS_THREADING_LIB"):
            raise ValueError('threading="env" needs CUDSS_THREADING_LIB set to a cuDSS threading layer')
        return "env"
    if setting is True:
        return str(_threading_library())
    return str(setting)


def _threading_library() -> Path:
    """cuDSS's GNU OpenMP threading layer, which the cuDSS wheel ships beside libcudss: found (and
    loaded, with its checks) by slimwheel's run-time loader where it is installed, else taken from
    beside the libcudss this process mapped through the operator library."""
    try:
        from slimwheel.runtime import load
    except ImportError:
        pass
    else:
        return Path(load("cudss_mtlayer_gomp", cuda=13).path)
    load_library()
    with Path("/proc/self/maps").open(encoding="utf-8", errors="replace") as maps:
        for line in maps:
            fields = line.split(None, 5)
            if len(fields) == 6 and Path(fields[5].strip()).name.startswith("libcudss.so"):
                candidate = Path(fields[5].strip()).with_name("libcudss_mtlayer_gomp.so.1")
                if candidate.is_file():
                    return candidate
    raise RuntimeError(
        "cuDSS's threading layer libcudss_mtlayer_gomp.so.1 is not beside the libcudss loaded here: "
        "pass threading=PATH, or install slimwheel to find it"
    )


def solve_with_info(
    a: torch.Tensor,
    b: torch.Tensor,
    *,
    matrix_type: str = "general",
    view: str = "full",
    threading: bool | str = False,
    host_threads: int = 0,
) -> tuple[torch.Tensor, SolveInfo]:
    """``x`` with ``a @ x = b``, and the cost of each phase.

    ``a``: a 2-D ``torch.sparse_csr_tensor`` (float64 or float32; int64 indices are narrowed to int32)
    on a CUDA device; ``b``: (n,) or (n, k) of the same dtype on the same device. ``matrix_type``:
    general, symmetric or spd; ``view``: which triangle of ``a`` cuDSS reads (full, upper, lower).
    """
    if a.layout != torch.sparse_csr:
        raise TypeError(f"A must be a torch.sparse_csr_tensor, not a {a.layout} tensor")
    if a.dim() != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"A must be square and 2-D, not {tuple(a.shape)}")
    if matrix_type not in _MATRIX_TYPES or view not in _VIEWS:
        raise ValueError(f"matrix_type must be one of {_MATRIX_TYPES}, view one of {_VIEWS}")
    crow, col = a.crow_indices(), a.col_indices()
    if crow.dtype != torch.int32:
        if a._nnz() >= 2**31:
            raise ValueError(f"A has {a._nnz()} stored entries: cuDSS's 32-bit indices hold fewer than 2^31")
        crow, col = crow.to(torch.int32), col.to(torch.int32)
    # A CPU tensor gets stream 0 and the operator's own clear error (CPU torch cannot name a stream).
    stream = torch.cuda.current_stream(a.device).cuda_stream if a.device.type == "cuda" else 0
    layer = threading_layer(threading)
    ops = load_library()
    x, phases = ops.solve_csr(crow, col, a.values(), b, stream, matrix_type, view, layer, host_threads)
    info = SolveInfo(phases[0], phases[1], phases[2], int(phases[3]), layer)
    return x, info


def solve(
    a: torch.Tensor,
    b: torch.Tensor,
    *,
    matrix_type: str = "general",
    view: str = "full",
    threading: bool | str = False,
) -> torch.Tensor:
    """``x`` with ``a @ x = b`` (see :func:`solve_with_info`)."""
    x, _info = solve_with_info(a, b, matrix_type=matrix_type, view=view, threading=threading)
    return x


load_library()  # the operator, registered on import: torch.ops.cudss_solver.solve_csr
