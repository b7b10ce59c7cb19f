// Rung 10: rung 9 for any M, N, K >= 1. Up to rung 9 the sizes must be multiples of the tiles
// (a caller pads its matrices). Here the tile loads are checked: an element outside A or BT is
// read as zero, which adds nothing to the sums, so the tiles at the right and bottom edges and the
// last, partial tile along K (the loop now runs ceil(K / TSK) times) need no other care; only the
// outputs inside C are stored. No padded copy is made, so the only helper is the transpose of B,
// which handles any size itself.
//
// Vector loads need whole, aligned vectors. When M is a multiple of WIDTH, a WIDTH-aligned vector
// of a column of A lies wholly inside the matrix or wholly outside it, so the vector load stays,
// with one check per vector. Otherwise the columns of A start at addresses that are not multiples
// of WIDTH floats and a vector may straddle the edge, so A is read one checked float at a time.
// The same holds for BT with N. The choice is made once per launch and is the same for every
// work-item. Pipeline, barrier and parameters are rung 9's.
//   TSM, TSN, TSK, WPTM, WPTN, WIDTH, PAD, USE_SHUFFLE, SGS: as in rung 9;
//   RTSM, RTSN, VTSM, VTSN, LPTA, LPTB, KPS: derived as in rung 9

// ---- parameters (-D NAME=VALUE; these defaults make the file build on its own) ---------
#ifndef TSM
  #define TSM 128         // tile rows (along M)
#endif
#ifndef TSN
  #define TSN 128         // tile columns (along N)
#endif
#ifndef TSK
  #define TSK 16          // tile depth (along K)
#endif
#ifndef WPTM
  #define WPTM 8          // outputs per work-item along M
#endif
#ifndef WPTN
  #define WPTN 8          // outputs per work-item along N
#endif
#ifndef WIDTH
  #define WIDTH 4         // floats per vector load from global memory
#endif
#ifndef PAD
  #define PAD 1           // floats of padding per row of the local B tile
#endif
#ifndef USE_SHUFFLE
  #define USE_SHUFFLE 0   // 1: share B register values through sub-group shuffles
#endif
#ifndef SGS
  #define SGS 32          // sub-group size the shuffle path is built for
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
#ifndef KPS
  #define KPS (SGS / WPTN + (SGS < WPTN))            // steps k per shared read of B (shuffle)
#endif

// Sub-group primitives for the shuffle path, from whichever extension the device has. A backend
// header may define SHUFFLE, SG_LANE and SG_SIZE itself (CUDA: __shfl_sync over a warp).
#if USE_SHUFFLE
  #ifndef SHUFFLE
    #if defined(cl_intel_subgroups)
      #pragma OPENCL EXTENSION cl_intel_subgroups : enable
      #define SHUFFLE(v, lane) intel_sub_group_shuffle((v), (uint)(lane))
    #elif defined(cl_khr_subgroup_shuffle)
      #pragma OPENCL EXTENSION cl_khr_subgroups : enable
      #define SHUFFLE(v, lane) sub_group_shuffle((v), (uint)(lane))
    #else
      #error "USE_SHUFFLE=1 needs cl_khr_subgroup_shuffle or cl_intel_subgroups"
    #endif
  #endif
  #ifndef SG_LANE
    #define SG_LANE() ((int)get_sub_group_local_id())
  #endif
  #ifndef SG_SIZE
    #define SG_SIZE() ((int)get_sub_group_size())
  #endif
  // Intel compilers pick a sub-group size per kernel unless told; ask for the one we built for.
  #if defined(cl_intel_required_subgroup_size)
    #define SG_ATTR __attribute__((intel_reqd_sub_group_size(SGS)))
  #endif
#endif
#ifndef SG_ATTR
  #define SG_ATTR
#endif

// Global -> registers: this work-item's vectors of the A and B tiles that start at depth k0,
// zero outside the matrices. Vector l of the A tile holds rows m0 .. m0+WIDTH-1 of column k;
// whole vectors where M is a multiple of WIDTH (a_vectors), one checked float at a time else.
#define FETCH_TILES(k0)                                                             \
    for (int l = 0; l < LPTA; l++) {                                                \
        const int e = tid + l * RTSM * RTSN;                                        \
        const int ev = e % VTSM, ek = e / VTSM;                                     \
        const int k = (k0) + ek, m0 = offm + WIDTH * ev;                            \
        if (a_vectors) {                                                            \
            Anext[l] = (floatX)(0.0f);                                              \
            if (k < K && m0 < M) Anext[l] = LOAD_GLOBAL(A, k * Mv + m0 / WIDTH);    \
        } else {                                                                    \
            float part[WIDTH];                                                      \
            for (int i = 0; i < WIDTH; i++) {                                       \
                const bool inside = k < K && m0 + i < M;                            \
                part[i] = inside ? LOAD_GLOBAL(Af, k * M + m0 + i) : 0.0f;          \
            }                                                                       \
            Anext[l] = VLOADX(part);                                                \
        }                                                                           \
    }                                                                               \
    for (int l = 0; l < LPTB; l++) {                                                \
        const int e = tid + l * RTSM * RTSN;                                        \
        const int ev = e % VTSN, ek = e / VTSN;                                     \
        const int k = (k0) + ek, n0 = offn + WIDTH * ev;                            \
        if (b_vectors) {                                                            \
            Bnext[l] = (floatX)(0.0f);                                              \
            if (k < K && n0 < N) Bnext[l] = LOAD_GLOBAL(BT, k * Nv + n0 / WIDTH);   \
        } else {                                                                    \
            float part[WIDTH];                                                      \
            for (int i = 0; i < WIDTH; i++) {                                       \
                const bool inside = k < K && n0 + i < N;                            \
                part[i] = inside ? LOAD_GLOBAL(BTf, k * N + n0 + i) : 0.0f;         \
            }                                                                       \
            Bnext[l] = VLOADX(part);                                                \
        }                                                                           \
    }

// Registers -> local buffer `index` (0 or 1), each vector spread over the tile as in rung 8.
#define A_SLOT(i) Atile[buf][ek][WIDTH * ev + (i)]
#define B_SLOT(i) Btile[buf][WIDTH * ev + (i)][ek]
#define STORE_TILES(index)                                                          \
    {                                                                               \
        const int buf = (index);                                                    \
        for (int l = 0; l < LPTA; l++) {                                            \
            const int e = tid + l * RTSM * RTSN;                                    \
            const int ev = e % VTSM, ek = e / VTSM;                                 \
            SPREAD(Anext[l], A_SLOT)                                                \
        }                                                                           \
        for (int l = 0; l < LPTB; l++) {                                            \
            const int e = tid + l * RTSM * RTSN;                                    \
            const int ev = e % VTSN, ek = e / VTSN;                                 \
            SPREAD(Bnext[l], B_SLOT)                                                \
        }                                                                           \
    }

// One step k of the register block on buffer `cur`, once Breg holds the step's B values.
#define MULTIPLY_STEP(k)                                                           \
    for (int wm = 0; wm < WPTM; wm++) Areg[wm] = Atile[cur][k][tidm + wm * RTSM];  \
    for (int wm = 0; wm < WPTM; wm++)                                              \
        for (int wn = 0; wn < WPTN; wn++) acc[wm][wn] += Areg[wm] * Breg[wn];

__kernel __attribute__((reqd_work_group_size(RTSM, RTSN, 1))) SG_ATTR
void gemm_any_size(const int M, const int N, const int K,
                   const __global floatX* RESTRICT A, const __global floatX* RESTRICT BT,
                   __global float* C) {
    const int tidm = get_local_id(0);
    const int tidn = get_local_id(1);
    const int tid = tidn * RTSM + tidm;
    const int offm = TSM * get_group_id(0);
    const int offn = TSN * get_group_id(1);
    const int Mv = M / WIDTH, Nv = N / WIDTH;
    const bool a_vectors = M % WIDTH == 0, b_vectors = N % WIDTH == 0;   // once per launch
    const __global float* RESTRICT Af = (const __global float*)A;         // for the float path
    const __global float* RESTRICT BTf = (const __global float*)BT;

    __local float Atile[2][TSK][TSM];             // two buffers of each tile
    __local float Btile[2][TSN][TSK + PAD];
    floatX Anext[LPTA];                           // the next tiles, on their way from global
    floatX Bnext[LPTB];

    float Areg[WPTM];
    float Breg[WPTN];
    float acc[WPTM][WPTN];
    for (int wm = 0; wm < WPTM; wm++)
        for (int wn = 0; wn < WPTN; wn++) acc[wm][wn] = 0.0f;

#if USE_SHUFFLE
    const int lane = SG_LANE();
    const int share_wn = lane % WPTN, share_k = lane / WPTN;   // what this lane reads for all
    // A compiler free to choose the sub-group size may not have chosen SGS; the lane arithmetic
    // would then be wrong, so such a launch takes the plain path instead. The test is the same
    // for every work-item of the group, so no work-item skips a shuffle the others make.
    const bool shuffle_ok = SG_SIZE() == SGS;
#endif

    // Prologue: the first tiles, with nothing yet to overlap their loads with.
    FETCH_TILES(0)
    STORE_TILES(0)
    barrier(CLK_LOCAL_MEM_FENCE);

    const int tiles = (K + TSK - 1) / TSK;       // the last one may be partial
    for (int t = 0; t < tiles; t++) {
        const int k0 = TSK * t;
        const int cur = t % 2;                    // the buffer computed on; the other is filled
        const bool more = t + 1 < tiles;
        if (more) {
            FETCH_TILES(k0 + TSK)                 // in flight during the compute below
        }

#if USE_SHUFFLE
        if (shuffle_ok) {
            for (int kc = 0; kc < TSK; kc += KPS) {
                const float share = Btile[cur][tidn + share_wn * RTSN][kc + share_k];
                for (int kk = 0; kk < KPS; kk++) {
                    for (int wn = 0; wn < WPTN; wn++) Breg[wn] = SHUFFLE(share, kk * WPTN + wn);
                    MULTIPLY_STEP(kc + kk)
                }
            }
        } else
#endif
        {
            for (int k = 0; k < TSK; k++) {
                for (int wn = 0; wn < WPTN; wn++) Breg[wn] = Btile[cur][tidn + wn * RTSN][k];
                MULTIPLY_STEP(k)
            }
        }

        if (more) {
            STORE_TILES(1 - cur)                  // the loads issued above are used only here
        }
        barrier(CLK_LOCAL_MEM_FENCE);             // the one barrier per tile (see the top)
    }

    for (int wn = 0; wn < WPTN; wn++) {
        const int n = offn + tidn + wn * RTSN;
        for (int wm = 0; wm < WPTM; wm++) {
            const int m = offm + tidm + wm * RTSM;
            if (m < M && n < N) C[n * M + m] = acc[wm][wn];   // only the outputs inside C
        }
    }
}
