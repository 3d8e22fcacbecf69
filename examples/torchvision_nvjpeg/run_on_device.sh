#!/usr/bin/env bash
# The image's own torchvision 0.26.0 (the published wheel), then the repaired one in a --target folder
# with nvidia-nvjpeg 13.0.1.86 (the floor repair set) and with no nvidia-nvjpeg: decode.py each time.
#   run_on_device.sh WHEELS   (WHEELS holds repaired/torchvision-0.26.0-*.whl and nvidia_nvjpeg-13.0.1.86-*.whl)
set -u
example=$(cd "$(dirname "$0")" && pwd)
cd "$1"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "=== the image's own torchvision (the published wheel, its vendored cudart and nvJPEG)"
python3 -W ignore "$example/decode.py" 2>&1 | tail -5
for nvjpeg in 13.0.1.86 none; do
  site=/tmp/site-$nvjpeg; rm -rf "$site"
  wheels=(repaired/*.whl)
  [ "$nvjpeg" != none ] && wheels+=(nvidia_nvjpeg-"$nvjpeg"-*.whl)
  python3 -m pip install -q --no-index --no-deps --no-compile --target "$site" "${wheels[@]}" || exit 1
  echo "=== repaired torchvision, nvidia-nvjpeg: $nvjpeg"
  PYTHONPATH=$site python3 -W ignore "$example/decode.py" 2>&1 | sed "s#$site#SITE#g" | tail -5
done
