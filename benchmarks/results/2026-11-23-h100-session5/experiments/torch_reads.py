"""Per-read cost of what a launch must know of a CUDA tensor (H100 host), and whether the version
counter sees the in-place changes (it does not see .data =)."""
import timeit, weakref
import torch
t = torch.zeros(1024, device="cuda")
cls = type(t)
dp, gd, ic, dim = cls.data_ptr, cls.get_device, cls.is_contiguous, cls.dim
raw = torch._C._cuda_getCurrentRawStream
r = weakref.ref(t)
cases = [("empty lambda", lambda: None), ("type(t) is cls", lambda: type(t) is cls), ("weakref() is t", lambda: r() is t),
         ("t._version", lambda: t._version), ("t.dtype", lambda: t.dtype), ("t.ndim", lambda: t.ndim), ("t.dim()", lambda: dim(t)),
         ("t.get_device()", lambda: gd(t)), ("t.is_contiguous()", lambda: ic(t)), ("t.data_ptr()", lambda: dp(t)),
         ("t.shape", lambda: t.shape), ("current raw stream", lambda: raw(0))]
for name, f in cases:
    n = 200000
    print(f"{name:22s} {min(timeit.repeat(f, number=n, repeat=7)) / n * 1e9:7.1f} ns")
def probe(name, f):
    x = torch.arange(16., device="cuda").reshape(4, 4)
    v0, p0 = x._version, x.data_ptr()
    f(x)
    print(f"{name:24s} version {v0}->{x._version}  same pointer {x.data_ptr() == p0}  contiguous {x.is_contiguous()}  dtype {x.dtype}")
probe("t_()", lambda x: x.t_())
probe("resize_(2, 2)", lambda x: x.resize_(2, 2))
probe("as_strided_", lambda x: x.as_strided_((2, 2), (1, 4)))
def d1(x): x.data = x.data.t()
probe(".data = x.data.t()", d1)
def d2(x): x.data = x.data.view(torch.int32)
probe(".data = view(int32)", d2)
