#!/usr/bin/env bash
# The "Fast kernels" measurements on the GPU test machine (see benchmarks/results/):
# installs the carried wheels, then runs the fast SGEMM with autotuning, the matmul,
# launch-overhead and compile-cost benchmarks, and optionally tests.
# Usage there: bash benchmarks/gpu_perf.sh OUTDIR   (GK_TESTS="tests/..." adds a pytest run)
set -uo pipefail
out="${1:?usage: gpu_perf.sh OUTDIR}"
mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpu-wheels/*.whl || exit 1
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1 GPUKERN_CACHE_DIR=/tmp/gk-cache CUPY_TF32=0
{
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  nvcc --version | tail -2; python3 --version
  python3 -c "import gpukern as gk; print(gk.get_backend().device_name())"
} 2>&1 | tee "$out/env.txt"
step() { local name=$1 limit=$2; shift 2; echo "### $*" | tee "$out/$name.txt"; timeout "$limit" "$@" 2>&1 | tee -a "$out/$name.txt"; }
step launch 120 python3 benchmarks/launch.py --backend cuda --out "$out"
step compile 120 python3 benchmarks/compile.py --backend cuda --out "$out"
step fast 200 python3 examples/matmul_fast.py --size ${GK_FAST_SIZE:-4096}
step matmul 330 python3 benchmarks/matmul.py --backend cuda --out "$out" ${GK_MATMUL_ARGS:---fast-configs none}
if [ -n "${GK_TESTS:-}" ]; then step tests 400 python3 -m pytest -q -p no:cacheprovider -rs $GK_TESTS; fi
