// Rung 10: any M, N, K >= 1. Rung 9's double-buffered pipeline with bounds checks: tiles that
// hang over the edge of A or BT are filled with zeros (which add nothing to the sums), and only
// the outputs inside C are stored. The last tile along K may be partial, so the loop runs
// ceil(K / TSK) times. No padded copies of A or B are made: the helper step before this kernel
// is only the transpose of B, which handles any size itself.
//
// Vector loads need aligned, whole vectors. When M is a multiple of WIDTH, a WIDTH-aligned
// vector of a column of A is either wholly inside the matrix or wholly outside, so the vector
// load stays, guarded per vector. When it is not, the columns of A start at addresses that are
// not multiples of WIDTH floats and vectors may straddle the edge, so A is read one float at a
// time, each float checked. The same holds for BT with N. The choice is made once per launch
// and is the same for every work-item.
//   TSM, TSN, TSK, WPTM, WPTN, WIDTH, PAD: as in rung 9
//   RTSM, RTSN, VTSM, VTSN, LPTA, LPTB: derived as in rung 9

// Staging registers hold each vector as WIDTH separate floats, since the scalar path fills them
// one at a time.
#define ANEXT_SLOT(i) Anext[l][i]
#define BNEXT_SLOT(i) Bnext[l][i]

// Global -> registers, zero outside the matrix: the vectors of the tiles starting at depth k0.
// Rows m0 .. m0+WIDTH-1 of column k of A (m0 a multiple of WIDTH), likewise for BT along N.
#define FETCH_TILES(k0)                                                              \
    for (int l = 0; l < LPTA; l++) {                                                 \
        const int e = tid + l * RTSM * RTSN;                                         \
        const int k = (k0) + e / VTSM, m0 = offm + WIDTH * (e % VTSM);               \
        if (a_vectors) {                                                             \
            if (k < K && m0 < M) {                                                   \
                const floatX v = LOAD_GLOBAL(A, k * (M / WIDTH) + m0 / WIDTH);       \
                SPREAD(v, ANEXT_SLOT)                                                \
            } else {                                                                 \
                for (int i = 0; i < WIDTH; i++) Anext[l][i] = 0.0f;                  \
            }                                                                        \
        } else {                                                                     \
            for (int i = 0; i < WIDTH; i++)                                          \
                Anext[l][i] = (k < K && m0 + i < M) ? LOAD_GLOBAL(As, k * M + m0 + i) : 0.0f; \
        }                                                                            \
    }                                                                                \
    for (int l = 0; l < LPTB; l++) {                                                 \
        const int e = tid + l * RTSM * RTSN;                                         \
        const int k = (k0) + e / VTSN, n0 = offn + WIDTH * (e % VTSN);               \
        if (b_vectors) {                                                             \
            if (k < K && n0 < N) {                                                   \
                const floatX v = LOAD_GLOBAL(BT, k * (N / WIDTH) + n0 / WIDTH);      \
                SPREAD(v, BNEXT_SLOT)                                                \
            } else {                                                                 \
                for (int i = 0; i < WIDTH; i++) Bnext[l][i] = 0.0f;                  \
            }                                                                        \
        } else {                                                                     \
            for (int i = 0; i < WIDTH; i++)                                          \
                Bnext[l][i] = (k < K && n0 + i < N) ? LOAD_GLOBAL(BTs, k * N + n0 + i) : 0.0f; \
        }                                                                            \
    }

// Registers -> local buffer `buf`.
#define STORE_TILES(buf)                                                             \
    for (int l = 0; l < LPTA; l++) {                                                 \
        const int e = tid + l * RTSM * RTSN;                                         \
        const int ev = e % VTSM, ek = e / VTSM;                                      \
        for (int i = 0; i < WIDTH; i++) Atile[(buf)][ek][WIDTH * ev + i] = Anext[l][i]; \
    }                                                                                \
    for (int l = 0; l < LPTB; l++) {                                                 \
        const int e = tid + l * RTSM * RTSN;                                         \
        const int ev = e % VTSN, ek = e / VTSN;                                      \
        for (int i = 0; i < WIDTH; i++) Btile[(buf)][WIDTH * ev + i][ek] = Bnext[l][i]; \
    }

__kernel __attribute__((reqd_work_group_size(RTSM, RTSN, 1)))
void gemm_any_size(const int M, const int N, const int K,
                   const __global floatX* RESTRICT A, const __global floatX* RESTRICT BT,
                   __global float* C) {
    const int tidm = get_local_id(0);
    const int tidn = get_local_id(1);
    const int tid = tidn * RTSM + tidm;
    const int offm = TSM * get_group_id(0);
    const int offn = TSN * get_group_id(1);
    // The same inputs seen as floats, for the one-float-at-a-time path.
    const __global float* RESTRICT As = (const __global float*)A;
    const __global float* RESTRICT BTs = (const __global float*)BT;
    const bool a_vectors = M % WIDTH == 0;
    const bool b_vectors = N % WIDTH == 0;

    __local float Atile[2][TSK][TSM];
    __local float Btile[2][TSN][TSK + PAD];

    float Anext[LPTA][WIDTH];
    float Bnext[LPTB][WIDTH];
    float Areg[WPTM];
    float Breg[WPTN];
    float acc[WPTM][WPTN];
    for (int wm = 0; wm < WPTM; wm++)
        for (int wn = 0; wn < WPTN; wn++) acc[wm][wn] = 0.0f;

    FETCH_TILES(0)
    STORE_TILES(0)
    barrier(CLK_LOCAL_MEM_FENCE);

    // One barrier per tile suffices for the reason given in rung 9.
    const int tiles = (K + TSK - 1) / TSK;
    for (int t = 0; t < tiles; t++) {
        const int cur = t % 2;
        const bool more = t + 1 < tiles;
        if (more) {
            FETCH_TILES(TSK * (t + 1))
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
            const int m = offm + tidm + wm * RTSM;
            if (m < M && n < N) C[n * M + m] = acc[wm][wn];
        }
    }
}
