"""Whether an OpenCL device's compiler takes inline PTX, and whether cp.async (the SM80+ copy from
global to shared memory that bypasses registers, what a multi-stage pipeline is built on) works
through it: each probe is built and run, and its output checked, on the device named.
Usage: python scripts/opencl_inline_ptx.py DEVICE"""

import sys

import numpy as np
import pyopencl as cl

from clgemm.library import gemm as api

PROBES = {
    "lane id (mov.u32 %laneid)": """
__kernel void probe(__global const float* src, __global float* dst) {
    uint lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    dst[get_global_id(0)] = (float)lane;
}""",
    "cp.async 16 bytes global -> local, commit, wait": """
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void probe(__global const float* src, __global float* dst) {
    __local float4 tile[64];
    const int i = get_local_id(0);
    const __global float4* from = (const __global float4*)src + get_global_id(0);
    uint to = (uint)(size_t)(&tile[63 - i]);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(to), "l"(from) : "memory");
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    barrier(CLK_LOCAL_MEM_FENCE);
    vstore4(tile[i], get_global_id(0), dst);
}""",
}

backend = api.backend_for(sys.argv[1], "opencl")
ctx, queue = backend.context, backend.queue
print(f"# {backend.device.name}")
n = 256
src = np.arange(4 * n, dtype=np.float32)
mf = cl.mem_flags
for name, source in PROBES.items():
    try:
        program = cl.Program(ctx, source).build()
    except cl.RuntimeError as exc:
        print(f"{name}: build failed: {str(exc).splitlines()[0][:200]}")
        continue
    a = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=src)
    out = np.full(4 * n, np.nan, np.float32)
    b = cl.Buffer(ctx, mf.WRITE_ONLY | mf.COPY_HOST_PTR, hostbuf=out)
    try:
        program.probe(queue, (n,), (64,), a, b)
        cl.enqueue_copy(queue, out, b)
        queue.finish()
    except cl.Error as exc:
        print(f"{name}: built, launch failed: {exc}")
        continue
    if name.startswith("lane"):
        ok = np.array_equal(out[:n], np.arange(n) % 32)
    else:  # each group of 64 float4s comes back reversed within the group
        want = src.reshape(n // 64, 64, 4)[:, ::-1, :].reshape(-1)
        ok = np.array_equal(out, want)
    print(f"{name}: built and ran, output {'right' if ok else 'WRONG'}")
