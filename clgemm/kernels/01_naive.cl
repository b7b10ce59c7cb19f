// Rung 1: naive. One work-item computes one element of C, reading a whole row of A and a whole
// column of B straight from global memory. Work-groups are TS x TS work-items.
//   TS: work-group side (only the launch geometry depends on it)

// ---- parameters (-D NAME=VALUE; these defaults make the file build on its own) ---------
#ifndef TS
  #define TS 16   // work-group side (TS x TS work-items)
#endif

__kernel __attribute__((reqd_work_group_size(TS, TS, 1)))
void gemm_naive(const int M, const int N, const int K,
                const __global float* A, const __global float* B, __global float* C) {
    const int m = get_global_id(0);   // row of C
    const int n = get_global_id(1);   // column of C

    float acc = 0.0f;
    for (int k = 0; k < K; k++) {
        acc += A[k * M + m] * B[n * K + k];
    }
    C[n * M + m] = acc;
}
