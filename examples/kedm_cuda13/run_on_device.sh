#!/usr/bin/env bash
# Run run_kedm.py on the GPU with kedm-cuda13x as published, then as repaired, each installed into
# the machine's own Python (offline, no dependencies: the image has numpy and PyTorch's CUDA 13
# wheels, nvidia-cuda-runtime and nvidia-cublas among them), and compare the two.
#   run_on_device.sh PUBLISHED_WHEEL REPAIRED_WHEEL
set -eu
example=$(cd "$(dirname "$0")" && pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -m pip list 2>/dev/null | grep -Ei '^(nvidia-cuda-runtime|nvidia-cublas|numpy) '
echo "loader cache: $(ldconfig -p | grep -cE 'libcudart|libcublas') CUDA runtime or cuBLAS entries"
n=0
for wheel in "$1" "$2"; do
  n=$((n + 1))
  echo "== $(basename "$wheel") $(sha256sum "$wheel" | cut -c1-16)"
  python3 -m pip install -q --no-index --no-deps --force-reinstall "$wheel"
  timeout 300 python3 "$example/run_kedm.py" > "/tmp/kedm-$n.json" || echo "exit status $?"
  cat "/tmp/kedm-$n.json"
done
python3 - /tmp/kedm-1.json /tmp/kedm-2.json <<'PY'
import json, sys
try:
    published, repaired = (json.load(open(p)) for p in sys.argv[1:])
except ValueError:
    sys.exit("no results to compare")
same = {k: published[k] == repaired[k] for k in published if not k.startswith("lib")}
print("same results:", all(same.values()), same)
PY
