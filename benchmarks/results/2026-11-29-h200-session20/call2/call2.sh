#!/bin/bash
# session 20, call 2: the committed plans (full runs), a two-buffer held sweep for BF16, FP32 LayerNorm 32768 staged beside held
pip install -q --no-index --no-deps --target /tmp/site .gpu-wheels/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD
mkdir -p $OUT/full /tmp/sw
timeout 200 python benchmarks/norms.py --reps 10 --out $OUT/full > $OUT/full/fp32.txt 2>&1; echo "fp32 rc $?"
timeout 200 python benchmarks/norms.py --dtype bfloat16 --reps 10 --out $OUT/full > $OUT/full/bf16.txt 2>&1; echo "bf16 rc $?"
grep -c OK $OUT/full/fp32.txt $OUT/full/bf16.txt; grep -v OK $OUT/full/*.txt | head
timeout 120 python benchmarks/norms.py --dtype bfloat16 --pipelined 2 --ops layernorm rmsnorm --cols 65536 131072 262144 --reps 5 --out /tmp/sw > $OUT/sweep_bf16_two.txt 2>&1; echo "sw rc $?"
timeout 60 python benchmarks/norms.py --staged --ops layernorm --cols 32768 --reps 10 --out /tmp/sw > $OUT/ln32768_staged.txt 2>&1; echo "st rc $?"
ls $OUT $OUT/full
