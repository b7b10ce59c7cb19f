// Rung 3: more work per work-item. Each work-item computes WPT elements of one row of C, spaced
// RTS = TS / WPT columns apart, so a value of A read from local memory serves WPT products.
//   TS:  tile side;  WPT: outputs per work-item;  RTS (derived): work-group columns

// ---- parameters (-D NAME=VALUE; these defaults make the file build on its own) ---------
#ifndef TS
  #define TS 32   // tile side
#endif
#ifndef WPT
  #define WPT 8   // outputs per work-item
#endif
// ---- derived from the parameters, as clgemm/rungs derives them for the launch ------
#ifndef RTS
  #define RTS (TS / WPT)   // work-group columns
#endif

__kernel __attribute__((reqd_work_group_size(TS, RTS, 1)))
void gemm_more_work(const int M, const int N, const int K,
                    const __global float* A, const __global float* B, __global float* C) {
    const int lm = get_local_id(0);
    const int ln = get_local_id(1);               // 0 .. RTS-1
    const int m = TS * get_group_id(0) + lm;
    const int n0 = TS * get_group_id(1) + ln;     // first of this work-item's columns

    __local float Atile[TS][TS];   // [k][m]
    __local float Btile[TS][TS];   // [n][k]

    float acc[WPT];
    for (int w = 0; w < WPT; w++) acc[w] = 0.0f;

    const int tiles = K / TS;
    for (int t = 0; t < tiles; t++) {
        for (int w = 0; w < WPT; w++) {
            const int c = ln + w * RTS;           // tile column this work-item loads
            Atile[c][lm] = A[(TS * t + c) * M + m];
            Btile[c][lm] = B[(n0 + w * RTS) * K + TS * t + lm];
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        for (int k = 0; k < TS; k++) {
            const float a = Atile[k][lm];
            for (int w = 0; w < WPT; w++) {
                acc[w] += a * Btile[ln + w * RTS][k];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int w = 0; w < WPT; w++) {
        C[(n0 + w * RTS) * M + m] = acc[w];
    }
}
