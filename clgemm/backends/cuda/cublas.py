"""cuBLAS, the CUDA backend's vendor BLAS, through CuPy's thin binding of `cublasSgemm`.

Plain FP32: the handle is put in its default math mode, where SGEMM never uses TF32 tensor cores
(CuPy's own matmul would too, unless CUPY_TF32=1; calling cublasSgemm directly leaves no such
switch to get wrong). Timed with CUDA events around the call.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from clgemm.backends.base import Backend, TimedCall, VendorBlas
from clgemm.backends.cuda.backend import cupy

try:
    from cupy_backends.cuda.libs import cublas
except Exception:  # pragma: no cover - CuPy missing or broken: the backend has no devices
    cublas = None


class CuBLAS(VendorBlas):
    key = "cublas"
    label = "cuBLAS"
    name = "cuBLAS SGEMM (FP32, TF32 off)"

    def missing(self) -> str | None:
        if cupy is None or cublas is None:
            return "CuPy's cuBLAS binding cannot be imported"
        return None

    def timed_sgemm(self, backend: Backend, m: int, n: int, k: int, a: Any, b: Any,
                    c: Any) -> TimedCall:
        why = self.missing()
        if why:
            raise RuntimeError(why)
        alpha, beta = np.ones(1, np.float32), np.zeros(1, np.float32)
        handle = cupy.cuda.device.get_cublas_handle()
        cublas.setPointerMode(handle, cublas.CUBLAS_POINTER_MODE_HOST)
        if cublas.getMathMode(handle) != cublas.CUBLAS_DEFAULT_MATH:
            cublas.setMathMode(handle, cublas.CUBLAS_DEFAULT_MATH)

        def call() -> float:
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            start.record()
            cublas.sgemm(handle, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N, m, n, k,
                         alpha.ctypes.data, a.data.ptr, m, b.data.ptr, k, beta.ctypes.data,
                         c.data.ptr, m)
            end.record()
            end.synchronize()
            return float(cupy.cuda.get_elapsed_time(start, end))

        return TimedCall(call, {"label": "CUDA events"})

    def matmul(self, backend: Backend, a: Any, b: Any, out: Any = None) -> Any:
        """CuPy's matmul: cuBLAS SGEMM in FP32 (CuPy uses TF32 only with CUPY_TF32=1), the
        output from CuPy's pool as clgemm's is."""
        if out is None:
            return cupy.matmul(a, b)
        return cupy.matmul(a, b, out=out)
