import timeit, torch
t = torch.ones(32, device="cuda")
cls = type(t)
dim, gd, ic, dp, st = cls.dim, cls.get_device, cls.is_contiguous, cls.data_ptr, cls.stride
raw = torch._C._cuda_getCurrentRawStream
f32 = torch.float32
N = 200000
def best(stmt):
    return min(timeit.repeat(stmt, number=N, repeat=7, globals=globals())) / N * 1e9
empty = best("pass")
for name, stmt in [
    ("t.dtype is f32", "t.dtype is f32"),
    ("dim(t) == 1", "dim(t) == 1"),
    ("t.ndim == 1", "t.ndim == 1"),
    ("gd(t) == 0", "gd(t) == 0"),
    ("t.is_cuda", "t.is_cuda"),
    ("t.device.index", "t.device.index"),
    ("ic(t)", "ic(t)"),
    ("t.is_contiguous()", "t.is_contiguous()"),
    ("st(t) == (1,)", "st(t) == (1,)"),
    ("t.stride() == (1,)", "t.stride() == (1,)"),
    ("dp(t)", "dp(t)"),
    ("t.data_ptr()", "t.data_ptr()"),
    ("t._version", "t._version"),
    ("raw(0)", "raw(0)"),
    ("current A", "t.dtype is f32 and dim(t) == 1 and gd(t) == 0 and ic(t); dp(t)"),
    ("B ndim", "t.dtype is f32 and t.ndim == 1 and gd(t) == 0 and ic(t); dp(t)"),
    ("C stride", "t.dtype is f32 and st(t) == (1,) and gd(t) == 0; dp(t)"),
    ("D is_cuda+stride", "t.dtype is f32 and st(t) == (1,) and t.is_cuda; dp(t)"),
]:
    print(f"{name:24s} {best(stmt) - empty:7.1f} ns")
