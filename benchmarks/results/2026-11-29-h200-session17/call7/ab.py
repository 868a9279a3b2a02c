"""A/B in one process: the example as committed (accumulate=False) against its parent (fill)."""
import importlib.util, sys, types
sys.path.insert(0, "benchmarks")
import _common
import attention as bench

def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); return m

new = _common.example("attention")
old = load(".gpu-scratch/attention_fill.py", "att_fill")
_common.select_backend("cuda")
args = types.SimpleNamespace(seq=4096, reps=10)
for rnd in range(2):
    for d, batch, heads in ((64, 8, 32), (128, 4, 16)):
        for causal in (False, True):
            for tag, mod in (("accumulate=False", new), ("fill", old)):
                r = bench._one(mod, "float16", batch, heads, d, causal, args, "0x0x0")
                print(f"  ^ {tag}", flush=True)
