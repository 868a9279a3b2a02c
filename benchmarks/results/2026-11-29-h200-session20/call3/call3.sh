#!/bin/bash
# session 20, call 3: sweeps for the pairs still below 0.9 (BF16 short rows; softmax long rows)
pip install -q --no-index --no-deps --target /tmp/site .gpu-wheels/*.whl 2>&1 | grep -v WARNING | tail -2
export PYTHONPATH=/tmp/site:$PWD
mkdir -p /tmp/sw
timeout 200 python benchmarks/norms.py --dtype bfloat16 --sweep --pipelined 1 2 --ops softmax layernorm --cols 2048 4096 --reps 5 --out /tmp/sw > $OUT/short_bf16.txt 2>&1; echo "short rc $?"
timeout 120 python benchmarks/norms.py --pipelined 1 2 --ops softmax --cols 131072 262144 --reps 5 --out /tmp/sw > $OUT/softmax_fp32.txt 2>&1; echo "sm32 rc $?"
timeout 150 python benchmarks/norms.py --dtype bfloat16 --pipelined 1 2 --ops softmax layernorm --cols 65536 131072 262144 --reps 5 --out /tmp/sw > $OUT/long_bf16.txt 2>&1; echo "long rc $?"
