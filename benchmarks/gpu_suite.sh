#!/usr/bin/env bash
# What runs on the GPU test machine (see benchmarks/results/): installs the carried
# wheels, runs the test suite on the CUDA backend, the flagship example, and a
# second process that must load the flagship's binary from the disk cache.
# Usage there: bash benchmarks/gpu_suite.sh OUTDIR
set -uo pipefail
out="${1:?usage: gpu_suite.sh OUTDIR}"
mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpu-wheels/*.whl || exit 1
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1 GPUKERN_CACHE_DIR=/tmp/gk-cache
{
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  nvcc --version | tail -2; python3 --version
  python3 -c "import gpukern as gk; print('backends:', gk.available_backends()); print(gk.get_backend().device_name())"
} 2>&1 | tee "$out/env.txt"
for tile in 16 32; do
  python3 examples/matmul_tiled.py --size 2048 --tile $tile --naive 2>&1 | tee -a "$out/example.txt"
done
probe='import gpukern as gk, runpy, sys; sys.argv=["x", "--size", "1024"]; 
try: runpy.run_path("examples/matmul_tiled.py", run_name="__main__")
except SystemExit: pass
print("cache_info:", gk.cache_info())'
rm -rf /tmp/gk-cache
{ echo "# first process (cold cache)"; python3 -c "$probe"; echo "# second process (warm disk cache)"; python3 -c "$probe"; } 2>&1 | tee "$out/cache.txt"
python3 -m pytest -q -p no:cacheprovider -rs -p no:benchmark --durations=15 ${GK_TESTS:-tests} 2>&1 | tee "$out/tests.txt"
