#!/usr/bin/env bash
# Run run_bnb.py on the GPU with bitsandbytes 0.50.2's CUDA 13.0 library as published, then as
# repaired. The repaired wheel is installed into the machine's own Python (offline, no dependencies:
# the image has torch 2.11 for CUDA 13 and its NVIDIA wheels); the published variant is that install
# with libbitsandbytes_cuda130.so replaced by the published wheel's file (repair changes nothing else
# that this run loads: the Python files are the same bytes).
#   run_on_device.sh REPAIRED_WHEEL PUBLISHED_LIBBITSANDBYTES_CUDA130_SO
set -eu
example=$(cd "$(dirname "$0")" && pwd)
site=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -m pip list 2>/dev/null | grep -Ei '^(torch|nvidia-cuda-runtime|nvidia-cublas) '
echo "loader cache: $(ldconfig -p | grep -cE 'libcudart|libcublas') CUDA runtime or cuBLAS entries"
python3 -m pip install -q --no-index --no-deps --force-reinstall "$1"
library="$site/bitsandbytes/libbitsandbytes_cuda130.so"
cp "$library" /tmp/repaired.so
for variant in published repaired; do
  if [ "$variant" = published ]; then cp "$2" "$library"; else cp /tmp/repaired.so "$library"; fi
  echo "== $variant: $(sha256sum "$library" | cut -c1-16); $(readelf -d "$library" | grep -Eo '(RPATH|RUNPATH).*' || echo 'no RPATH')"
  for mode in load compute; do
    timeout 300 python3 "$example/run_bnb.py" "$mode" > "/tmp/bnb-$variant-$mode.json" || echo "exit status $?"
    cat "/tmp/bnb-$variant-$mode.json"
  done
done
python3 - /tmp/bnb-published-compute.json /tmp/bnb-repaired-compute.json <<'PY'
import json, sys
try:
    published, repaired = (json.load(open(p)) for p in sys.argv[1:])
except ValueError:
    sys.exit("no results to compare")
same = {k: published[k] == repaired[k] for k in published if k not in ("mapped", "bitsandbytes_library")}
print("same results:", all(same.values()), same)
PY
