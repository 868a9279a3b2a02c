"""The multi-GPU example: Dask spreads jobs over one worker per device, each checking its result.

Here the workers run the simulator or OpenCL (CI has no GPU); the speedup on two GPUs is
measured on the GPU machine by ``examples/multi_gpu_matmul.py --compare --json OUT``.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "multi_gpu_matmul.py"


@pytest.mark.slow  # (minutes of the README command's 2 cores: .ci/run runs it after)
@pytest.mark.parametrize("backend_name", ["sim", "opencl"])
def test_two_workers_share_the_batch_and_check_it(backend_name, tmp_path):
    pytest.importorskip("distributed")
    import gpukern as gk

    if backend_name not in gk.available_backends():
        pytest.skip(f"no {backend_name} backend here")
    out = tmp_path / "runs.json"
    env = dict(os.environ, GPUKERN_BACKEND=backend_name)
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE), "--gpus", "2", "--size", "64", "--jobs", "6", "--reps", "1", "--json", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run,) = json.loads(out.read_text())
    assert run["workers"] == 2 and run["jobs"] == 6
    assert sorted(run["jobs_per_worker"]) == ["0", "1"]  # each worker process saw its own device number
    assert sum(run["jobs_per_worker"].values()) == 6
    assert run["max_error"] < 1e-3
    assert "OK" in proc.stdout


def test_host_values_match_the_fill_kernel(backend):
    """The host regenerates A and B with the kernel's hash: checking rests on that."""
    import numpy as np

    sys.path.insert(0, str(EXAMPLE.parent))
    try:
        import multi_gpu_matmul as mg
    finally:
        sys.path.remove(str(EXAMPLE.parent))
    import gpukern as gk

    a = gk.empty(5000, np.float32)
    mg.fill[20, 256](a, np.uint32(123456789))
    got = a.get()
    np.testing.assert_array_equal(got, mg.host_values(123456789, np.arange(5000)))
    assert -0.5 <= got.min() < -0.4 and 0.4 < got.max() < 0.5
