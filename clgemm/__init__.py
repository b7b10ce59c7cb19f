"""clgemm: a portable OpenCL SGEMM kernel ladder, tuner and benchmark."""

__version__ = "0.1.0"

from .api import gemm, gemm_buffers  # noqa: E402,F401  (the public SGEMM entry points)

__all__ = ["gemm", "gemm_buffers", "__version__"]
