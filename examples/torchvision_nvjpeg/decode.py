"""Decode one JPEG on the GPU (nvJPEG) and on the CPU (libjpeg) with whichever torchvision is imported,
and say where libcudart and libnvjpeg were mapped from.

The image is made here (a gradient with noise, 1024x768, quality 92, from a fixed seed), so the GPU
output's sha256 can be compared between torchvision builds: the same nvJPEG gives the same pixels.

    python decode.py
"""

from __future__ import annotations

import hashlib
import importlib
import io
import sys
from pathlib import Path
from typing import Any


def main() -> int:
    np: Any = importlib.import_module("numpy")
    torch: Any = importlib.import_module("torch")
    torchvision: Any = importlib.import_module("torchvision")
    image: Any = importlib.import_module("PIL.Image")
    decode_jpeg = importlib.import_module("torchvision.io").decode_jpeg
    say = sys.stdout.write
    say(f"torch {torch.__version__} torchvision {torchvision.__version__} from {torchvision.__file__}\n")
    rng = np.random.default_rng(0)
    y, x = np.mgrid[0:768, 0:1024]
    ramps = np.stack([x * 255 // 1023, y * 255 // 767, (x + y) * 255 // 1790], axis=-1).astype(np.int16)
    pixels = np.clip(ramps + rng.integers(-20, 21, ramps.shape), 0, 255).astype(np.uint8)
    buffer = io.BytesIO()
    image.fromarray(pixels).save(buffer, format="JPEG", quality=92)
    data = torch.frombuffer(bytearray(buffer.getvalue()), dtype=torch.uint8)
    cpu = decode_jpeg(data)
    try:
        gpu = decode_jpeg(data, device="cuda")
    except Exception as error:  # noqa: BLE001 (whatever stops the GPU decode is the answer)
        say(f"GPU decode failed: {type(error).__name__}: {str(error).splitlines()[0]}\n")
        return 1
    torch.cuda.synchronize()
    difference = (gpu.cpu().int() - cpu.int()).abs()
    digest = hashlib.sha256(gpu.cpu().numpy().tobytes()).hexdigest()[:16]
    say(
        f"decoded {tuple(gpu.shape)} on {gpu.device}; |GPU - CPU| max {difference.max().item()}, "
        f"mean {difference.float().mean().item():.4f}; GPU sha256 {digest}\n"
    )
    with Path("/proc/self/maps").open(encoding="utf-8") as maps:
        paths = sorted({line.split()[-1] for line in maps if "libnvjpeg" in line or "libcudart" in line})
    for path in paths:
        say(f"mapped {path}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
