// Rung 9: prefetching with double-buffered local tiles. Up to rung 8 a work-group first waits
// for its tiles to arrive from global memory, then computes, then waits again. Here there are
// two A tiles and two B tiles in local memory: while the work-group computes on one pair, each
// work-item has already issued the global loads of the next tiles into registers, so their
// latency hides behind the arithmetic; after the compute it stores them into the other pair.
// Loads are WIDTH-wide and read through LOAD_GLOBAL from RESTRICT inputs, as in rung 8 (the
// opt-in shuffle of rung 8 is left out to keep this rung about the pipeline alone).
//
// One barrier per tile is enough. In iteration t the group reads buffer t%2 and writes buffer
// (t+1)%2, and the barrier ends the iteration. The writes of iteration t go to the buffer that
// was read in iteration t-1, and every read of t-1 came before the barrier that closed t-1. The
// reads of iteration t+1 are of the buffer written in iteration t, and every one of those writes
// came before the barrier that closed t. So no work-item can read a buffer while another writes
// it, which is what the second barrier of the single-buffered rungs was for.
//   TSM, TSN, TSK, WPTM, WPTN, WIDTH, PAD: as in rung 7
//   RTSM, RTSN, VTSM, VTSN, LPTA, LPTB: derived as in rung 7

#define A_SLOT(i) Atile[buf][ek][WIDTH * ev + (i)]
#define B_SLOT(i) Btile[buf][WIDTH * ev + (i)][ek]

// Global -> registers: the vectors of the tiles that start at depth k0.
#define FETCH_TILES(k0)                                                        \
    for (int l = 0; l < LPTA; l++) {                                           \
        const int e = tid + l * RTSM * RTSN;                                   \
        Anext[l] = LOAD_GLOBAL(A, ((k0) + e / VTSM) * Mv + offm / WIDTH + e % VTSM); \
    }                                                                          \
    for (int l = 0; l < LPTB; l++) {                                           \
        const int e = tid + l * RTSM * RTSN;                                   \
        Bnext[l] = LOAD_GLOBAL(BT, ((k0) + e / VTSN) * Nv + offn / WIDTH + e % VTSN); \
    }

// Registers -> local buffer `buf`.
#define STORE_TILES(buf_index)                                                 \
    {                                                                          \
        const int buf = (buf_index);                                           \
        for (int l = 0; l < LPTA; l++) {                                       \
            const int e = tid + l * RTSM * RTSN;                               \
            const int ev = e % VTSM, ek = e / VTSM;                            \
            SPREAD(Anext[l], A_SLOT)                                           \
        }                                                                      \
        for (int l = 0; l < LPTB; l++) {                                       \
            const int e = tid + l * RTSM * RTSN;                               \
            const int ev = e % VTSN, ek = e / VTSN;                            \
            SPREAD(Bnext[l], B_SLOT)                                           \
        }                                                                      \
    }

__kernel __attribute__((reqd_work_group_size(RTSM, RTSN, 1)))
void gemm_prefetch(const int M, const int N, const int K,
                   const __global floatX* RESTRICT A, const __global floatX* RESTRICT BT,
                   __global float* C) {
    const int tidm = get_local_id(0);
    const int tidn = get_local_id(1);
    const int tid = tidn * RTSM + tidm;
    const int offm = TSM * get_group_id(0);
    const int offn = TSN * get_group_id(1);
    const int Mv = M / WIDTH, Nv = N / WIDTH;

    __local float Atile[2][TSK][TSM];
    __local float Btile[2][TSN][TSK + PAD];

    floatX Anext[LPTA];
    floatX Bnext[LPTB];
    float Areg[WPTM];
    float Breg[WPTN];
    float acc[WPTM][WPTN];
    for (int wm = 0; wm < WPTM; wm++)
        for (int wn = 0; wn < WPTN; wn++) acc[wm][wn] = 0.0f;

    // Prologue: the first pair of tiles, with nothing yet to overlap them with.
    FETCH_TILES(0)
    STORE_TILES(0)
    barrier(CLK_LOCAL_MEM_FENCE);

    const int tiles = K / TSK;
    for (int t = 0; t < tiles; t++) {
        const int cur = t % 2;
        const bool more = t + 1 < tiles;
        if (more) {
            FETCH_TILES(TSK * (t + 1))          // in flight during the loop below
        }

        for (int k = 0; k < TSK; k++) {
            for (int wn = 0; wn < WPTN; wn++) Breg[wn] = Btile[cur][tidn + wn * RTSN][k];
            for (int wm = 0; wm < WPTM; wm++) Areg[wm] = Atile[cur][k][tidm + wm * RTSM];
            for (int wm = 0; wm < WPTM; wm++)
                for (int wn = 0; wn < WPTN; wn++) acc[wm][wn] += Areg[wm] * Breg[wn];
        }

        if (more) {
            STORE_TILES(1 - cur)
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
