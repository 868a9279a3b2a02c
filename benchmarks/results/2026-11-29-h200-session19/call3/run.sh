pip install -q --no-index --no-deps --target /tmp/site .gpu-wheels/*.whl 2>&1 | grep -v WARNING | tail -2  # (the wheels carried in)
export PYTHONPATH=/tmp/site:$PWD
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats"
run() { name=$1; shift; timeout 100 ncu --launch-skip 2 --launch-count 1 $S python benchmarks/results/2026-11-29-h200-session19/call3/ncu_rows.py "$@" > $OUT/$name.txt 2>&1; echo "$name rc $?"; }
run fp32_ln_262144_pipe layernorm float32 262144 512 1 8 64 1 0 1
run fp32_ln_262144_staged layernorm float32 262144 512 1 8 64 1 1 0
run fp32_ln_16384_pipe layernorm float32 16384 512 1 1 32 1 0 1
run fp32_ln_16384_regs layernorm float32 16384 512 1 1 32 1 0 0
run bf16_ln_65536_pipe layernorm bfloat16 65536 512 1 2 64 1 0 1
run bf16_ln_65536_regs layernorm bfloat16 65536 128 1 8 64 2 0 0
