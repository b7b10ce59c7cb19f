"""clgemm: a portable OpenCL SGEMM kernel ladder, tuner and benchmark."""

__version__ = "0.1.0"
