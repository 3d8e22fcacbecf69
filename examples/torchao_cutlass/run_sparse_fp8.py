"""One 2:4-sparse FP8 linear layer through torchao's CUTLASS kernels for Hopper (``_C_cutlass_90a``),
with whichever torchao is imported; its output's sha256 and error against a dense float reference,
and the files the process mapped for the CUDA runtime and torchao's extension.

    python run_sparse_fp8.py
"""

from __future__ import annotations

import hashlib
import importlib
import sys
from pathlib import Path
from typing import Any


def mapped(*names: str) -> list[str]:
    with Path("/proc/self/maps").open() as maps:
        return sorted({line.split()[-1] for line in maps if any(name in line for name in names)})


def main() -> int:
    say = sys.stdout.write
    torch: Any = importlib.import_module("torch")
    torchao: Any = importlib.import_module("torchao")
    say(f"torch {torch.__version__} torchao {torchao.__version__} from {Path(torchao.__file__).parent}\n")
    if not hasattr(torch.ops.torchao, "rowwise_scaled_linear_sparse_cutlass_f8f8"):
        say("torchao's CUTLASS extension did not load\n")
        return 1
    generator = torch.Generator(device="cuda").manual_seed(0)
    m, n, k = 64, 256, 512
    fp8 = torch.float8_e4m3fn
    x = (torch.randn(m, k, device="cuda", generator=generator) * 2).to(fp8)
    x_scale = torch.rand(m, device="cuda", generator=generator) + 0.5
    w = torch.randn(n, k, device="cuda", generator=generator)
    keep = torch.tensor([1, 1, 0, 0], device="cuda", dtype=torch.bool).repeat(n, k // 4)  # 2 of every 4
    w = (w * keep).to(fp8)
    w_scale = torch.rand(n, device="cuda", generator=generator) + 0.5
    w_sparse, w_meta = torch.ops.torchao.to_sparse_semi_structured_cutlass_sm9x_f8(w)
    out = torch.ops.torchao.rowwise_scaled_linear_sparse_cutlass_f8f8(
        x, x_scale, w_sparse, w_meta, w_scale, None, torch.bfloat16
    )
    torch.cuda.synchronize()
    reference = (x.float() * x_scale[:, None]) @ (w.float() * w_scale[:, None]).T
    error = ((out.float() - reference).abs().max() / reference.abs().max()).item()
    digest = hashlib.sha256(out.cpu().view(torch.int16).numpy().tobytes()).hexdigest()[:16]
    say(f"out {tuple(out.shape)} {out.dtype}: sha256 {digest}, max error {error:.2e} of the largest value\n")
    for name in ("libcudart", "_C_cutlass_90a"):
        say(f"{name}: {', '.join(mapped(name))}\n")
    return 0 if error < 1e-2 else 1


if __name__ == "__main__":
    sys.exit(main())
