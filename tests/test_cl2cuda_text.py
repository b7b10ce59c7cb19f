"""clgemm/kernels/cl2cuda.h checked without a GPU.

GPU time is scarce, so as much as possible of the CUDA path is checked here, on the CPU:

* every OpenCL construct the kernels use (qualifiers, built-in functions, attributes, vector types
  and components, the hint macros a backend may define) has a mapping in cl2cuda.h;
* the backend's rewrite of `(float4)(a, b, c, d)` into a constructor call;
* each rung, translated as the CUDA backend translates it, compiles with g++ against a small
  emulation of the CUDA built-ins (one thread per work-item, real barriers, warp shuffles through
  memory) and then runs and multiplies correctly: this exercises the header's vector types,
  operators, loads and shuffles, not only its syntax;
* the same for the kernels `gemm` runs around the rungs (`blas_helpers.cl`: the pack kernels and
  the epilogue), launched with gemm's own geometry and checked element by element;
* where a CUDA toolkit is present, nvcc compiles each rung for sm_90, and where libnvrtc can be
  found, NVRTC (what CuPy uses) compiles it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Callable

import numpy as np
import pytest

from clgemm.backends.cuda import translate
from clgemm.configs import launch
from clgemm.core import accuracy
from clgemm.core.paths import KERNELS
from clgemm.rungs import LIBRARY, REGISTRY, TRANSPOSE_B

HEADER = (KERNELS / "cl2cuda.h").read_text()
KERNEL_FILES = sorted(KERNELS.glob("*.cl")) + [KERNELS / "common.h"]


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _kernel_text() -> str:
    return "\n".join(_strip_comments(p.read_text()) for p in KERNEL_FILES)


def _opencl_only(text: str) -> str:
    """Drop lines that only an OpenCL compiler sees: the branches of `#ifndef NAME` for names
    cl2cuda.h defines, of `#if defined(cl_...)` for OpenCL extensions (the CUDA compile skips
    both), and OpenCL pragmas."""
    defined = set(re.findall(r"#\s*define\s+(\w+)", HEADER))

    def skipped_on_cuda(s: str) -> bool:
        m = re.match(r"#\s*ifndef\s+(\w+)", s)
        return bool(m and m.group(1) in defined) or bool(
            re.match(r"#\s*(?:el)?if\s+defined\s*\(?\s*cl_\w+\s*\)?\s*$|#\s*ifdef\s+cl_", s))

    out, skip_depth, depth = [], None, 0
    for line in text.splitlines():
        s = line.strip()
        if re.match(r"#\s*if", s):
            depth += 1
            if skip_depth is None and skipped_on_cuda(s):
                skip_depth = depth
            continue
        if re.match(r"#\s*(elif|else)", s):
            if skip_depth == depth and not skipped_on_cuda(s):
                skip_depth = None
            continue
        if s.startswith("#endif"):
            if skip_depth == depth:
                skip_depth = None
            depth -= 1
            continue
        if skip_depth is None and not s.startswith("#pragma"):
            out.append(line)
    return "\n".join(out)


# Names a kernel may call that CUDA itself provides with the OpenCL meaning.
CUDA_NATIVE = {"min", "max", "fmin", "fmax", "fabs", "sqrt", "rsqrt", "exp", "log", "fmaf", "fma"}
C_KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "defined", "__attribute__",
              "volatile"}   # `asm volatile(...)`: inline PTX, the same in both languages
# Hint macros a rung defaults for OpenCL that need no CUDA definition (empty there is right).
OPENCL_ONLY_HINTS = {"SG_ATTR": "Intel's required sub-group size; a warp is always 32 lanes"}


def _header_names() -> set[str]:
    """Every function and macro cl2cuda.h defines."""
    macros = set(re.findall(r"#\s*define\s+(\w+)", HEADER))
    funcs = set(re.findall(r"\b(\w+)\s*\([^;{}]*\)\s*\{", HEADER))
    generated = {f"vload{n}" for n in (2, 4, 8, 16)} | {f"vstore{n}" for n in (2, 4, 8, 16)}
    # _Pragma is C99's and C++11's operator form of #pragma: both compilers know it
    return macros | funcs | generated | {"mad", "fma", "_Pragma"}


def _kernel_own_names(text: str) -> set[str]:
    names = set(re.findall(r"#\s*define\s+(\w+)", text))
    names |= set(re.findall(r"\bvoid\s+(\w+)\s*\(", text))
    for params in re.findall(r"#\s*define\s+\w+\(([^)]*)\)", text):  # macro parameters
        names |= set(re.findall(r"\w+", params))
    return names


def test_every_called_function_is_mapped():
    text = _opencl_only(_kernel_text())
    calls = set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", text))
    types = {"float", "int", "uint", "floatX"} | {f"float{n}" for n in (2, 4, 8, 16)}
    unknown = calls - C_KEYWORDS - types - _kernel_own_names(text) - _header_names() - CUDA_NATIVE
    attr_names = set(re.findall(r"__attribute__\s*\(\(\s*(\w+)", text))
    unknown -= attr_names  # checked by the attribute test
    assert not unknown, f"kernels call {sorted(unknown)}: map them in clgemm/kernels/cl2cuda.h"


def test_every_qualifier_is_mapped():
    text = _kernel_text()
    used = set(re.findall(r"\b(__kernel|__global|__local|__constant|__private)\b", text))
    assert used >= {"__kernel", "__global", "__local"}
    for q in used:
        assert re.search(rf"#define {q}\b", HEADER), q
    # The unprefixed spellings are legal OpenCL but too common as names to map; keep them out.
    bare = re.findall(r"\b(kernel\s+void|(?:global|local|constant|private)\s+(?:const\s+)?"
                      r"(?:float|int|uint|floatX)\b)", text)
    assert not bare, f"write the __-prefixed qualifiers: {bare}"
    if re.search(r"\brestrict\b", text):
        assert re.search(r"#define restrict\b", HEADER)


#: GNU attributes that CUDA C++ reads with the OpenCL meaning, so the header leaves them alone
NATIVE_ATTRIBUTES = {"aligned"}


def test_every_attribute_is_mapped():
    text = _opencl_only(_kernel_text())
    attrs = set(re.findall(r"__attribute__\s*\(\(\s*(\w+)", text))
    assert "reqd_work_group_size" in attrs
    for a in attrs - NATIVE_ATTRIBUTES:
        assert re.search(rf"#\s*define {a}\b", HEADER), f"attribute {a} is not mapped"


def test_every_vector_type_and_component_is_mapped():
    text = _kernel_text()
    vtypes = set(re.findall(r"\b((?:float|int|uint|half|double|char|uchar|short|ushort|long"
                            r"|ulong)(?:2|3|4|8|16))\b", text))
    assert "float4" in vtypes
    for t in vtypes:
        assert re.search(rf"#define {t}\b", HEADER), f"vector type {t} is not mapped"
    members = set()
    for body in re.findall(r"struct\s*\{([^{}]*)\};", HEADER):
        members |= set(re.findall(r"\b(\w+)\s*[,;]", body))
    comps = set(re.findall(r"\)\s*\.\s*(s[0-9a-fA-F]+|[xyzw]{1,4}|lo|hi|even|odd)\b", text))
    comps |= set(re.findall(r"\b[A-Za-z_]\w*(?:\[[^\]]*\])*\s*\.\s*(s[0-9a-fA-F]+|[xyzw]{1,4}|lo|hi"
                            r"|even|odd)\b", text))
    assert "s0" in comps
    assert comps <= members, f"components {sorted(comps - members)} are not mapped"


def test_backend_hint_macros_are_defined():
    """A rung leaves a hint to the backend as `#ifndef NAME` followed by an OpenCL default. The
    function-like ones (LOAD_GLOBAL(ptr, i), SHUFFLE(v, lane), ...) and RESTRICT are such hints;
    object-like defaults such as `#define PACK_TILE 16` are parameters, set by -D."""
    text = _kernel_text()
    guarded = set(re.findall(r"#\s*ifndef\s+(\w+)", text))
    function_like = set(re.findall(r"#\s*define\s+(\w+)\(", text))
    hints = (guarded & function_like) | {"RESTRICT"}
    assert {"RESTRICT", "LOAD_GLOBAL", "SHUFFLE"} <= hints
    for name in hints - set(OPENCL_ONLY_HINTS):
        assert re.search(rf"#\s*define {name}\b", HEADER), f"{name} is not defined for CUDA"
    # Rungs 8-10 test RESTRICT for emptiness by pasting; one token keeps that test meaningful.
    assert re.search(r"#define RESTRICT __restrict__\s*$", HEADER, flags=re.M)


@pytest.mark.parametrize("src,expected", [
    ("x = (float4)(a, b, c, d);", "x = float4(a, b, c, d);"),
    ("x = (float4)(0.0f);", "x = (float4)(0.0f);"),
    ("return (float2)(f(a, b), c);", "return float2(f(a, b), c);"),
    ("y = g(z)(a, b);", "y = g(z)(a, b);"),
    ("if (p)(a, b);", "if (p)(a, b);"),
    ("v = (float8)((float4)(1, 2, 3, 4), (float4)(5.0f));",
     "v = float8(float4(1, 2, 3, 4), (float4)(5.0f));"),
    ("acc += (b).s0 * (c);", "acc += (b).s0 * (c);"),
    ("#define ONES (float2)(1.0f, 1.0f)", "#define ONES float2(1.0f, 1.0f)"),
    ("#define PAIR(x) (float2)(x, x)\nPAIR(1)", "#define PAIR(x) float2(x, x)\nPAIR(1)"),
    ("#define CALL(f) (f)(1, 2)", "#define CALL(f) f(1, 2)"),
    ("#define F(a) (b, c)", "#define F(a) (b, c)"),
    ("y = f(x)(a, b) + (float2)(p, q);", "y = f(x)(a, b) + float2(p, q);"),
])
def test_translate_vector_literals(src, expected):
    assert translate(src) == expected


# ---- compile and run each rung on the CPU against an emulation of CUDA's built-ins ---------------

EMULATION = r"""
// A CPU stand-in for the CUDA built-ins that cl2cuda.h uses: each thread of a block is a
// std::thread, blocks run one after another (so __shared__ can be a function-level static),
// __syncthreads is a std::barrier and a warp shuffle goes through memory between two barriers.
#include <algorithm>
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __restrict__ __restrict
#define __align__(n) alignas(n)
#define warpSize 32
struct uint3 { unsigned x, y, z; };
struct dim3 { unsigned x, y, z; };
thread_local uint3 threadIdx;
uint3 blockIdx;
dim3 blockDim, gridDim;
struct float2 { float x, y; };
struct alignas(16) float4 { float x, y, z, w; };
template <class T> T __ldg(const T* p) { return *p; }
using std::max;  // CUDA's device min and max, for int and float alike
using std::min;
static std::barrier<>* emu_block_barrier;
struct EmuWarp { std::unique_ptr<std::barrier<>> bar; unsigned long long slot[32]; };
static std::vector<EmuWarp> emu_warps;
thread_local int emu_warp, emu_lane;
inline void __syncthreads() { emu_block_barrier->arrive_and_wait(); }
inline void __syncwarp() { emu_warps[emu_warp].bar->arrive_and_wait(); }
inline void __threadfence_block() { std::atomic_thread_fence(std::memory_order_seq_cst); }
template <class T> T __shfl_sync(unsigned, T v, int src, int = 32) {
  EmuWarp& w = emu_warps[emu_warp];
  std::memcpy(&w.slot[emu_lane], &v, sizeof(T));
  w.bar->arrive_and_wait();
  T r;
  std::memcpy(&r, &w.slot[src & 31], sizeof(T));
  w.bar->arrive_and_wait();
  return r;
}
template <class F> void emu_run(dim3 grid, dim3 block, F body) {
  gridDim = grid; blockDim = block;
  const int threads = block.x * block.y * block.z;
  for (unsigned by = 0; by < grid.y; by++)
    for (unsigned bx = 0; bx < grid.x; bx++) {
      blockIdx = {bx, by, 0};
      std::barrier<> bar(threads);
      emu_block_barrier = &bar;
      emu_warps.clear();
      emu_warps.resize((threads + 31) / 32);
      for (int w = 0; w < (int)emu_warps.size(); w++)
        emu_warps[w].bar.reset(new std::barrier<>(std::min(32, threads - 32 * w)));
      std::vector<std::thread> pool;
      for (int t = 0; t < threads; t++)
        pool.emplace_back([=] {
          threadIdx = {t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
          emu_warp = t / 32; emu_lane = t % 32;
          body();
        });
      for (auto& th : pool) th.join();
    }
}
"""

DRIVER_IO = r"""
static std::vector<float> emu_read(const char* path, size_t n) {
  std::vector<float> v(n);
  FILE* f = std::fopen(path, "rb");
  if (!f || std::fread(v.data(), 4, n, f) != n) { std::perror(path); std::exit(3); }
  std::fclose(f);
  return v;
}
static void emu_write(const char* path, const std::vector<float>& v) {
  FILE* f = std::fopen(path, "wb");
  if (!f || std::fwrite(v.data(), 4, v.size(), f) != v.size()) { std::perror(path); std::exit(3); }
  std::fclose(f);
}
"""

DRIVER = DRIVER_IO + r"""
int main(int argc, char** argv) {
  if (argc != 11) return 2;
  const int M = std::atoi(argv[1]), N = std::atoi(argv[2]), K = std::atoi(argv[3]);
  const dim3 grid{(unsigned)std::atoi(argv[4]), (unsigned)std::atoi(argv[5]), 1};
  const dim3 block{(unsigned)std::atoi(argv[6]), (unsigned)std::atoi(argv[7]), 1};
#ifdef EMU_TRANSPOSE
  std::vector<float> in = emu_read(argv[8], (size_t)M * N), out((size_t)M * N, NAN);
  auto k = reinterpret_cast<void (*)(int, int, const void*, void*)>(&EMU_KERNEL);
  emu_run(grid, block, [&] { k(M, N, in.data(), out.data()); });
#else
  std::vector<float> a = emu_read(argv[8], (size_t)M * K), b = emu_read(argv[9], (size_t)K * N);
  std::vector<float> out((size_t)M * N, NAN);
  auto k = reinterpret_cast<void (*)(int, int, int, const void*, const void*, void*)>(
      &EMU_KERNEL);
  emu_run(grid, block, [&] { k(M, N, K, a.data(), b.data(), out.data()); });
#endif
  FILE* f = std::fopen(argv[10], "wb");
  std::fwrite(out.data(), 4, out.size(), f);
  std::fclose(f);
  return 0;
}
"""

GXX = shutil.which("g++")


@functools.lru_cache(maxsize=None)
def _emulation_unavailable() -> str:
    """Why the emulation cannot be built here ('' if it can): it needs g++ with C++20's
    <barrier>, which older compilers lack; that is a fact about the machine, not a failure."""
    if GXX is None:
        return "needs g++"
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "probe.cpp"
        src.write_text(EMULATION + "int main() { emu_run({1, 1, 1}, {2, 1, 1}, [] {}); }\n")
        r = subprocess.run([GXX, "-std=c++20", "-pthread", "-w", str(src), "-o",
                            str(Path(tmp) / "probe")], capture_output=True, text=True)
    return "" if r.returncode == 0 else f"g++ cannot build the emulation: {r.stderr[-300:]}"


def _need_emulation() -> None:
    why = _emulation_unavailable()
    if why:
        pytest.skip(why)


def _cuda_source(file: str) -> str:
    """What the CUDA backend compiles for a kernel file (header + common.h + file, translated);
    `file` is a name in clgemm/kernels/ or, for VECTOR_OPS, the kernel text itself."""
    text = VECTOR_OPS if file == "VECTOR_OPS" else (KERNELS / file).read_text()
    parts = [HEADER, (KERNELS / "common.h").read_text(), text]
    return translate("\n".join(parts))


def _emulated(tmp: Path, file: str, kernel: str, macros: dict, transpose: bool = False,
              driver: str = DRIVER) -> Path:
    src = tmp / f"{kernel}.cpp"
    src.write_text(EMULATION + _cuda_source(file) + driver)
    exe = tmp / kernel
    cmd = [GXX, "-std=c++20", "-O1", "-pthread", "-w", f"-DEMU_KERNEL={kernel}",
           *(f"-D{k}={v}" for k, v in macros.items()), str(src), "-o", str(exe)]
    if transpose:
        cmd.insert(1, "-DEMU_TRANSPOSE")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"g++ failed for {file} {macros}:\n{r.stderr[-4000:]}"
    return exe


def _run(exe: Path, tmp: Path, m: int, n: int, k: int, grid, block, a, b) -> np.ndarray:
    a_path, b_path, c_path = tmp / "a.bin", tmp / "b.bin", tmp / "c.bin"
    a.astype(np.float32).tofile(a_path)
    b.astype(np.float32).tofile(b_path)
    args = [str(x) for x in (m, n, k, *grid, *block)] + [str(a_path), str(b_path), str(c_path)]
    r = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return np.fromfile(c_path, dtype=np.float32)


# (rung, overrides, sizes): every rung and tiled kernel at its defaults, the vector widths of the
# floatX rungs, the shuffle path of rungs 8-10 and the any-size kernels (10, 13) at sizes that
# are multiples of nothing.
EMULATED = [(n, {}, None) for n in sorted(REGISTRY) + [12, 13]] + [
    (4, {"WIDTH": 1}, None), (4, {"WIDTH": 8}, None),
    (7, {"WIDTH": 2}, None), (7, {"WIDTH": 8}, None),
    (8, {"USE_SHUFFLE": 1, "WPTM": 4}, None),
    (9, {"WIDTH": 1}, None), (9, {"USE_SHUFFLE": 1, "WPTM": 4}, None),
    (10, {}, [(67, 45, 33), (8, 130, 17)]), (10, {"WIDTH": 2}, [(64, 66, 5)]),
    (10, {"USE_SHUFFLE": 1, "WPTM": 4}, [(67, 45, 33)]),
    (12, {"WIDTH": 1}, None),
    (13, {}, [(67, 45, 33), (8, 130, 17)]), (13, {"WIDTH": 2}, [(64, 66, 5)]),
]


@pytest.fixture(scope="module")
def emulated_transpose(tmp_path_factory):
    """The transpose helper under the emulation, built once for the module's tests on first
    use: a third of the rungs' tests need it, and it is the same program for all of them."""
    built: list[Path] = []

    def get() -> Path:
        if not built:
            built.append(_emulated(tmp_path_factory.mktemp("transpose"), TRANSPOSE_B.file,
                                   TRANSPOSE_B.kernel, dict(TRANSPOSE_B.macros),
                                   transpose=True))
        return built[0]
    return get


@pytest.mark.parametrize("number,overrides,sizes", EMULATED,
                         ids=[f"rung{e[0]}-{e[1] or 'defaults'}" for e in EMULATED])
def test_rung_runs_under_emulated_cuda(tmp_path, emulated_transpose, number, overrides, sizes):
    _need_emulation()
    rung = {**REGISTRY, **LIBRARY}[number]
    params = rung.resolve(overrides)
    rung.validate(params)
    if sizes is None:
        tm, tn, tk = rung.size_multiples(params)
        sizes = [(2 * tm, tn, 2 * tk)]
    exe = _emulated(tmp_path, rung.file, rung.kernel, rung.macros(params))
    helper = None
    if rung.helpers:
        assert [h.kernel for h in rung.helpers] == ["transpose"]
        helper = emulated_transpose()
    rng = np.random.default_rng(number)
    for m, n, k in sizes:
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        a_cm, b_cm = a.ravel(order="F"), b.ravel(order="F")
        if helper is not None:  # B (K x N) -> BT (N x K), by the helper kernel itself
            tx, ty = TRANSPOSE_B.local_size
            grid = (-(-k // tx), -(-n // ty))
            b_cm = _run(helper, tmp_path, k, n, 0, grid, (tx, ty), b_cm, np.zeros(1))
            assert np.array_equal(b_cm, b.T.ravel(order="F")), "transpose helper is wrong"
        (gx, gy), local = rung.geometry(params, m, n)
        grid = (gx // local[0], gy // local[1])
        c = _run(exe, tmp_path, m, n, k, grid, local, a_cm, b_cm).reshape((m, n), order="F")
        err = accuracy.relative_error(c, accuracy.reference(a, b))
        assert err < 1e-5, (m, n, k, err, accuracy.unwritten_count(c))


# OpenCL vector semantics the rungs use little of: literals, broadcasts, the operators with
# vectors and scalars on either side, mad, vload/vstore, LOAD_GLOBAL on vectors, float8/float16.
VECTOR_OPS = r"""
__kernel void vector_ops(const int M, const int N, const int K,
                         const __global float* A, const __global float* B, __global float* C) {
    float4 a = (float4)(1.0f, 2.0f, 3.0f, 4.0f);
    float4 b = (float4)(0.5f);
    float4 c = a * b + 1.0f;
    c -= (float4)(0.5f, 0.0f, 0.5f, 0.0f);
    c *= 2.0f;
    float4 d = 3.0f - c / 2.0f;
    float4 e = -d + mad(a, b, c);
    float2 f = (float2)(e.x, e.s3);
    float8 g = (float8)(a, c);
    float16 h = (float16)(g, (float8)(1.0f));
    h += (float16)(0.25f);
    float4 v = vload4(1, A);
    vstore4(v + a, 2, C);
    const __global float4* A4 = (const __global float4*)A;
    float4 w = LOAD_GLOBAL(A4, 1) * (float4)(2.0f, 2.0f, 2.0f, 2.0f);
    C[0] = c.s0; C[1] = c.y; C[2] = c.z; C[3] = c.w;
    C[4] = d.x; C[5] = d.s1; C[6] = e.s2; C[7] = f.s1;
    C[12] = g.s7; C[13] = h.sF + h.sa; C[14] = h.s9; C[15] = w.w;
}
"""


def test_vector_semantics_under_emulated_cuda(tmp_path):
    _need_emulation()
    exe = _emulated(tmp_path, "VECTOR_OPS", "vector_ops", {})
    a = np.arange(16, dtype=np.float32)
    c = _run(exe, tmp_path, 4, 4, 4, (1, 1), (1, 1), a, a)
    a4, c4 = np.array([1, 2, 3, 4.0]), np.array([2, 4, 4, 6.0])
    d4 = 3 - c4 / 2
    e4 = -d4 + (a4 * 0.5 + c4)
    expected = np.concatenate([c4, d4[:2], [e4[2], e4[3]], a[4:8] + a4,
                               [6.0, 1.25 + 1.25, 1.25, 2 * a[7]]])
    np.testing.assert_allclose(c, expected, rtol=1e-6)


# ---- gemm's helper kernels (blas_helpers.cl) under the emulation ---------------------------------
# The pack kernels and the epilogue take other arguments than a rung, so they get their own
# driver: argv holds the scalar arguments, the grid and block, and files for the buffers. The
# output buffer starts as NaN (pack) or as the caller's C (epilogue) and is written back whole,
# so a value written where it should not be shows as well as one not written.
HELPER_DRIVER = DRIVER_IO + r"""
int main(int argc, char** argv) {
  auto i = [&](int n) { return std::atoi(argv[n]); };
  auto f = [&](int n) { return std::strtof(argv[n], nullptr); };
#ifdef EMU_EPILOGUE
  // M N alpha ldp use_p beta c_offset ldc read_c gx gy bx by P n_P C n_C out
  if (argc != 19) return 2;
  const dim3 grid{(unsigned)i(10), (unsigned)i(11), 1}, block{(unsigned)i(12), (unsigned)i(13), 1};
  std::vector<float> P = emu_read(argv[14], i(15)), C = emu_read(argv[16], i(17));
  emu_run(grid, block, [&] {
    EMU_KERNEL(i(1), i(2), f(3), P.data(), i(4), i(5), f(6), C.data(), i(7), i(8), i(9));
  });
  emu_write(argv[18], C);
#elif defined(EMU_REDUCE)
  // M N splits alpha ldp slice_p beta c_offset ldc read_c gx gy bx by P n_P C n_C out
  if (argc != 20) return 2;
  const dim3 grid{(unsigned)i(11), (unsigned)i(12), 1}, block{(unsigned)i(13), (unsigned)i(14), 1};
  std::vector<float> P = emu_read(argv[15], i(16)), C = emu_read(argv[17], i(18));
  emu_run(grid, block, [&] {
    EMU_KERNEL(i(1), i(2), i(3), f(4), P.data(), i(5), i(6), f(7), C.data(), i(8), i(9), i(10));
  });
  emu_write(argv[19], C);
#else
  // rows cols out_rows out_cols offset ld gx gy bx by X n_X out
  if (argc != 14) return 2;
  const dim3 grid{(unsigned)i(7), (unsigned)i(8), 1}, block{(unsigned)i(9), (unsigned)i(10), 1};
  std::vector<float> X = emu_read(argv[11], i(12)), out((size_t)i(3) * i(4), NAN);
  emu_run(grid, block, [&] {
    EMU_KERNEL(i(1), i(2), i(3), i(4), X.data(), i(5), i(6), out.data());
  });
  emu_write(argv[13], out);
#endif
  return 0;
}
"""


def _helper_geometry(max_work_group_size: int, kernel: str = "pack_copy"
                     ) -> tuple[tuple[int, int], Callable]:
    """gemm's block of a helper (PACK_TILE, PACK_ROWS) and launch geometry for a GPU of this
    work-group size limit, taken from what gemm's programs use (clgemm.configs.launch) so that
    the kernels run here exactly as gemm launches them."""
    fake = SimpleNamespace(device=SimpleNamespace(max_work_group_size=max_work_group_size,
                                                  is_cpu=False))
    return (launch.helper_block(fake, kernel),
            lambda rows, cols: launch.tiles_geometry(fake, kernel, rows, cols))


def _helper_exe(tmp: Path, kernel: str, block: tuple[int, int]) -> Path:
    define = {"epilogue": "#define EMU_EPILOGUE\n", "reduce_splits": "#define EMU_REDUCE\n"}
    driver = define.get(kernel, "") + HELPER_DRIVER
    tile, rows = block
    return _emulated(tmp, launch.HELPERS_FILE, kernel, {"PACK_TILE": tile, "PACK_ROWS": rows},
                     driver=driver)


def _run_helper(exe: Path, tmp: Path, args: list, buffers: list[np.ndarray]) -> np.ndarray:
    """Run a helper with scalar `args` (grid and block included) and input `buffers`; each
    buffer is passed as a file and its length. Returns the output buffer."""
    argv = [str(exe), *(str(a) for a in args)]
    for n, buf in enumerate(buffers):
        path = tmp / f"in{n}.bin"
        buf.astype(np.float32).tofile(path)
        argv += [str(path), str(buf.size)]
    out = tmp / "out.bin"
    r = subprocess.run([*argv, str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{exe.name} {args}: exit {r.returncode}\n{r.stderr}"
    return np.fromfile(out, dtype=np.float32)


def _stored(x: np.ndarray, ld: int, offset: int, fill: float) -> np.ndarray:
    """x (rows x cols) stored column-major at `offset` with leading dimension `ld`."""
    rows, cols = x.shape
    flat = np.full(offset + ld * cols, fill, np.float32)
    flat[offset:].reshape(cols, ld)[:, :rows] = x.T
    return flat


# (rows, cols, out_rows, out_cols): padding in both dimensions, none, and sizes below one tile
PACK_SHAPES = [(13, 21, 16, 32), (17, 9, 17, 9), (3, 2, 8, 4)]


@pytest.mark.parametrize("max_wg", [1024, 128], ids=["block32x8", "tile8"])
@pytest.mark.parametrize("kernel", ["pack_copy", "pack_transpose"])
def test_pack_kernels_under_emulated_cuda(tmp_path, kernel, max_wg):
    """out (out_rows x out_cols) is op(X) for rows x cols and zero beyond; X is read at an
    offset with a leading dimension larger than its rows, as gemm hands over a caller's view."""
    _need_emulation()
    block, geometry = _helper_geometry(max_wg)
    exe = _helper_exe(tmp_path, kernel, block)
    rng = np.random.default_rng(block[0])
    for rows, cols, out_rows, out_cols in PACK_SHAPES:
        # pack_transpose reads the stored matrix transposed: it is cols x rows.
        stored = rng.standard_normal((cols, rows) if kernel == "pack_transpose" else (rows, cols),
                                     dtype=np.float32)
        ld, offset = stored.shape[0] + 3, 5
        x = _stored(stored, ld, offset, fill=np.nan)  # reading outside the matrix shows
        (gx, gy), (bx, by) = geometry(out_rows, out_cols)
        out = _run_helper(exe, tmp_path, [rows, cols, out_rows, out_cols, offset, ld,
                                          gx // bx, gy // by, bx, by], [x])
        expected = np.zeros((out_rows, out_cols), np.float32)
        expected[:rows, :cols] = stored.T if kernel == "pack_transpose" else stored
        got = out.reshape((out_rows, out_cols), order="F")
        what = f"{kernel} block {block} {rows}x{cols} -> {out_rows}x{out_cols}"
        assert np.array_equal(got, expected), (
            f"{what}: {int(np.isnan(got).sum())} NaN (unwritten or read outside X), "
            f"{int((got != expected).sum())} wrong elements")


def _check_c(out: np.ndarray, c_flat: np.ndarray, c_offset: int, ldc: int,
             expected: np.ndarray, tol: float, what: str) -> None:
    """C (expected's shape, at c_offset with leading dimension ldc in the written buffer `out`)
    as expected, no NaN from a buffer that must not be read, and nothing outside it changed
    from `c_flat`, the buffer as it was handed in."""
    m, n = expected.shape
    inside = np.zeros(out.shape, bool)
    inside[c_offset:].reshape(n, ldc)[:, :m] = True
    got = out[c_offset:].reshape(n, ldc)[:, :m].T
    assert np.isfinite(got).all(), f"{what}: NaN from a buffer that must not be read"
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol, err_msg=what)
    assert np.array_equal(out[~inside], c_flat[~inside]), f"{what}: wrote outside C"


@pytest.mark.parametrize("max_wg", [1024, 128], ids=["block32x8", "tile8"])
def test_epilogue_under_emulated_cuda(tmp_path, max_wg):
    """C := alpha*P + beta*C inside the matrix, nothing outside it; with read_c == 0 the NaN in
    C does not leak into the result, with use_p == 0 the NaN in P does not."""
    _need_emulation()
    block, geometry = _helper_geometry(max_wg)
    exe = _helper_exe(tmp_path, "epilogue", block)
    rng = np.random.default_rng(block[0] + 1)
    m, n, ldp, ldc, c_offset = 13, 9, 16, 15, 7
    alpha, beta, sentinel = np.float32(1.5), np.float32(-0.5), np.float32(-12345.0)
    for use_p, read_c in [(1, 1), (1, 0), (0, 1), (0, 0)]:
        p = rng.standard_normal((ldp, n), dtype=np.float32)
        c = rng.standard_normal((m, n), dtype=np.float32)
        if not use_p:
            p[...] = np.nan
        if not read_c:
            c[...] = np.nan
        c_flat = _stored(c, ldc, c_offset, fill=sentinel)
        (gx, gy), (bx, by) = geometry(m, n)
        out = _run_helper(exe, tmp_path, [m, n, alpha, ldp, use_p, beta, c_offset, ldc, read_c,
                                          gx // bx, gy // by, bx, by],
                          [p.ravel(order="F"), c_flat])
        expected = np.zeros((m, n))
        if use_p:
            expected += np.float64(alpha) * p[:m].astype(np.float64)
        if read_c:
            expected += np.float64(beta) * c.astype(np.float64)
        _check_c(out, c_flat, c_offset, ldc, expected, 1e-6,
                 f"epilogue block {block} use_p={use_p} read_c={read_c}")


@pytest.mark.parametrize("max_wg", [1024, 128], ids=["tile16", "tile8"])
def test_sum_of_slices_under_emulated_cuda(tmp_path, max_wg):
    """C := alpha * (P_0 + ... + P_{s-1}) + beta * C inside the matrix, in gemm's geometry for
    the sum of slices, nothing outside it, from tight partial products and from ones padded to a
    kernel's tiles (whose padding holds NaN, which must not leak); with read_c == 0 the NaN in C
    does not leak either."""
    _need_emulation()
    block, geometry = _helper_geometry(max_wg, "reduce_splits")
    exe = _helper_exe(tmp_path, "reduce_splits", block)
    rng = np.random.default_rng(block[0] + 2)
    m, n, splits, ldc, c_offset = 13, 37, 3, 15, 7
    alpha, beta, sentinel = np.float32(1.5), np.float32(-0.5), np.float32(-12345.0)
    for read_c, (rows, cols) in ((1, (m, n)), (0, (m, n)), (1, (16, 40)), (0, (16, 40))):
        p = np.full((splits, cols, rows), np.nan, dtype=np.float32)  # slice s: column-major
        p[:, :n, :m] = rng.standard_normal((splits, n, m), dtype=np.float32)
        c = rng.standard_normal((m, n), dtype=np.float32)
        if not read_c:
            c[...] = np.nan
        c_flat = _stored(c, ldc, c_offset, fill=sentinel)
        (gx, gy), (bx, by) = geometry(m, n)
        out = _run_helper(exe, tmp_path, [m, n, splits, alpha, rows, rows * cols, beta, c_offset,
                                          ldc, read_c, gx // bx, gy // by, bx, by],
                          [p.ravel(), c_flat])
        expected = np.float64(alpha) * p[:, :n, :m].astype(np.float64).sum(axis=0).T
        if read_c:
            expected += np.float64(beta) * c.astype(np.float64)
        _check_c(out, c_flat, c_offset, ldc, expected, 1e-5,
                 f"reduce_splits block {block} read_c={read_c} partials {rows} x {cols}")


# ---- the direct kernel (direct.cl) under the emulation ------------------------------------------
# gemm_direct takes the BLAS arguments, so it gets a driver of its own, run like the helpers': C
# is passed in whole (matrix, leading-dimension padding and the floats around it) and written
# back whole, so a store outside the matrix shows, and A and B carry NaN outside their matrices,
# so a read outside them does.
DIRECT_DRIVER = DRIVER_IO + r"""
int main(int argc, char** argv) {
  auto i = [&](int n) { return std::atoi(argv[n]); };
  auto f = [&](int n) { return std::strtof(argv[n], nullptr); };
  // M N K alpha beta a_offset lda b_offset ldb c_offset ldc gx gy bx by A n_A B n_B C n_C out
  if (argc != 23) return 2;
  const dim3 grid{(unsigned)i(12), (unsigned)i(13), 1}, block{(unsigned)i(14), (unsigned)i(15), 1};
  std::vector<float> A = emu_read(argv[16], i(17)), B = emu_read(argv[18], i(19));
  std::vector<float> C = emu_read(argv[20], i(21));
  emu_run(grid, block, [&] {
    EMU_KERNEL(i(1), i(2), i(3), f(4), f(5), A.data(), i(6), i(7), B.data(), i(8), i(9),
               C.data(), i(10), i(11));
  });
  emu_write(argv[22], C);
  return 0;
}
"""

#: (parameters, transpositions): a small tile that is not square (a mix-up of M and N fails) in
#: all four transpositions, and the defaults once
DIRECT_EMULATED = [({"TSM": 16, "TSN": 32, "TSK": 8, "WPTM": 2, "WPTN": 4, "PAD": 0}, t)
                   for t in [(0, 0), (0, 1), (1, 0), (1, 1)]] + [({}, (0, 0))]


@pytest.mark.parametrize("overrides,trans", DIRECT_EMULATED,
                         ids=[f"{'defaults' if not o else 'small'}-{'NT'[a]}{'NT'[b]}"
                              for o, (a, b) in DIRECT_EMULATED])
def test_direct_under_emulated_cuda(tmp_path, overrides, trans):
    """C := alpha*op(A)*op(B) + beta*C at offsets and leading dimensions larger than the rows,
    on sizes no tile divides; with beta == 0 the NaN in C does not reach the result."""
    _need_emulation()
    from clgemm.rungs.direct import DIRECT, direct_geometry, direct_macros

    params = DIRECT.resolve(overrides)
    DIRECT.validate(params)
    trans_a, trans_b = trans
    exe = _emulated(tmp_path, DIRECT.file, DIRECT.kernel, direct_macros(params, *trans),
                    driver=DIRECT_DRIVER)
    rng = np.random.default_rng(17 + 2 * trans_a + trans_b)
    sentinel = np.float32(-12345.0)
    for (m, n, k), alpha, beta in [((37, 23, 19), 1.5, 0.0), ((20, 40, 9), -0.75, 0.5)]:
        a = rng.standard_normal((k, m) if trans_a else (m, k), dtype=np.float32)
        b = rng.standard_normal((n, k) if trans_b else (k, n), dtype=np.float32)
        c = np.full((m, n), np.nan, np.float32) if beta == 0 else \
            rng.standard_normal((m, n), dtype=np.float32)
        lda, ldb, ldc = a.shape[0] + 3, b.shape[0] + 1, m + 2
        a_off, b_off, c_off = 5, 2, 7
        flat_a, flat_b = _stored(a, lda, a_off, fill=np.nan), _stored(b, ldb, b_off, fill=np.nan)
        c_flat = np.append(_stored(c, ldc, c_off, fill=sentinel), [sentinel] * 3)
        (gx, gy), (bx, by) = direct_geometry(params, m, n)
        out = _run_helper(exe, tmp_path, [m, n, k, alpha, beta, a_off, lda, b_off, ldb, c_off,
                                          ldc, gx // bx, gy // by, bx, by],
                          [flat_a, flat_b, c_flat])
        expected = np.float64(alpha) * ((a.T if trans_a else a).astype(np.float64)
                                        @ (b.T if trans_b else b).astype(np.float64))
        if beta != 0:
            expected += np.float64(beta) * c.astype(np.float64)
        inside = np.zeros(out.shape, bool)
        inside[c_off:c_off + ldc * n].reshape(n, ldc)[:, :m] = True
        got = out[c_off:c_off + ldc * n].reshape(n, ldc)[:, :m].T
        what = f"direct {params} trans={trans} {m}x{n}x{k} beta={beta}"
        assert np.isfinite(got).all(), f"{what}: NaN read from outside A or B, or from C"
        err = accuracy.relative_error(got, expected)
        assert err < 1e-5, f"{what}: relative error {err:.2e}"
        assert np.array_equal(out[~inside], c_flat[~inside]), f"{what}: wrote outside C"


# ---- the real CUDA compilers, where present ------------------------------------------------------

def _compile_jobs():
    jobs = [(f"rung{r.number}", r.file, r.macros(r.defaults()))
            for r in list(REGISTRY.values()) + [LIBRARY[12], LIBRARY[13]]]
    jobs.append(("vector-ops", "VECTOR_OPS", {}))
    for r in (REGISTRY[8], REGISTRY[9], REGISTRY[10]):
        jobs.append((f"rung{r.number}-shuffle", r.file,
                     r.macros(r.resolve({"USE_SHUFFLE": 1, "WPTM": 4}))))
    jobs.append(("helper", TRANSPOSE_B.file, dict(TRANSPOSE_B.macros)))
    for r in (LIBRARY[12], LIBRARY[13]):   # wide register vectors, and no local memory at all
        jobs.append((f"rung{r.number}-vectors", r.file, r.macros(r.resolve({"VWM": 4, "VWN": 4}))))
        jobs.append((f"rung{r.number}-direct", r.file, r.macros(r.resolve(
            {"VWM": 8, "VWN": 2, "CACHE_A": 0, "CACHE_B": 0}))))
    r12 = LIBRARY[12]
    jobs.append(("rung12-panels", r12.file, r12.macros(r12.resolve(
        {"VWM": 8, "VWN": 2, "CACHE_A": 0, "CACHE_B": 0, "PANELS": 1, "LOCKSTEP": 1}))))
    jobs.append(("helper-panels", "helpers.cl", {"PANEL": 64}))
    jobs.append(("blas-helpers", "blas_helpers.cl", {"PACK_TILE": 16}))
    from clgemm.rungs.direct import DIRECT, direct_macros
    for ta, tb in [(0, 0), (0, 1), (1, 0), (1, 1)]:
        jobs.append((f"direct-{'NT'[ta]}{'NT'[tb]}", DIRECT.file,
                     direct_macros(DIRECT.defaults(), ta, tb)))
    return jobs


NVCC = shutil.which("nvcc") or next(iter(glob.glob("/usr/local/cuda*/bin/nvcc")), None)
TRIVIAL_CU = 'extern "C" __global__ void k(float* p) { p[threadIdx.x] = 1.0f; }\n'


@functools.lru_cache(maxsize=None)
def _nvcc_unavailable() -> str:
    """Why nvcc cannot be used here ('' if it can): absent, or too old for sm_90."""
    if NVCC is None:
        return "needs nvcc (a CUDA toolkit)"
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "probe.cu"
        src.write_text(TRIVIAL_CU)
        r = subprocess.run([NVCC, "-arch=sm_90", "-cubin", "-o", str(Path(tmp) / "p.cubin"),
                            str(src)], capture_output=True, text=True)
    return "" if r.returncode == 0 else f"nvcc cannot compile for sm_90: {r.stderr[-300:]}"


@pytest.mark.parametrize("name,file,macros", _compile_jobs(), ids=[j[0] for j in _compile_jobs()])
def test_nvcc_compiles(tmp_path, name, file, macros):
    if _nvcc_unavailable():
        pytest.skip(_nvcc_unavailable())
    src = tmp_path / f"{name}.cu"
    src.write_text(_cuda_source(file))
    cmd = [NVCC, "-arch=sm_90", "-cubin", "-Xptxas", "-v", "-o", str(tmp_path / "k.cubin"),
           *(f"-D{k}={v}" for k, v in macros.items()), str(src)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-4000:]
    assert "warning" not in r.stderr.lower(), r.stderr
    assert " 0 bytes spill stores" in r.stderr, r.stderr  # registers suffice at the defaults


def _find_nvrtc():
    candidates = [os.environ.get("CLGEMM_NVRTC_LIB", "")]
    for base in sys.path:
        candidates += sorted(glob.glob(os.path.join(base, "nvidia", "cu*", "lib", "libnvrtc.so*")))
        candidates += sorted(glob.glob(os.path.join(base, "nvidia", "cuda_nvrtc", "lib",
                                                    "libnvrtc.so*")))
    candidates += [ctypes.util.find_library("nvrtc") or ""]
    candidates += sorted(glob.glob("/usr/local/cuda*/lib64/libnvrtc.so*"))
    for c in candidates:
        if c and "builtins" not in c and "alt" not in c:
            try:
                return ctypes.CDLL(c)
            except OSError:
                continue
    return None


NVRTC = _find_nvrtc()
# The options CuPy's RawModule adds to ours (cupy/cuda/compiler.py), so the compile is theirs.
CUPY_OPTIONS = ("-ftz=true", "-arch=sm_90", "--device-as-default-execution-space")


def _nvrtc_compile(source: str, options: list[str]) -> tuple[int, str]:
    """(NVRTC's result code, its log) for one compile."""
    prog = ctypes.c_void_p()
    assert NVRTC.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"k.cu", 0, None,
                                    None) == 0
    arr = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
    rc = NVRTC.nvrtcCompileProgram(prog, len(options), arr)
    size = ctypes.c_size_t()
    NVRTC.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    NVRTC.nvrtcGetProgramLog(prog, log)
    NVRTC.nvrtcDestroyProgram(ctypes.byref(prog))
    return rc, log.value.decode(errors="replace")


@functools.lru_cache(maxsize=None)
def _nvrtc_unavailable() -> str:
    if NVRTC is None:
        return "needs libnvrtc (CLGEMM_NVRTC_LIB=path to point at one)"
    rc, log = _nvrtc_compile(TRIVIAL_CU, list(CUPY_OPTIONS))
    return "" if rc == 0 else f"this libnvrtc cannot compile for sm_90: {log[-300:]}"


@pytest.mark.parametrize("name,file,macros", _compile_jobs(), ids=[j[0] for j in _compile_jobs()])
def test_nvrtc_compiles(name, file, macros):
    if _nvrtc_unavailable():
        pytest.skip(_nvrtc_unavailable())
    options = [*(f"-D{k}={v}" for k, v in macros.items()), *CUPY_OPTIONS]
    rc, log = _nvrtc_compile(_cuda_source(file), options)
    assert rc == 0, log
    assert "warning" not in log.lower(), log
