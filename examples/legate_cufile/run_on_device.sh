#!/usr/bin/env bash
# Install the repaired legate wheel into the machine's own Python (offline, no dependencies: the image
# has numpy, h5py, rich, nvidia-nccl-cu13 2.28.9, nvidia-cufile 1.15.1.6, nvidia-cuda-runtime), then
# check_loads.py. An install split over two folders (pip --target) would not do: the RPATHs repair
# sets reach the NVIDIA wheels from legate's own site-packages, as pip installs them.
#   run_on_device.sh WHEEL
set -eu
example=$(cd "$(dirname "$0")" && pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
sha256sum "$1" | cut -c1-16
python3 -m pip install -q --no-index --no-deps --force-reinstall "$1"
timeout 300 python3 "$example/check_loads.py"
