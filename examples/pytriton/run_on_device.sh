#!/usr/bin/env bash
# The repaired nvidia-pytriton 0.7.0's tritonserver, started on the GPU with an empty model repository,
# once with nvidia-cuda-runtime-cu12 12.6.77 (the floor repair set, the release its dropped copy was)
# and once without it; each in a fresh venv, offline.
#   run_on_device.sh WHEELS   (WHEELS holds repaired/nvidia_pytriton-*.whl and nvidia_cuda_runtime_cu12-*.whl)
set -u
cd "$1"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
ls /usr/lib/x86_64-linux-gnu/libcudart.so.12* /usr/local/cuda*/lib64/libcudart.so.12* 2>/dev/null \
  || echo "no libcudart.so.12 on the host"
mkdir -p /tmp/models
for cudart in 12.6.77 none; do
  venv=/tmp/venv-$cudart; rm -rf "$venv"; python3 -m venv "$venv"
  wheels=(repaired/*.whl)
  [ "$cudart" != none ] && wheels+=(nvidia_cuda_runtime_cu12-"$cudart"-*.whl)
  "$venv/bin/pip" install -q --no-index --no-deps "${wheels[@]}" || exit 1
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  log=/tmp/triton-$cudart.log
  echo "=== nvidia-cuda-runtime-cu12: $cudart"
  LD_DEBUG=libs timeout 40 "$site/pytriton/tritonserver/bin/tritonserver" --model-repository=/tmp/models \
    --http-port 18000 --grpc-port 18001 --metrics-port 18002 > "$log" 2>&1 &
  pid=$!
  for _ in $(seq 1 30); do grep -q "Started HTTPService\|error while loading" "$log" && break; sleep 1; done
  curl -s -o /dev/null -w "health/ready: HTTP %{http_code}\n" localhost:18000/v2/health/ready
  kill $pid 2>/dev/null; wait $pid 2>/dev/null
  grep -E "calling init: .*libcudart|error while loading|CUDA memory pool|Started HTTPService" "$log" \
    | sed "s#$site#SITE#g" | head -6
done
