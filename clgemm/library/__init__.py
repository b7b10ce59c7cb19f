"""The library call, gemm(), on arrays and buffers of every backend."""
