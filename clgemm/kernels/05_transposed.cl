// Rung 5: transposed B and rectangular tiles. A helper kernel first writes BT = B^T (N x K,
// column-major), so the B tile is read along N just as the A tile is read along M. Tiles are
// TSM x TSK of A and TSK x TSN of B; each work-item computes WPTN elements of one row of C.
// Every work-item loads LPTA values of A and LPTB values of B per tile. The B tile is padded by
// PAD floats per row so that work-items reading down a column hit different local-memory banks.
//   TSM, TSN, TSK: tile sizes;  WPTN: outputs per work-item along N;  PAD: local padding
//   RTSN = TSN / WPTN, LPTA = TSK*TSM / (TSM*RTSN), LPTB = TSK*TSN / (TSM*RTSN)  (derived)

// ---- parameters (-D NAME=VALUE; these defaults make the file build on its own) ---------
#ifndef TSM
  #define TSM 64   // tile rows (along M) = work-group rows
#endif
#ifndef TSN
  #define TSN 64   // tile columns (along N)
#endif
#ifndef TSK
  #define TSK 32   // tile depth (along K)
#endif
#ifndef WPTN
  #define WPTN 8   // outputs per work-item along N
#endif
#ifndef PAD
  #define PAD 2    // floats of padding per row of the local B tile
#endif
// ---- derived from the parameters, as clgemm/rungs derives them for the launch ------
#ifndef RTSN
  #define RTSN (TSN / WPTN)                 // work-items per group along N
#endif
#ifndef LPTA
  #define LPTA (TSK * TSM / (TSM * RTSN))   // values of A each work-item loads per tile
#endif
#ifndef LPTB
  #define LPTB (TSK * TSN / (TSM * RTSN))   // values of B each work-item loads per tile
#endif

__kernel __attribute__((reqd_work_group_size(TSM, RTSN, 1)))
void gemm_transposed(const int M, const int N, const int K,
                     const __global float* A, const __global float* BT, __global float* C) {
    const int lm = get_local_id(0);               // 0 .. TSM-1
    const int ln = get_local_id(1);               // 0 .. RTSN-1
    const int tid = ln * TSM + lm;                // linear id, lm fastest
    const int m = TSM * get_group_id(0) + lm;
    const int nbase = TSN * get_group_id(1);

    __local float Atile[TSK][TSM];                // [k][m]
    __local float Btile[TSN][TSK + PAD];          // [n][k]

    float acc[WPTN];
    for (int w = 0; w < WPTN; w++) acc[w] = 0.0f;

    const int tiles = K / TSK;
    for (int t = 0; t < tiles; t++) {
        for (int l = 0; l < LPTA; l++) {
            const int e = tid + l * TSM * RTSN;
            const int em = e % TSM, ek = e / TSM;
            Atile[ek][em] = A[(TSK * t + ek) * M + TSM * get_group_id(0) + em];
        }
        for (int l = 0; l < LPTB; l++) {
            const int e = tid + l * TSM * RTSN;
            const int en = e % TSN, ek = e / TSN;
            Btile[en][ek] = BT[(TSK * t + ek) * N + nbase + en];
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        for (int k = 0; k < TSK; k++) {
            const float a = Atile[k][lm];
            for (int w = 0; w < WPTN; w++) {
                acc[w] += a * Btile[ln + w * RTSN][k];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int w = 0; w < WPTN; w++) {
        C[(nbase + ln + w * RTSN) * M + m] = acc[w];
    }
}
