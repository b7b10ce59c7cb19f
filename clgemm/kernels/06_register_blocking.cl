// Rung 6: 2D register blocking. Rung 5 reused one value of A for WPTN products; here every
// work-item owns a WPTM x WPTN block of C, so per step k it reads WPTM values of A and WPTN
// values of B from local memory into registers and does WPTM*WPTN multiply-adds with them: the
// ratio of arithmetic to local-memory reads grows from about 1 to WPTM*WPTN / (WPTM+WPTN).
// A work-item's outputs are strided by RTSM rows and RTSN columns (not packed together), so that
// neighbouring work-items still read neighbouring local addresses.
//   TSM, TSN, TSK: tile sizes;  WPTM, WPTN: outputs per work-item along M and N;  PAD: padding
//   RTSM = TSM/WPTM, RTSN = TSN/WPTN: work-group shape;  LPTA, LPTB: tile loads per work-item
//   (derived below, as the registry derives them for the launch)

// ---- parameters (-D NAME=VALUE; these defaults make the file build on its own) ---------
#ifndef TSM
  #define TSM 128   // tile rows (along M)
#endif
#ifndef TSN
  #define TSN 128   // tile columns (along N)
#endif
#ifndef TSK
  #define TSK 16    // tile depth (along K)
#endif
#ifndef WPTM
  #define WPTM 8    // outputs per work-item along M
#endif
#ifndef WPTN
  #define WPTN 8    // outputs per work-item along N
#endif
#ifndef PAD
  #define PAD 1     // floats of padding per row of the local B tile
#endif
// ---- derived from the parameters, as clgemm/rungs derives them for the launch ------
#ifndef RTSM
  #define RTSM (TSM / WPTM)                  // work-items per group along M
#endif
#ifndef RTSN
  #define RTSN (TSN / WPTN)                  // work-items per group along N
#endif
#ifndef LPTA
  #define LPTA (TSK * TSM / (RTSM * RTSN))   // values of A each work-item loads per tile
#endif
#ifndef LPTB
  #define LPTB (TSK * TSN / (RTSM * RTSN))   // values of B each work-item loads per tile
#endif

__kernel __attribute__((reqd_work_group_size(RTSM, RTSN, 1)))
void gemm_register_blocking(const int M, const int N, const int K,
                            const __global float* A, const __global float* BT,
                            __global float* C) {
    const int tidm = get_local_id(0);             // 0 .. RTSM-1
    const int tidn = get_local_id(1);             // 0 .. RTSN-1
    const int tid = tidn * RTSM + tidm;           // linear id, tidm fastest
    const int offm = TSM * get_group_id(0);       // first row of this group's tile of C
    const int offn = TSN * get_group_id(1);       // first column

    __local float Atile[TSK][TSM];                // [k][m]
    __local float Btile[TSN][TSK + PAD];          // [n][k]

    float Areg[WPTM];
    float Breg[WPTN];
    float acc[WPTM][WPTN];
    for (int wm = 0; wm < WPTM; wm++)
        for (int wn = 0; wn < WPTN; wn++) acc[wm][wn] = 0.0f;

    const int tiles = K / TSK;
    for (int t = 0; t < tiles; t++) {
        const int k0 = TSK * t;
        // The whole work-group copies the tiles; consecutive ids take consecutive rows of A
        // (and of BT), so each sweep over the group reads contiguous global memory.
        for (int l = 0; l < LPTA; l++) {
            const int e = tid + l * RTSM * RTSN;
            const int em = e % TSM, ek = e / TSM;
            Atile[ek][em] = A[(k0 + ek) * M + offm + em];
        }
        for (int l = 0; l < LPTB; l++) {
            const int e = tid + l * RTSM * RTSN;
            const int en = e % TSN, ek = e / TSN;
            Btile[en][ek] = BT[(k0 + ek) * N + offn + en];
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        for (int k = 0; k < TSK; k++) {
            for (int wn = 0; wn < WPTN; wn++) Breg[wn] = Btile[tidn + wn * RTSN][k];
            for (int wm = 0; wm < WPTM; wm++) Areg[wm] = Atile[k][tidm + wm * RTSM];
            for (int wm = 0; wm < WPTM; wm++)
                for (int wn = 0; wn < WPTN; wn++) acc[wm][wn] += Areg[wm] * Breg[wn];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    for (int wn = 0; wn < WPTN; wn++) {
        const int n = offn + tidn + wn * RTSN;
        for (int wm = 0; wm < WPTM; wm++) {
            C[n * M + offm + tidm + wm * RTSM] = acc[wm][wn];
        }
    }
}
