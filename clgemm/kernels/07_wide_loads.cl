// Rung 7: rung 6 with wide global loads. The tiles are copied from global memory as vectors of
// WIDTH floats (floatX from common.h), so each work-item issues WIDTH times fewer, wider load
// instructions. Local memory and the register block stay scalar: only the trip from global to
// local memory changes. A vector runs along M in A and along N in BT, the directions in which
// both are contiguous; M and N are multiples of TSM and TSN, which are multiples of WIDTH, so
// every vector is aligned.
//   TSM, TSN, TSK, WPTM, WPTN, PAD: as in rung 6;  WIDTH: floats per vector load
//   RTSM, RTSN: work-group shape;  VTSM = TSM/WIDTH, VTSN = TSN/WIDTH: vectors per tile column;
//   LPTA, LPTB: vector loads per work-item per tile  (derived below)

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
#ifndef WIDTH
  #define WIDTH 4   // floats per vector load from global memory
#endif
#ifndef PAD
  #define PAD 1     // floats of padding per row of the local B tile
#endif
// ---- derived from the parameters, as clgemm/rungs derives them for the launch ------
#ifndef RTSM
  #define RTSM (TSM / WPTM)                          // work-items per group along M
#endif
#ifndef RTSN
  #define RTSN (TSN / WPTN)                          // work-items per group along N
#endif
#ifndef LPTA
  #define LPTA (TSK * TSM / (WIDTH * RTSM * RTSN))   // vector loads of A per work-item per tile
#endif
#ifndef LPTB
  #define LPTB (TSK * TSN / (WIDTH * RTSM * RTSN))   // vector loads of B per work-item per tile
#endif
#ifndef VTSM
  #define VTSM (TSM / WIDTH)                         // vectors per column of the A tile
#endif
#ifndef VTSN
  #define VTSN (TSN / WIDTH)                         // vectors per row of the B tile
#endif

// Where component i of the vector loaded at (ek, ev) lands: consecutive rows of the A tile, and
// consecutive rows (n) of the B tile, which is stored [n][k].
#define A_SLOT(i) Atile[ek][WIDTH * ev + (i)]
#define B_SLOT(i) Btile[WIDTH * ev + (i)][ek]

__kernel __attribute__((reqd_work_group_size(RTSM, RTSN, 1)))
void gemm_wide_loads(const int M, const int N, const int K,
                     const __global floatX* A, const __global floatX* BT, __global float* C) {
    const int tidm = get_local_id(0);
    const int tidn = get_local_id(1);
    const int tid = tidn * RTSM + tidm;
    const int offm = TSM * get_group_id(0);
    const int offn = TSN * get_group_id(1);
    const int Mv = M / WIDTH, Nv = N / WIDTH;     // column lengths in vectors

    __local float Atile[TSK][TSM];
    __local float Btile[TSN][TSK + PAD];

    float Areg[WPTM];
    float Breg[WPTN];
    float acc[WPTM][WPTN];
    for (int wm = 0; wm < WPTM; wm++)
        for (int wn = 0; wn < WPTN; wn++) acc[wm][wn] = 0.0f;

    const int tiles = K / TSK;
    for (int t = 0; t < tiles; t++) {
        const int k0 = TSK * t;
        for (int l = 0; l < LPTA; l++) {
            const int e = tid + l * RTSM * RTSN;
            const int ev = e % VTSM, ek = e / VTSM;
            const floatX v = A[(k0 + ek) * Mv + offm / WIDTH + ev];
            SPREAD(v, A_SLOT)
        }
        for (int l = 0; l < LPTB; l++) {
            const int e = tid + l * RTSM * RTSN;
            const int ev = e % VTSN, ek = e / VTSN;
            const floatX v = BT[(k0 + ek) * Nv + offn / WIDTH + ev];
            SPREAD(v, B_SLOT)
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
