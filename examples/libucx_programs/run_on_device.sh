#!/usr/bin/env bash
# On the GPU machine (no network): libucx-cu13 as published and as repaired, each installed into a
# fresh venv from the folder of wheels given (its CUDA runtime wheel), its programs run, and each
# verified there by slimwheel, with the machine's own NVIDIA driver (no stand-ins).
#   run_on_device.sh PUBLISHED_WHEEL REPAIRED_WHEEL WHEELS_FOLDER
# WHEELS_FOLDER holds nvidia-cuda-runtime (CUDA 13) and slimwheel's own dependencies for the
# machine's Python (httpx, rich, packaging, isal, zlib-ng, auditwheel and theirs).
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
wheels=$(cd "$3" && pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 --version
python3 -m venv /tmp/slimwheel-env
/tmp/slimwheel-env/bin/pip install -q --no-index --find-links "$wheels" httpx rich packaging isal zlib-ng auditwheel
# Nothing here reaches an index: a look-up check would make fails at once, not after a timeout.
export PIP_INDEX_URL=http://127.0.0.1:9/simple
for wheel in "$1" "$2"; do
  echo "== $(basename "$wheel")"
  rm -rf /tmp/ucx-venv && python3 -m venv /tmp/ucx-venv
  /tmp/ucx-venv/bin/pip install -q --no-index --find-links "$wheels" "$wheel"
  site=$(/tmp/ucx-venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "-- ucx_info -v"
  "$site/libucx/bin/ucx_info" -v 2>&1 | head -n 3
  echo "-- ucx_info -d, CUDA transports"
  "$site/libucx/bin/ucx_info" -d 2>&1 | grep -E "Transport: (cuda|gdr)|Device: cuda|error while loading" | sort | uniq -c
  echo "-- slimwheel verify"
  PYTHONPATH="$repo/src" /tmp/slimwheel-env/bin/python -m slimwheel verify "$wheel" --find-links "$wheels" \
    -q 2>&1 | tail -n 30
done
