#!/bin/bash
# session 20, call 4: the committed kernels: norms FP32 and BF16, attention, the corpus and the Numba layer on CUDA
pip install -q --no-index --no-deps --target /tmp/site .gpu-wheels/*.whl 2>&1 | grep -v WARNING | tail -2
export PYTHONPATH=/tmp/site:$PWD
mkdir -p /tmp/r
git log --oneline -1 > $OUT/commit.txt 2>/dev/null
timeout 150 python benchmarks/norms.py --reps 10 --out /tmp/r > $OUT/fp32.txt 2>&1; echo "fp32 rc $?"
timeout 150 python benchmarks/norms.py --dtype bfloat16 --reps 10 --out /tmp/r > $OUT/bf16.txt 2>&1; echo "bf16 rc $?"
timeout 150 python benchmarks/attention.py --reps 10 --out /tmp/r > $OUT/attention.txt 2>&1; echo "att rc $?"
timeout 100 python -m pytest -q -n 8 -p no:cacheprovider tests/compat tests/numba tests/test_rowwise.py -k "cuda or not (sim or opencl)" > $OUT/tests.txt 2>&1; echo "tests rc $?"
tail -3 $OUT/tests.txt; grep goal $OUT/*.txt
tar czf $OUT/results.tar.gz -C /tmp/r .
