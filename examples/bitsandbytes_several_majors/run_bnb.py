"""Load bitsandbytes' CUDA 13 library, then quantize and multiply with it on the GPU; say what was mapped.

``python run_bnb.py load [LIBRARY]``: in a process that imports nothing else, ``dlopen`` the installed
``bitsandbytes/LIBRARY`` (default ``libbitsandbytes_cuda130.so``) as a program that does not import
torch first would, and print whether it loaded and which files the process mapped for cuBLAS,
cuBLASLt and the CUDA runtime.

``python run_bnb.py compute``: import torch and bitsandbytes (which picks the library of torch's
CUDA), then on the GPU: NF4 4-bit quantization and back, a 4-bit matrix product, and an int8 matrix
product (cuBLASLt's), each summed; the library bitsandbytes loaded and the NVIDIA files mapped. Run
it with the wheel as published and as repaired: everything but the mapped files must agree.
"""

from __future__ import annotations

import ctypes
import importlib
import json
import re
import sys
import sysconfig
from pathlib import Path
from typing import Any

NVIDIA = r"libcublas\.|libcublasLt\.|libcudart\."


def _mapped(pattern: str) -> list[str]:
    with Path("/proc/self/maps").open(encoding="utf-8") as maps:
        files = {line.split()[-1] for line in maps if "/" in line}
    return sorted(str(Path(f).resolve()) for f in files if re.match(pattern, Path(f).name))


def load(name: str = "libbitsandbytes_cuda130.so") -> dict[str, Any]:
    library = Path(sysconfig.get_paths()["purelib"]) / "bitsandbytes" / name
    try:
        ctypes.CDLL(str(library))
    except OSError as error:
        return {"loaded": False, "error": str(error), "mapped": _mapped(NVIDIA)}
    return {"loaded": True, "mapped": _mapped(NVIDIA)}


def compute() -> dict[str, Any]:
    torch: Any = importlib.import_module("torch")  # on the GPU machine, not where this is type-checked
    bnb: Any = importlib.import_module("bitsandbytes")
    functional = bnb.functional
    torch.manual_seed(0)
    a = torch.randn(256, 512, dtype=torch.float16, device="cuda")
    x = torch.randn(64, 512, dtype=torch.float16, device="cuda")
    packed, state = functional.quantize_4bit(a, quant_type="nf4")
    restored = functional.dequantize_4bit(packed, state)
    product_4bit = bnb.matmul_4bit(x, packed.t(), quant_state=state)
    a8, _, _ = functional.int8_vectorwise_quant(a)
    x8, _, _ = functional.int8_vectorwise_quant(x)
    product_int8 = functional.int8_linear_matmul(x8, a8)  # x8 @ a8.T in int32, through cuBLASLt
    torch.cuda.synchronize()
    return {
        "device": torch.cuda.get_device_name(),
        "torch_cuda": torch.version.cuda,
        "nf4_mean_abs_error": round(float((a - restored).abs().float().mean()), 6),
        "matmul_4bit_sum": round(float(product_4bit.float().sum()), 3),
        "matmul_4bit_vs_dequantized": round(float((product_4bit - x @ restored.t()).abs().float().max()), 4),
        "int8_matmul_sum": int(product_int8.to(torch.int64).sum()),
        "bitsandbytes_library": _mapped(r"libbitsandbytes_"),
        "mapped": _mapped(NVIDIA),
    }


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "compute"
    result = load(*sys.argv[2:3]) if mode == "load" else compute()
    sys.stdout.write(json.dumps(result, indent=1) + "\n")
