// Rung 2: local-memory tiling. A work-group of TS x TS work-items stages one TS x TS tile of A and
// one of B in local memory, so each global value is read once per work-group instead of TS times.
//   TS: tile side = work-group side

// ---- parameters (-D NAME=VALUE; these defaults make the file build on its own) ---------
#ifndef TS
  #define TS 16   // tile side = work-group side
#endif

__kernel __attribute__((reqd_work_group_size(TS, TS, 1)))
void gemm_tiling(const int M, const int N, const int K,
                 const __global float* A, const __global float* B, __global float* C) {
    const int lm = get_local_id(0);            // row inside the tile
    const int ln = get_local_id(1);            // column inside the tile
    const int m = TS * get_group_id(0) + lm;   // row of C
    const int n = TS * get_group_id(1) + ln;   // column of C

    __local float Atile[TS][TS];   // [k][m]
    __local float Btile[TS][TS];   // [n][k]

    float acc = 0.0f;
    const int tiles = K / TS;
    for (int t = 0; t < tiles; t++) {
        // Neighbouring work-items (lm) read neighbouring addresses: coalesced for A and for B.
        Atile[ln][lm] = A[(TS * t + ln) * M + m];
        Btile[ln][lm] = B[n * K + TS * t + lm];
        barrier(CLK_LOCAL_MEM_FENCE);

        for (int k = 0; k < TS; k++) {
            acc += Atile[k][lm] * Btile[ln][k];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[n * M + m] = acc;
}
