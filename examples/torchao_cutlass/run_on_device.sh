#!/usr/bin/env bash
# The published torchao 0.18.0 and the repaired one, each in a --target folder over the machine's
# torch 2.11.0 (offline, no dependencies): run_sparse_fp8.py with each.
#   run_on_device.sh WHEELS   (WHEELS holds published/torchao-0.18.0-*.whl and repaired/torchao-0.18.0-*.whl)
set -u
example=$(cd "$(dirname "$0")" && pwd)
cd "$1"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for which in published repaired; do
  site=/tmp/site-$which; rm -rf "$site"
  python3 -m pip install -q --no-index --no-deps --no-compile --target "$site" "$which"/torchao-0.18.0-*.whl || exit 1
  echo "=== $which torchao ($(sha256sum "$which"/torchao-0.18.0-*.whl | cut -c1-16))"
  PYTHONPATH=$site python3 -W ignore "$example/run_sparse_fp8.py" 2>&1 | sed "s#$site#SITE#g" | tail -6
done
