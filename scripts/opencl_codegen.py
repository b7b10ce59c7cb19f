"""Why one configuration of the tiled kernel can run slower under NVIDIA's OpenCL than through
the CUDA path: for each shape given (the kernel's view, M x N x K), the configuration the OpenCL
database stores there, measured kernel only on both backends (each result checked against
float64 with C poisoned first), with the registers each compiler gave it and a count of the
instructions of its PTX that matter here; then on OpenCL with NVIDIA's compiler options
(-cl-nv-maxrregcount, -cl-fast-relaxed-math) and with the loop over a tile's depth asked to be
unrolled outright, on both backends, to see whether any closes the gap.
Usage: [DEVICE=H100] python scripts/opencl_codegen.py MxNxK [MxNxK ...]"""

import collections
import os
import re
import sys
import time

import pyopencl as cl

from clgemm.backends.opencl import backend as opencl_backend
from clgemm.configs import lookup
from clgemm.core.problem import Problem
from clgemm.library import gemm as api
from clgemm.measure.rung_runner import Workspace, run_rung
from clgemm.rungs.tiled import TILED

DEVICE = os.environ.get("DEVICE", "H100")
ocl = api.backend_for(DEVICE, "opencl")
try:
    cuda = api.backend_for(DEVICE, "cuda")
except Exception:  # noqa: BLE001 - a machine without CUDA measures OpenCL alone
    cuda = None
print(f"# {ocl.device.name}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", flush=True)
built: dict[str, tuple] = {}
EXTRA: list[str] = []
#: the tiled kernel's loop over one tile's depth, and whether to ask for it unrolled outright
K_LOOP = "        for (int k = 0; k < TSK; k++) {"
UNROLL_K = [False]
plain_options = opencl_backend.define_options
opencl_backend.define_options = lambda d: plain_options(d) + EXTRA  # type: ignore[assignment]


def spy(be):
    build = be.build

    def wrapped(source, defines, kernel):
        if UNROLL_K[0]:
            source = source.replace(K_LOOP, '_Pragma("unroll")\n' + K_LOOP)
        knl = build(source, defines, kernel)
        if "tiled" in kernel:  # not the helpers (packs, poison) built beside it
            built[be.name] = (source, dict(defines), kernel, knl)
        return knl
    be.build = wrapped


def fresh(be):
    be.__dict__.pop("_programs", None)
    be._kernels.clear()


def ptx_counts(ptx: str) -> str:
    ops = collections.Counter(m.group(1) for m in re.finditer(r"^\s+(?:@%p\d+\s+)?([a-z][\w.]*)",
                                                               ptx, re.M))
    keys = {"fma": "fma.rn.f32", "ld.global": "ld.global.", "ld.global.nc": "ld.global.nc",
            "ld.shared": "ld.shared", "st.shared": "st.shared", "bar": "bar.sync",
            "local": "ld.local"}
    out = []
    for label, prefix in keys.items():
        out.append(f"{label} {sum(v for k, v in ops.items() if k.startswith(prefix))}")
    return ", ".join(out)


def cuda_ptx(source: str, defines: dict) -> str:
    import cupy
    from clgemm.backends.cuda.backend import translate
    options = tuple(f"-D{k}={v}" for k, v in defines.items())
    try:
        ptx = cupy.cuda.compiler.compile_using_nvrtc(translate(source), options=options)
        ptx = ptx[0] if isinstance(ptx, tuple) else ptx
        return ptx.decode(errors="replace") if isinstance(ptx, bytes) else str(ptx)
    except Exception as exc:  # noqa: BLE001 - reported
        return f"(no PTX: {exc})"


spy(ocl)
if cuda is not None:
    spy(cuda)
for text in sys.argv[1:]:
    m, n, k = map(int, text.split("x"))
    found = lookup.best(ocl.device, TILED, (m, n, k))
    if found is None:
        print(f"{text}: nothing stored on OpenCL")
        continue
    params = TILED.resolve(dict(found.params))
    print(f"{text}: {TILED.params_text(params)}", flush=True)
    for be in (x for x in (cuda, ocl) if x is not None):
        ws = Workspace(be, Problem(m, n, k))
        variants = [("as built", []), ("k loop unrolled", [])]
        if be is ocl:
            variants += [("-cl-nv-maxrregcount=128", ["-cl-nv-maxrregcount=128"]),
                         ("-cl-nv-maxrregcount=255", ["-cl-nv-maxrregcount=255"]),
                         ("-cl-fast-relaxed-math", ["-cl-fast-relaxed-math"])]
        for label, extra in variants:
            EXTRA[:] = extra + (["-cl-nv-verbose"] if be is ocl else [])
            UNROLL_K[0] = label == "k loop unrolled"
            fresh(be)
            r = run_rung(be, ws, TILED, params, repeats=7, warmup=2)
            regs = ""
            if be.name in built:
                source, defines, kernel, knl = built[be.name]
                if be is ocl:
                    log = knl.program.get_build_info(ocl.device.handle,
                                                     cl.program_build_info.LOG)
                    used = re.findall(r"Used (\d+) registers", log)
                    spill = re.findall(r"(\d+) bytes spill stores", log)
                    ptx = knl.program.get_info(cl.program_info.BINARIES)[0].decode(
                        errors="replace")
                    regs = f"regs {used[-1] if used else '?'}, spills {spill[-1] if spill else '?'}"
                else:
                    import cupy
                    fn = knl.kernel if hasattr(knl, "kernel") else knl
                    attr = cupy.cuda.driver.funcGetAttribute
                    regs = f"regs {attr(4, fn.ptr)}, local bytes {attr(3, fn.ptr)}"
                    ptx = cuda_ptx(source, defines)
                if label == "as built" and os.environ.get("PTX_DIR"):
                    with open(os.path.join(os.environ["PTX_DIR"], f"{text}-{be.name}.ptx"),
                              "w") as f:
                        f.write(ptx)
                regs += "; " + ptx_counts(ptx)
            us = f"{r.ms * 1e3:7.1f} us" if r.ok and r.ms else f"{r.status}: {r.message[:80]}"
            print(f"  {be.name:6} {label:<26} {us}  {regs}", flush=True)
EXTRA[:] = []
