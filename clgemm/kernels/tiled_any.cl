// Library kernel 13, "tiled-any": the tiled kernel (kernels/tiled.cl) for any M, N, K >= 1,
// without its CPU forms (PANELS, LOCKSTEP). It is what gemm() falls back to when nothing stored
// fits a shape. Tiles that hang over the edge of A or BT are filled with zeros (which add nothing
// to the sums), and only the outputs inside C are stored. The last tile along K may be partial,
// so the loop runs ceil(K / TSK) times. Nothing is padded to the tiles: the helper step before
// this kernel is only the transpose of B, which handles any size itself.
//
// Vector loads need aligned, whole vectors. When M is a multiple of WIDTH, a WIDTH-aligned
// vector of a column of A is either wholly inside the matrix or wholly outside, so the vector
// load stays, guarded per vector. When it is not, the columns of A start at addresses that are
// not multiples of WIDTH floats and vectors may straddle the edge, so A is read one float at a
// time, each float checked. The same holds for BT with N. The choice is made once per launch
// and is the same for every work-item (rung 10 teaches the same edges on rung 9's kernel).
// With PADDED_LD the caller has laid the columns out whole vectors apart, M (N) rounded up to
// WIDTH floats, the rows past M (N) holding zeros: then every column starts on a vector, and
// the vectors that reach past the edge read those zeros.
// Reads that bypass local memory (CACHE_A or CACHE_B = 0) are checked the same way: a vector
// wholly inside the column is read at once, one that reaches past its end float by float, zeros
// beyond. The stores of C are vectors where all VWM rows are inside C and single checked floats
// at the bottom edge.
//   TSM, TSN, TSK, WPTM, WPTN, WIDTH, VWM, VWN, CACHE_A, CACHE_B, PIPELINE, RASTER, UNROLL_K:
//          as in the tiled kernel; a pipeline's copies past the edges are cp.async's zero fill
//          (a size of 0); the bands of RASTER tile rows hold partial tiles like any other.
//   RTSM, RTSN, VTSM, VTSN, LPTA, LPTB, VPTM, VPTN: derived as in the tiled kernel
//   BATCHED: set by the call: 1 splits K into slices along dimension 2 (one more argument,
//          the depth of a slice; the last slice may be shorter), slice z's partial product
//          going to the z-th M x N of C. Every slice is zero-filled past its own end, as the
//          whole K is, so no depth has to divide K.
//   PADDED_LD: set by the call: 1 where A's and BT's columns lie M and N rounded up to WIDTH
//          floats apart: on multiples of WIDTH, where they lie so anyway, and the float-by-float
//          path then drops out at compile time; off them, where gemm() packs them so.

// ---- parameters (-D NAME=VALUE; these defaults make the file build on its own) ---------
#ifndef TSM
  #define TSM 128     // tile rows (along M)
#endif
#ifndef TSN
  #define TSN 128     // tile columns (along N)
#endif
#ifndef TSK
  #define TSK 16      // tile depth (along K)
#endif
#ifndef WPTM
  #define WPTM 8      // outputs per work-item along M
#endif
#ifndef WPTN
  #define WPTN 8      // outputs per work-item along N
#endif
#ifndef WIDTH
  #define WIDTH 4     // floats per vector load from global memory
#endif
#ifndef VWM
  #define VWM 1       // floats per register vector along M (A values, sums)
#endif
#ifndef VWN
  #define VWN 1       // floats per register vector along N (B values)
#endif
#ifndef CACHE_A
  #define CACHE_A 1   // 1: A tiles through local memory; 0: A read from global
#endif
#ifndef CACHE_B
  #define CACHE_B 1   // 1: B tiles through local memory; 0: B read from global
#endif
#ifndef PIPELINE
  #define PIPELINE 0  // S >= 2: S local buffers filled by cp.async (NVIDIA sm_80+)
#endif
#ifndef RASTER
  #define RASTER 0    // R > 0: tiles of C in bands of R tile rows (cache reuse between groups)
#endif
#ifndef UNROLL_K
  #define UNROLL_K 0  // 1: the loop over a tile's depth unrolled outright
#endif
// ---- set by the call, not tuned -----------------------------------------------------------
#ifndef BATCHED
  #define BATCHED 0   // 1: K in slices along dimension 2 (one argument more: their depth)
#endif
#if BATCHED != 0 && BATCHED != 1
  #error "BATCHED must be 0 or 1"
#endif
#ifndef PADDED_LD
  #define PADDED_LD 0 // 1: the columns of A (BT) lie M (N) rounded up to WIDTH floats apart
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
#ifndef VPTM
  #define VPTM (WPTM / VWM)                          // register vectors per work-item along M
#endif
#ifndef VPTN
  #define VPTN (WPTN / VWN)                          // register vectors per work-item along N
#endif

// Staging registers hold each vector as WIDTH separate floats, since the scalar path fills them
// one at a time.
#define ANEXT_SLOT(i) Anext[l][i]
#define BNEXT_SLOT(i) Bnext[l][i]

// Global -> registers, zero outside the matrix: the vectors of the A (B) tile starting at depth
// k0. Rows m0 .. m0+WIDTH-1 of column k of A (m0 a multiple of WIDTH), likewise for BT along N.
#define FETCH_A(k0)                                                                  \
    for (int l = 0; l < LPTA; l++) {                                                 \
        const int e = tid + l * RTSM * RTSN;                                         \
        const int k = (k0) + e / VTSM, m0 = offm + WIDTH * (e % VTSM);               \
        if (a_vectors) {                                                             \
            if (k < K && m0 < M) {                                                   \
                const floatX v = LOAD_GLOBAL(A, k * (lda / WIDTH) + m0 / WIDTH);     \
                SPREAD(v, ANEXT_SLOT)                                                \
            } else {                                                                 \
                for (int i = 0; i < WIDTH; i++) Anext[l][i] = 0.0f;                  \
            }                                                                        \
        } else {                                                                     \
            for (int i = 0; i < WIDTH; i++)                                          \
                Anext[l][i] = (k < K && m0 + i < M) ? LOAD_GLOBAL(Af, k * lda + m0 + i) : 0.0f; \
        }                                                                            \
    }
#define FETCH_B(k0)                                                                  \
    for (int l = 0; l < LPTB; l++) {                                                 \
        const int e = tid + l * RTSM * RTSN;                                         \
        const int k = (k0) + e / VTSN, n0 = offn + WIDTH * (e % VTSN);               \
        if (b_vectors) {                                                             \
            if (k < K && n0 < N) {                                                   \
                const floatX v = LOAD_GLOBAL(BT, k * (ldb / WIDTH) + n0 / WIDTH);    \
                SPREAD(v, BNEXT_SLOT)                                                \
            } else {                                                                 \
                for (int i = 0; i < WIDTH; i++) Bnext[l][i] = 0.0f;                  \
            }                                                                        \
        } else {                                                                     \
            for (int i = 0; i < WIDTH; i++)                                          \
                Bnext[l][i] = (k < K && n0 + i < N) ? LOAD_GLOBAL(BTf, k * ldb + n0 + i) : 0.0f; \
        }                                                                            \
    }

// Registers -> local buffer `buf`.
#define STORE_A(buf)                                                                 \
    for (int l = 0; l < LPTA; l++) {                                                 \
        const int e = tid + l * RTSM * RTSN;                                         \
        const int ev = e % VTSM, ek = e / VTSM;                                      \
        for (int i = 0; i < WIDTH; i++) Atile[(buf)][ek][WIDTH * ev + i] = Anext[l][i]; \
    }
#define STORE_B(buf)                                                                 \
    for (int l = 0; l < LPTB; l++) {                                                 \
        const int e = tid + l * RTSM * RTSN;                                         \
        const int ev = e % VTSN, ek = e / VTSN;                                      \
        for (int i = 0; i < WIDTH; i++) Btile[(buf)][ek][WIDTH * ev + i] = Bnext[l][i]; \
    }

#if PIPELINE
#if !CACHE_A || !CACHE_B || !(WIDTH == 1 || WIDTH == 2 || WIDTH == 4) || PIPELINE < 2 || PIPELINE > 4
  #error "PIPELINE is 0, or 2, 3 or 4 with CACHE_A = CACHE_B = 1 and WIDTH 1, 2 or 4"
#endif
// Global -> local buffer `buf` by cp.async (common.h), zeros outside the matrix: a whole vector
// where the column's length allows vectors, else float by float, each copied or zero-filled.
// A copy of size 0 reads nothing, but its address is still the operand's own.
#define ASYNC_A(buf, k0)                                                             \
    for (int l = 0; l < LPTA; l++) {                                                 \
        const int e = tid + l * RTSM * RTSN;                                         \
        const int ek = e / VTSM, ei = WIDTH * (e % VTSM);                            \
        const int k = (k0) + ek, m0 = offm + ei;                                     \
        if (a_vectors) {                                                             \
            const bool in = k < K && m0 < M;                                         \
            CP_ASYNC(&Atile[buf][ek][ei], in ? A + k * (lda / WIDTH) + m0 / WIDTH : A, \
                     in ? 4 * WIDTH : 0);                                            \
        } else {                                                                     \
            for (int i = 0; i < WIDTH; i++) {                                        \
                const bool in = k < K && m0 + i < M;                                 \
                CP_ASYNC_W1(&Atile[buf][ek][ei + i], in ? Af + k * lda + m0 + i : Af,  \
                            in ? 4 : 0);                                             \
            }                                                                        \
        }                                                                            \
    }
#define ASYNC_B(buf, k0)                                                             \
    for (int l = 0; l < LPTB; l++) {                                                 \
        const int e = tid + l * RTSM * RTSN;                                         \
        const int ek = e / VTSN, ei = WIDTH * (e % VTSN);                            \
        const int k = (k0) + ek, n0 = offn + ei;                                     \
        if (b_vectors) {                                                             \
            const bool in = k < K && n0 < N;                                         \
            CP_ASYNC(&Btile[buf][ek][ei], in ? BT + k * (ldb / WIDTH) + n0 / WIDTH : BT, \
                     in ? 4 * WIDTH : 0);                                            \
        } else {                                                                     \
            for (int i = 0; i < WIDTH; i++) {                                        \
                const bool in = k < K && n0 + i < N;                                 \
                CP_ASYNC_W1(&Btile[buf][ek][ei + i], in ? BTf + k * ldb + n0 + i : BTf, \
                            in ? 4 : 0);                                             \
            }                                                                        \
        }                                                                            \
    }
#define BUFFERS PIPELINE
#else
#define BUFFERS 2
#endif

// Straight from global memory, checked: the V_ consecutive floats from row r0 of column k of `src`
// (columns of length `len`, `ld` floats apart) into `dst`, zeros below the end of the column.
// Column k always exists: the loop over k stops at K when an operand is read this way (KSTEPS
// below).
#define CHECKED_READ(dst, V_, VLOAD_, src, len, ld, k, r0)                            \
    if ((r0) + V_ <= (len)) {                                                        \
        dst = VLOAD_((src) + (k) * (ld) + (r0));                                     \
    } else {                                                                         \
        float part[V_];                                                              \
        for (int i = 0; i < V_; i++)                                                 \
            part[i] = (r0) + i < (len) ? (src)[(k) * (ld) + (r0) + i] : 0.0f;        \
        dst = VLOAD_(part);                                                          \
    }

// Steps of k in the tile starting at k0. With both operands in local memory the tiles are
// zero-filled past K, so every tile runs TSK steps (a constant the compiler can unroll); a read
// straight from global memory has no zeros to rely on, so the last tile stops at K.
#if CACHE_A && CACHE_B
  #define KSTEPS TSK
#else
  #define KSTEPS min(TSK, K - k0)
#endif

#if CACHE_A
  #define READ_A(dst, k, v) dst = LOCAL_VEC(floatM, &Atile[cur][k][VWM * (v)]);
#else
  #define READ_A(dst, k, v) CHECKED_READ(dst, VWM, VLOADM, Af, M, lda, k0 + (k), offm + VWM * (v))
#endif
#if CACHE_B
  #define READ_B(dst, k, v) dst = LOCAL_VEC(floatN, &Btile[cur][k][VWN * (v)]);
#else
  #define READ_B(dst, k, v) CHECKED_READ(dst, VWN, VLOADN, BTf, N, ldb, k0 + (k), offn + VWN * (v))
#endif

#if UNROLL_K
  #define DEPTH_LOOP _Pragma("unroll")
#else
  #define DEPTH_LOOP
#endif

__kernel __attribute__((reqd_work_group_size(RTSM, RTSN, 1)))
void gemm_tiled_any(const int M, const int N, const int K_ALL,
                   const __global floatX* RESTRICT A, const __global floatX* RESTRICT BT,
                   __global float* C
#if BATCHED
                   , const int depth
#endif
                   ) {
    // How far apart the columns of A and BT lie: M and N floats, or with PADDED_LD those
    // rounded up to whole vectors.
#if PADDED_LD
    const int lda = (M + WIDTH - 1) / WIDTH * WIDTH, ldb = (N + WIDTH - 1) / WIDTH * WIDTH;
#else
    const int lda = M, ldb = N;
#endif
#if BATCHED
    // Slice z: columns z*depth onwards of A and of BT, at most `depth` of them. Where a
    // column's length is a whole number of vectors the slice's first column is a whole number
    // of vectors further on; where it is not, the operand is read float by float (a_vectors,
    // b_vectors below).
    const int z = get_group_id(2);
    const int K = min(depth, K_ALL - z * depth);
    A = (const __global floatX*)((const __global float*)A + (long)z * depth * lda);
    BT = (const __global floatX*)((const __global float*)BT + (long)z * depth * ldb);
    C += (long)z * M * N;
#else
    const int K = K_ALL;
#endif
    const int tidm = get_local_id(0);
    const int tidn = get_local_id(1);
#if RASTER
    BANDED_TILE(offm, offn)   // common.h: the tiles of C in bands of RASTER tile rows
#else
    const int offm = TSM * get_group_id(0);
    const int offn = TSN * get_group_id(1);
#endif
#if CACHE_A || CACHE_B
    const int tid = tidn * RTSM + tidm;
#endif
    // The same inputs seen as floats, for the one-float-at-a-time path and the direct reads.
    const __global float* RESTRICT Af = (const __global float*)A;
    const __global float* RESTRICT BTf = (const __global float*)BT;
#if CACHE_A
    const bool a_vectors = lda % WIDTH == 0;
#endif
#if CACHE_B
    const bool b_vectors = ldb % WIDTH == 0;
#endif

#if CACHE_A
    __local float Atile[BUFFERS][TSK][TSM] __attribute__((aligned(64)));
#endif
#if CACHE_B
    __local float Btile[BUFFERS][TSK][TSN] __attribute__((aligned(64)));
#endif
#if CACHE_A && !PIPELINE
    float Anext[LPTA][WIDTH];
#endif
#if CACHE_B && !PIPELINE
    float Bnext[LPTB][WIDTH];
#endif
    floatM a[VPTM];
    floatN bv;
    float b[WPTN];
    floatM acc[VPTM][WPTN];
    for (int vm = 0; vm < VPTM; vm++)
        for (int wn = 0; wn < WPTN; wn++) acc[vm][wn] = (floatM)(0.0f);

    const int tiles = (K + TSK - 1) / TSK;
#if PIPELINE
    // As in the tiled kernel (common.h's PIPELINE_START and PIPELINE_STEP).
    PIPELINE_START(tiles)
    for (int t = 0; t < tiles; t++) {
        const int cur = t % PIPELINE;
        PIPELINE_STEP(t, tiles)
        DEPTH_LOOP
        for (int k = 0; k < TSK; k++) {   // tiles past K are zeros
            for (int vn = 0; vn < VPTN; vn++) {
                READ_B(bv, k, tidn + vn * RTSN)
                VSTOREN(bv, b + VWN * vn);
            }
            for (int vm = 0; vm < VPTM; vm++) {
                READ_A(a[vm], k, tidm + vm * RTSM)
            }
            for (int vm = 0; vm < VPTM; vm++)
                for (int wn = 0; wn < WPTN; wn++) acc[vm][wn] += a[vm] * b[wn];
        }
    }
#else
#if CACHE_A
    FETCH_A(0)
    STORE_A(0)
#endif
#if CACHE_B
    FETCH_B(0)
    STORE_B(0)
#endif
#if CACHE_A || CACHE_B
    barrier(CLK_LOCAL_MEM_FENCE);
#endif

    // One barrier per tile suffices for the reason given in kernels/09_prefetch.cl.
    for (int t = 0; t < tiles; t++) {
        const int k0 = TSK * t;
#if CACHE_A || CACHE_B
        const int cur = t % 2;
        const bool more = t + 1 < tiles;
#endif
#if CACHE_A
        if (more) {
            FETCH_A(k0 + TSK)
        }
#endif
#if CACHE_B
        if (more) {
            FETCH_B(k0 + TSK)
        }
#endif

        DEPTH_LOOP
        for (int k = 0; k < KSTEPS; k++) {
            for (int vn = 0; vn < VPTN; vn++) {
                READ_B(bv, k, tidn + vn * RTSN)
                VSTOREN(bv, b + VWN * vn);
            }
            for (int vm = 0; vm < VPTM; vm++) {
                READ_A(a[vm], k, tidm + vm * RTSM)
            }
            for (int vm = 0; vm < VPTM; vm++)
                for (int wn = 0; wn < WPTN; wn++) acc[vm][wn] += a[vm] * b[wn];
        }

#if CACHE_A
        if (more) {
            STORE_A(1 - cur)
        }
#endif
#if CACHE_B
        if (more) {
            STORE_B(1 - cur)
        }
#endif
#if CACHE_A || CACHE_B
        barrier(CLK_LOCAL_MEM_FENCE);
#endif
    }
#endif

    for (int vn = 0; vn < VPTN; vn++) {
        for (int i = 0; i < VWN; i++) {
            const int n = offn + VWN * (tidn + vn * RTSN) + i;
            if (n >= N) continue;
            for (int vm = 0; vm < VPTM; vm++) {
                const int m = offm + VWM * (tidm + vm * RTSM);
                if (m + VWM <= M) {
                    VSTOREM(acc[vm][VWN * vn + i], C + n * M + m);
                } else {
                    float part[VWM];
                    VSTOREM(acc[vm][VWN * vn + i], part);
                    for (int r = 0; r < VWM && m + r < M; r++) C[n * M + m + r] = part[r];
                }
            }
        }
    }
}
