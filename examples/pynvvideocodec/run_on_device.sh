#!/usr/bin/env bash
# Install the repaired PyNvVideoCodec with each CUDA 12 runtime wheel (its floor, the newest, none)
# into a fresh venv, offline, and decode clip.mp4 on NVDEC.
#   run_on_device.sh WHEELS   (WHEELS holds repaired/*.whl and nvidia_cuda_runtime_cu12-*.whl)
set -u
example=$(cd "$(dirname "$0")" && pwd)
cd "$1"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 --version
ls /usr/local/cuda/lib64/libcudart.so* 2>/dev/null
ldconfig -p | grep -c "libcudart.so.12"
for v in 12.3.101 12.9.79 none; do
  echo "=== nvidia-cuda-runtime-cu12: $v"
  python3 -m venv "/tmp/v-$v"
  wheels=(repaired/*.whl)
  [ "$v" != none ] && wheels+=(nvidia_cuda_runtime_cu12-"$v"-*.whl)
  "/tmp/v-$v/bin/pip" install -q --no-index --no-deps "${wheels[@]}" 2>&1 | tail -2
  site=$("/tmp/v-$v/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  ls -d "$site"/pynvvideocodec.* 2>/dev/null
  ldd "$site"/PyNvVideoCodec/PyNvVideoCodec_130*.so | grep -E "cudart|nvcuvid|not found"
  (cd /tmp && "/tmp/v-$v/bin/python" "$example/run_decode.py" "$example/clip.mp4" > "/tmp/out-$v.txt" 2>&1; echo "exit $?")
  sed "s#$site#...#g" "/tmp/out-$v.txt" | tail -8
done
