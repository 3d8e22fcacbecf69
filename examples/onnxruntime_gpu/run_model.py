"""Run a tiny ONNX model (z = x + y) on ONNX Runtime's CUDA provider, and say where each CUDA library
it mapped came from. No ``onnx`` package: the model is encoded by hand (protobuf's wire format).

    python run_model.py [PROVIDER...]      (default: CUDAExecutionProvider)
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _bytes_field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _int_field(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _float_vector(name: str, length: int) -> bytes:
    """A ValueInfoProto: a FLOAT tensor of shape [length]."""
    shape = _bytes_field(2, _bytes_field(1, _int_field(1, length)))
    tensor_type = _bytes_field(1, _int_field(1, 1) + shape)
    return _bytes_field(1, name.encode()) + _bytes_field(2, tensor_type)


def add_model(length: int = 4) -> bytes:
    """A ModelProto (IR 8, opset 13) whose graph is one Add node: z = x + y."""
    node = _bytes_field(1, b"x") + _bytes_field(1, b"y") + _bytes_field(2, b"z") + _bytes_field(4, b"Add")
    inputs = _bytes_field(11, _float_vector("x", length)) + _bytes_field(11, _float_vector("y", length))
    output = _bytes_field(12, _float_vector("z", length))
    graph = _bytes_field(1, node) + _bytes_field(2, b"g") + inputs + output
    opset = _bytes_field(8, _bytes_field(1, b"") + _int_field(2, 13))
    return _int_field(1, 8) + opset + _bytes_field(7, graph)


def main(providers: list[str]) -> None:
    # Imported here, untyped: neither is installed where slimwheel's own checks run.
    np: Any = importlib.import_module("numpy")
    ort: Any = importlib.import_module("onnxruntime")
    say = sys.stdout.write
    say(f"onnxruntime {ort.__version__} {ort.__file__}\navailable: {ort.get_available_providers()}\n")
    session = ort.InferenceSession(add_model(), providers=providers or ["CUDAExecutionProvider"])
    say(f"session providers: {session.get_providers()}\n")
    x = np.arange(4, dtype=np.float32)
    (z,) = session.run(None, {"x": x, "y": x})
    say(f"z = {z.tolist()}\n")
    with Path("/proc/self/maps").open(encoding="utf-8") as maps:
        mapped = {line.split()[-1] for line in maps if ".so" in line.split()[-1]}
    for path in sorted(mapped):
        if any(key in path for key in ("libcu", "libnv", "providers")):
            say(f"mapped {path}\n")


if __name__ == "__main__":
    main(sys.argv[1:])
