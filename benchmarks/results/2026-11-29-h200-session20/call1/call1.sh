#!/bin/bash
# session 20, call 1: DRAM bytes against ncu at 2^26; held-weights sweep; corpus on CUDA
set -x
pip install -q --no-index --no-deps --target /tmp/site .gpu-wheels/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv | tee $OUT/device.txt
mkdir -p $OUT/dram $OUT/held $OUT/tests
timeout 150 python benchmarks/dram_vs_ncu.py --total 26 --profiles .gpu-scratch/dram_profiles_26.json --out $OUT/dram > $OUT/dram/dram.txt 2>&1; echo "dram rc $?"
tail -16 $OUT/dram/dram.txt
timeout 170 python benchmarks/norms.py --pipelined 1 --ops layernorm rmsnorm --cols 32768 65536 131072 262144 --reps 5 --out $OUT/held > $OUT/held/fp32.txt 2>&1; echo "fp32 rc $?"
timeout 150 python benchmarks/norms.py --dtype bfloat16 --pipelined 1 --ops layernorm rmsnorm --cols 32768 65536 131072 262144 --reps 5 --out $OUT/held/bf16 > $OUT/held/bf16.txt 2>&1; echo "bf16 rc $?"
timeout 130 python -m pytest -q -n 8 -p no:cacheprovider tests/compat tests/numba -k "cuda or not (sim or opencl)" > $OUT/tests/compat-cuda.txt 2>&1; echo "tests rc $?"
tail -5 $OUT/tests/compat-cuda.txt
