"""Decode ``clip.mp4`` (60 frames of H.264, 320x240) on the GPU's NVDEC with PyNvVideoCodec, and show
that the luma planes match FFmpeg's software decoder bit for bit, and where the process mapped the
CUDA runtime from.

    python run_decode.py [clip.mp4]
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib
import sys
from pathlib import Path
from typing import Any

WIDTH, HEIGHT, FRAMES = 320, 240, 60
# The sha256 of the 60 luma planes, one after the other, as FFmpeg's own H.264 decoder gives them
# (PyAV 16, ``frame.to_ndarray(format="yuv420p")[:240]``): H.264 decoding is exact, so NVDEC's match.
SOFTWARE_LUMA = "628464771bb5eb5a0cd777765fe9a2d4b2119e6c90894e8ec03cd00082c0fff9"


def main() -> int:
    clip = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("clip.mp4")
    nvc: Any = importlib.import_module("PyNvVideoCodec")
    say = sys.stdout.write
    say(f"PyNvVideoCodec {nvc.__version__} from {Path(nvc.__file__).parent}\n")
    demuxer = nvc.CreateDemuxer(filename=str(clip))
    decoder = nvc.CreateDecoder(gpuid=0, codec=demuxer.GetNvCodecId(), usedevicememory=False)
    luma = hashlib.sha256()
    means = []
    for packet in demuxer:
        for frame in decoder.Decode(packet):
            plane = ctypes.string_at(frame.GetPtrToPlane(0), WIDTH * HEIGHT)
            luma.update(plane)
            means.append(sum(plane) / len(plane))
    same = luma.hexdigest() == SOFTWARE_LUMA
    say(f"decoded {len(means)} frames on NVDEC; mean luma {means[0]:.2f}, {means[-1]:.2f} (first, last)\n")
    verdict = "match" if same else "DIFFER from"
    say(f"luma planes {verdict} FFmpeg's software decoder ({luma.hexdigest()[:16]})\n")
    with Path("/proc/self/maps").open(encoding="utf-8") as maps:
        mapped = sorted({line.split()[-1] for line in maps if "libcudart" in line or "libnvcuvid" in line})
    for path in mapped:
        say(f"mapped {path}\n")
    return 0 if same and len(means) == FRAMES else 1


if __name__ == "__main__":
    sys.exit(main())
