"""Ahead-of-time export: a kernel as a C header and a C source that launch it with no Python.

    gpukern export FILE.py:KERNEL --signature 'float32[:]' float32 int32 --backend opencl -o DIR
    gk.tools.export.export(kernel, Array[float32], float32, int32, backend="cuda", out="DIR")

For one kernel and one signature (a variant), ``DIR/gk_<kernel>.h`` declares and ``DIR/gk_<kernel>.c``
defines ``gk_<kernel>_launch(stream, grid, block, args...)``, which returns the driver's error
code.  ``grid`` counts blocks and ``block`` threads, as ``kernel[grid, block]`` does.  An array
argument is the device memory (``CUdeviceptr``, ``cl_mem``) followed by its extents (``int64_t``,
one per dimension, as NumPy's ``shape``); scalars are C's fixed-width types (``bool`` a C ``bool``,
``float16`` a ``float``).  The code travels inside the C: for CUDA a cubin per named architecture
and the PTX of the newest, which newer GPUs compile when loaded; for HIP one code object bundle for
the named gfx targets (hipcc); for OpenCL the OpenCL C, built for the queue's device at the first
launch.  Modules and programs are loaded at the first launch
in a context and kept (a later launch in another context loads again); that first launch is not
thread-safe.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..backends.cuda_compile import cubin, kernel_arch
from ..backends.nvrtc import library as nvrtc_library
from ..codegen.dialects import CUDA
from ..codegen.names import global_identifier
from ..errors import CompileError, LaunchError
from ..kernel import Kernel
from ..types import ArrayType, ScalarType

BACKENDS = ("cuda", "opencl", "hip")
DEFAULT_ARCHS = ("sm_80", "sm_90")
DEFAULT_HIP_ARCHS = ("gfx908", "gfx90a", "gfx1030")  # what every hipcc since ROCm 5 knows; add gfx942, gfx1100

# gpukern scalar type -> (the launch function's C type, OpenCL's C type of the kernel parameter)
_SCALARS = {
    "bool": ("bool", "cl_uchar"),
    "int8": ("int8_t", "cl_char"),
    "uint8": ("uint8_t", "cl_uchar"),
    "int16": ("int16_t", "cl_short"),
    "uint16": ("uint16_t", "cl_ushort"),
    "int32": ("int32_t", "cl_int"),
    "uint32": ("uint32_t", "cl_uint"),
    "int64": ("int64_t", "cl_long"),
    "uint64": ("uint64_t", "cl_ulong"),
    "float16": ("float", "cl_float"),  # a half goes as the float of its value (both dialects)
    "float32": ("float", "cl_float"),
    "float64": ("double", "cl_double"),
}


def _c_string(text: str) -> str:
    """``text`` as C string literals, a line each."""
    out = []
    for line in text.splitlines(keepends=True):
        esc = line.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
        out.append(f'    "{esc}"')
    return "\n".join(out) or '    ""'


def _c_bytes(data: bytes) -> str:
    rows = [", ".join(f"0x{b:02x}" for b in data[i : i + 16]) for i in range(0, len(data), 16)]
    return ",\n".join("    " + r for r in rows)


def _refuse(kernel: Kernel, what: str, instead: str) -> None:
    raise CompileError(f"gpukern export: kernel {kernel.__name__} {what}; {instead}")


def _parameters(kernel: Kernel, variant: Any) -> list[tuple[str, str, str]]:
    """The launch function's parameters after the stream, grid and block: (C type, name, what it is:
    'array', 'extent' or the scalar type's name), each array followed by its extents."""
    out: list[tuple[str, str, str]] = []
    for spec, arg in zip(kernel.params, variant.arg_types):
        if isinstance(arg, tuple) and arg and arg[0] == "const":
            continue  # a Const: part of the variant, no argument
        if isinstance(arg, ArrayType):
            out.append(("@array", spec.name, "array"))
            out += [("int64_t", f"{spec.name}_shape{d}", "extent") for d in range(arg.ndim)]
        elif isinstance(arg, ScalarType) and arg.name in _SCALARS:
            out.append((_SCALARS[arg.name][0], spec.name, arg.name))
        else:
            _refuse(kernel, f"has parameter {spec.name!r} of type {arg}", "export takes arrays and real scalars")
    return out


def export(
    kernel: Kernel,
    *types: Any,
    backend: str = "opencl",
    out: str | Path = ".",
    archs: tuple[str, ...] = DEFAULT_ARCHS,
    ptx: bool = True,
) -> list[Path]:
    """Write ``gk_<kernel>.h`` and ``gk_<kernel>.c`` into ``out`` for the variant ``types`` select
    (example arguments or types, as ``kernel.source`` takes them); returns the two paths.  CUDA:
    a cubin for each of ``archs`` and, with ``ptx``, the PTX of the newest; HIP: one code object
    bundle for the gfx targets of ``archs`` (default ``DEFAULT_HIP_ARCHS``)."""
    if not isinstance(kernel, Kernel):
        raise LaunchError(f"gpukern export takes a @gk.kernel, not {type(kernel).__name__}")
    if backend not in BACKENDS:
        raise LaunchError(f"gpukern export: backend {backend!r}; choose 'cuda', 'opencl' or 'hip'")
    variant = kernel.specialise(*types)
    if variant.tuples:
        _refuse(kernel, "takes a tuple argument", "pass its items as parameters of their own")
    if variant.dynamic_shared:
        _refuse(kernel, "declares dynamic_shared()", "export a kernel with shared() arrays of a Const size")
    if variant.program.captured:
        _refuse(kernel, "reads device arrays of its module", "pass them to it as arguments")
    if variant.grid_sync:
        _refuse(kernel, "calls grid_sync() (a cooperative launch)", "split it into two kernels launched in turn")
    if any(p.kind == "tensor_map" for p in variant.kernel_params):
        _refuse(
            kernel,
            "copies with TMA (gk.tensor_map: a descriptor made at launch by the driver)",
            "launch it from Python, or export a kernel that reads its tiles with ordinary loads",
        )
    params = _parameters(kernel, variant)
    name = re.sub(r"\W", "_", kernel.__name__)
    cname = global_identifier(variant.program.kernel.name)
    source = variant.source(backend)
    where = variant.about(backend)["source"]
    signature = ", ".join(f"{p.name}: {t}" for p, t in zip(kernel.params, variant.arg_types))
    directory = Path(out)
    directory.mkdir(parents=True, exist_ok=True)
    if backend == "cuda":
        header, body = _cuda(name, cname, source, params, variant, archs, ptx)
    elif backend == "hip":
        targets = archs if archs and all(a.startswith("gfx") for a in archs) else DEFAULT_HIP_ARCHS
        header, body = _hip(name, cname, source, params, variant, targets)
    else:
        header, body = _opencl(name, cname, source, params, variant)
    about = f"/* {kernel.__name__} ({where}), exported by gpukern for {backend}: ({signature}) */\n"
    guard = f"GK_{name.upper()}_H"
    h = directory / f"gk_{name}.h"
    c = directory / f"gk_{name}.c"
    h.write_text(
        f"{about}#ifndef {guard}\n#define {guard}\n\n#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n"
        f"{header}\n#endif\n"
    )
    c.write_text(f'{about}#include "gk_{name}.h"\n\n{body}')
    return [h, c]


# A float16 scalar goes to the kernel as the float of its value (the C parameters are floats), rounded
# to half precision first as gpukern's own launches round it (ties to even; past 65504: infinity)
_HALF_ROUND = """/* f rounded to the nearest float16 value (ties to even), as a float */
static float gk_half_round(float f)
{
    union { float f; uint32_t u; } v;
    uint32_t sign, a;
    v.f = f;
    sign = v.u & 0x80000000u;
    a = v.u & 0x7fffffffu;
    if (a >= 0x7f800000u) return f; /* inf, nan */
    if (a >= 0x477ff000u) { /* 65520 and above: infinity */
        v.u = sign | 0x7f800000u;
        return v.f;
    }
    if (a < 0x38800000u) { /* below half's normals: a multiple of 2^-24, by float's own rounding */
        volatile float scaled = (sign ? -f : f) * 16777216.0f + 8388608.0f;
        float r = (scaled - 8388608.0f) / 16777216.0f;
        return sign ? -r : r;
    }
    a = (a + 0xfffu + ((a >> 13) & 1u)) & ~0x1fffu; /* 10 mantissa bits, ties to even */
    v.u = sign | a;
    return v.f;
}

"""


def _has_half(params: list[tuple[str, str, str]]) -> bool:
    return any(what == "float16" for _, _, what in params)


def _value(name: str, what: str) -> str:
    """The C expression of a scalar argument as the kernel takes it."""
    return f"gk_half_round({name})" if what == "float16" else name


def _unused(params: list[tuple[str, str, str]], variant: Any) -> list[str]:
    """``(void)name;`` for the launch function's parameters the kernel does not take (an extent its
    code never reads), so that the C compiles without warnings."""
    used = {kp.name if kp.kind != "shape" else f"{kp.name}_shape{kp.dim}" for kp in variant.kernel_params}
    return [f"    (void){n};" for _, n, _ in params if n not in used]


def _signature(params: list[tuple[str, str, str]], pointer: str) -> str:
    return ", ".join(f"{pointer if t == '@array' else t} {n}" for t, n, _ in params)


def _declaration(name: str, result: str, head: str, params: list[tuple[str, str, str]], pointer: str) -> str:
    rest = _signature(params, pointer)
    return f"{result} gk_{name}_launch({head}{', ' + rest if rest else ''})"


def _extern_c(text: str) -> str:
    return f'\n#ifdef __cplusplus\nextern "C" {{\n#endif\n\n{text}\n\n#ifdef __cplusplus\n}}\n#endif\n'


def _cuda(
    name: str, cname: str, source: str, params: list, variant: Any, archs: tuple[str, ...], ptx: bool
) -> tuple[str, str]:
    flags = variant.options.flags("cuda")
    images = []
    for arch in archs:
        target = kernel_arch(arch, variant.matrix_capability)
        if target is None:
            raise CompileError(f"gpukern export: {variant.kernel.__name__} cannot run on {arch} (its matrix units)")
        images.append((int(re.sub(r"\D", "", target)), target, cubin(source, target, flags)))
    newest = max(images)[1] if images else "sm_80"
    ptx_text = ""
    if ptx:
        lib = nvrtc_library()
        if lib is None:
            raise CompileError("gpukern export: the PTX needs NVRTC (pip install nvidia-cuda-nvrtc), or pass ptx=False")
        ptx_text = lib.ptx(source, newest, flags)
    decl = _declaration(name, "CUresult", "CUstream stream, const unsigned int grid[3], const unsigned int block[3]",
                        params, "CUdeviceptr")  # fmt: skip
    header = "#include <cuda.h>\n" + _extern_c(
        f"/* Launches {cname} on ``stream`` (0: the legacy default stream) in the current context; loads\n"
        " * its module there at the first launch. Returns the driver's result (CUDA_SUCCESS: queued). */\n"
        f"{decl};"
    )
    body = [_HALF_ROUND] if _has_half(params) else []
    body += [f"static const unsigned char gk_cubin_{t}[] = {{\n{_c_bytes(b)}\n}};\n" for _, t, b in images]
    table = ", ".join(f"{{{cc}, gk_cubin_{t}}}" for cc, t, _ in images)
    body.append(f"static const struct {{ int cc; const unsigned char* image; }} gk_images[] = {{{table}}};\n")
    body.append(f"static const char gk_ptx[] =\n{_c_string(ptx_text)};\n")
    ptx_cc = int(re.sub(r"\D", "", newest)) if ptx else 100000
    body.append(
        f"""static CUcontext gk_context;
static CUmodule gk_module;
static CUfunction gk_function;

/* The kernel of this context: the cubin of the device's compute capability, else the PTX. */
static CUresult gk_load(void)
{{
    CUcontext ctx;
    CUdevice dev;
    CUmodule module;
    CUfunction function;
    const void* image = NULL;
    int major, minor, cc;
    size_t i;
    CUresult err = cuCtxGetCurrent(&ctx);
    if (err != CUDA_SUCCESS) return err;
    if (ctx == NULL) return CUDA_ERROR_INVALID_CONTEXT;
    if (gk_function != NULL && ctx == gk_context) return CUDA_SUCCESS;
    if ((err = cuCtxGetDevice(&dev)) != CUDA_SUCCESS) return err;
    err = cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    if (err != CUDA_SUCCESS) return err;
    err = cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    if (err != CUDA_SUCCESS) return err;
    cc = 10 * major + minor;
    for (i = 0; i < sizeof gk_images / sizeof gk_images[0]; i++) {{
        if (gk_images[i].cc == cc) image = gk_images[i].image;
    }}
    if (image == NULL && gk_ptx[0] != '\\0' && cc >= {ptx_cc}) image = gk_ptx;
    if (image == NULL) return CUDA_ERROR_NO_BINARY_FOR_GPU;
    if ((err = cuModuleLoadData(&module, image)) != CUDA_SUCCESS) return err;
    if ((err = cuModuleGetFunction(&function, module, "{cname}")) != CUDA_SUCCESS) {{
        cuModuleUnload(module);
        return err;
    }}
    gk_context = ctx;
    gk_module = module;
    gk_function = function;
    return CUDA_SUCCESS;
}}
"""
    )
    values, pointers = _by_pointer(variant)
    unused = _unused(params, variant)
    args = ", ".join(pointers) or "NULL"
    body.append(
        f"""{decl}
{{
    CUresult err = gk_load();
{chr(10).join(values + unused)}
    void* params[] = {{{args}}};
    if (err != CUDA_SUCCESS) return err;
    return cuLaunchKernel(gk_function, grid[0], grid[1], grid[2], block[0], block[1], block[2], 0, stream,
                          params, NULL);
}}
"""
    )
    return header, "\n".join(body)


def _param_type(t: ScalarType) -> str:
    """The C type of a scalar kernel parameter in CUDA's and HIP's C (the dialect's own: a half
    goes as a float)."""
    return CUDA.scalar_params.get(t, (CUDA.types[t],))[0]


def _by_pointer(variant: Any) -> tuple[list[str], list[str]]:
    """The C lines holding each kernel argument as the kernel takes it, and their addresses: the
    ``kernelParams`` of ``cuLaunchKernel`` and ``hipModuleLaunchKernel``."""
    values, pointers = [], []
    for kp in variant.kernel_params:
        if kp.kind == "array":
            pointers.append(f"&{kp.name}")
            continue
        v = f"gk_p{len(values)}"
        if kp.kind == "shape":
            values.append(f"    long long {v} = (long long){kp.name}_shape{kp.dim};")
        else:
            t = kp.type.name
            values.append(f"    {_param_type(kp.type)} {v} = {_value(kp.name, t)};")
        pointers.append(f"&{v}")
    return values, pointers


def _hip(
    name: str, cname: str, source: str, params: list, variant: Any, archs: tuple[str, ...]
) -> tuple[str, str]:
    from ..backends.hip_compile import code_object

    if variant.matrix_capability is not None:
        raise CompileError(f"gpukern export: {variant.kernel.__name__} uses matrix units, which HIP's dialect lacks")
    bundle = code_object(source, archs)
    head = "hipStream_t stream, const unsigned int grid[3], const unsigned int block[3]"
    decl = _declaration(name, "hipError_t", head, params, "hipDeviceptr_t")
    header = (
        "#if !defined(__HIP_PLATFORM_AMD__) && !defined(__HIP_PLATFORM_NVIDIA__)\n"
        "#define __HIP_PLATFORM_AMD__\n#endif\n"
        "#include <hip/hip_runtime_api.h>\n"
        + _extern_c(
            f"/* Launches {cname} on ``stream`` (0: the null stream) on the current device; loads its code\n"
            f" * object ({', '.join(archs)}) there at the first launch. Returns HIP's result (hipSuccess: queued). */\n"
            f"{decl};"
        )
    )
    values, pointers = _by_pointer(variant)
    unused = _unused(params, variant)
    body = [_HALF_ROUND] if _has_half(params) else []
    body.append(f"static const unsigned char gk_bundle[] = {{\n{_c_bytes(bundle)}\n}};\n")
    body.append(
        f"""static int gk_device = -1;
static hipModule_t gk_module;
static hipFunction_t gk_function;

/* The kernel on the current device: the bundle's code object for its target. */
static hipError_t gk_load(void)
{{
    hipModule_t module;
    hipFunction_t function;
    int dev;
    hipError_t err = hipGetDevice(&dev);
    if (err != hipSuccess) return err;
    if (gk_function != NULL && dev == gk_device) return hipSuccess;
    if ((err = hipModuleLoadData(&module, gk_bundle)) != hipSuccess) return err;
    if ((err = hipModuleGetFunction(&function, module, "{cname}")) != hipSuccess) {{
        hipModuleUnload(module);
        return err;
    }}
    gk_device = dev;
    gk_module = module;
    gk_function = function;
    return hipSuccess;
}}

{decl}
{{
    hipError_t err = gk_load();
{chr(10).join(values + unused)}
    void* params[] = {{{", ".join(pointers) or "NULL"}}};
    if (err != hipSuccess) return err;
    return hipModuleLaunchKernel(gk_function, grid[0], grid[1], grid[2], block[0], block[1], block[2], 0, stream,
                                 params, NULL);
}}
"""
    )
    return header, "\n".join(body)


def _opencl(name: str, cname: str, source: str, params: list, variant: Any) -> tuple[str, str]:
    flags = " ".join(variant.options.flags("opencl"))
    decl = _declaration(name, "cl_int", "cl_command_queue queue, const size_t grid[3], const size_t block[3]",
                        params, "cl_mem")  # fmt: skip
    header = "#define CL_TARGET_OPENCL_VERSION 120\n#include <CL/cl.h>\n" + _extern_c(
        f"/* Launches {cname} on ``queue``; builds its program for the queue's device at the first launch\n"
        " * in a context. Returns OpenCL's error code (CL_SUCCESS: queued). */\n"
        f"{decl};"
    )
    sets = []
    for i, kp in enumerate(variant.kernel_params):
        if kp.kind == "array":
            sets.append(f"    err = clSetKernelArg(gk_kernel, {i}, sizeof(cl_mem), &{kp.name});\n"
                        "    if (err != CL_SUCCESS) return err;")  # fmt: skip
        else:
            t = "cl_long" if kp.kind == "shape" else _SCALARS[kp.type.name][1]
            value = f"{kp.name}_shape{kp.dim}" if kp.kind == "shape" else _value(kp.name, kp.type.name)
            sets.append(f"    {{\n        {t} v = ({t}){value};\n"
                        f"        err = clSetKernelArg(gk_kernel, {i}, sizeof v, &v);\n"
                        "        if (err != CL_SUCCESS) return err;\n    }")  # fmt: skip
    unused = _unused(params, variant)
    body = f"""{_HALF_ROUND if _has_half(params) else ""}static const char gk_source[] =
{_c_string(source)};

static cl_context gk_context;
static cl_program gk_program;
static cl_kernel gk_kernel;

/* The kernel of the queue's context, its program built for the queue's device at the first launch. */
static cl_int gk_load(cl_command_queue queue)
{{
    cl_context ctx;
    cl_device_id dev;
    cl_program program;
    cl_kernel kernel;
    const char* text = gk_source;
    cl_int err = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof ctx, &ctx, NULL);
    if (err != CL_SUCCESS) return err;
    if (gk_kernel != NULL && ctx == gk_context) return CL_SUCCESS;
    if ((err = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL)) != CL_SUCCESS) return err;
    program = clCreateProgramWithSource(ctx, 1, &text, NULL, &err);
    if (err != CL_SUCCESS) return err;
    if ((err = clBuildProgram(program, 1, &dev, "{flags}", NULL, NULL)) != CL_SUCCESS) {{
        clReleaseProgram(program);
        return err;
    }}
    kernel = clCreateKernel(program, "{cname}", &err);
    if (err != CL_SUCCESS) {{
        clReleaseProgram(program);
        return err;
    }}
    if (gk_kernel != NULL) {{
        clReleaseKernel(gk_kernel);
        clReleaseProgram(gk_program);
    }}
    gk_context = ctx;
    gk_program = program;
    gk_kernel = kernel;
    return CL_SUCCESS;
}}

{decl}
{{
    size_t global[3];
    int d;
    cl_int err = gk_load(queue);
    if (err != CL_SUCCESS) return err;
{chr(10).join(sets + unused)}
    for (d = 0; d < 3; d++) global[d] = grid[d] * block[d];
    return clEnqueueNDRangeKernel(queue, gk_kernel, 3, NULL, global, block, 0, NULL, NULL);
}}
"""
    return header, body
