#!/bin/bash
# benchmarks/bench_parallel_inflate.py on the GPU machine's host (16 cores, no network): a wheel made
# there of torch's libtorch_cuda.so (deflated as wheels are), ISA-L against rapidgzip on 1-16 threads,
# cp of the wheel and the sha256 of the library. The isal and rapidgzip wheels for its Python (3.12)
# travel in .device/bench (git-ignored), downloaded here with
#   pip download --no-deps --only-binary :all: --platform manylinux_2_28_x86_64 --python-version 3.12 \
#     -d .device/bench rapidgzip isal
# and the run names it in carry: run(command="bash benchmarks/parallel_inflate_on_device.sh",
# carry=[".device/bench"]).
set -e
nproc
python3 -m venv --system-site-packages /tmp/v >/dev/null
/tmp/v/bin/pip install -q --no-index --no-deps .device/bench/*.whl
LIB=$(python3 -c "import torch, os; print(os.path.join(os.path.dirname(torch.__file__), 'lib', 'libtorch_cuda.so'))")
ls -la "$LIB"
/tmp/v/bin/python - "$LIB" <<'PY'
import sys, time, zipfile
t = time.time()
with zipfile.ZipFile("/tmp/torchlib-1.0-py3-none-any.whl", "w", zipfile.ZIP_DEFLATED) as z:
    z.write(sys.argv[1], "torchlib/libtorch_cuda.so")
print(f"deflated in {time.time() - t:.1f} s")
PY
ls -la /tmp/torchlib-1.0-py3-none-any.whl
/tmp/v/bin/python -m benchmarks.bench_parallel_inflate /tmp/torchlib-1.0-py3-none-any.whl --repeat 3 --threads 1 2 4 8 16
cat /tmp/torchlib-1.0-py3-none-any.whl > /dev/null
for i in 1 2 3; do /usr/bin/time -f "cp %e s" cp /tmp/torchlib-1.0-py3-none-any.whl /tmp/copy.whl; rm /tmp/copy.whl; done
/tmp/v/bin/python -c "
import hashlib, time
data = open('$LIB', 'rb').read()
t = time.perf_counter(); hashlib.sha256(data).hexdigest(); print(f'sha256 of {len(data)>>20} MiB: {time.perf_counter()-t:.2f} s')"
