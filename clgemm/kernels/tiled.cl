// Library kernel 12, "tiled": what gemm() and the tuner run where the sizes suit its tiles. It
// is the ladder's rung 9 (WIDTH-wide loads through LOAD_GLOBAL from RESTRICT inputs, two local
// buffers per operand, the next tiles fetched into registers during the compute, one barrier per
// tile: the argument for one barrier is in kernels/09_prefetch.cl) with the register block and
// the tiles reworked for speed rather than for teaching. Rung 8's padding and opt-in sub-group
// shuffle are not here.
//
// Both tiles are stored k-major ([k][m] and [k][n]), so that a run of consecutive rows of A or
// columns of B is contiguous in local memory and can be read as one vector. Four tunable
// switches widen the inner loop (at 1, 1, 1, 1 it is the scalar register block of rungs 6-9):
//   VWM    A values and accumulators are vectors of VWM consecutive rows. Work-item tidm owns the
//          vector slots tidm, tidm + RTSM, tidm + 2*RTSM, ... of the tile, so neighbouring
//          work-items read neighbouring vectors: WPTM/VWM wide local reads instead of WPTM.
//   VWN    B values are read as vectors of VWN consecutive columns, slots tidn, tidn + RTSN, ...
//   CACHE_A, CACHE_B  1: the operand is staged through local memory as above. 0: the inner loop
//          reads it straight from global memory. On a CPU, local memory is ordinary cached
//          memory and every barrier splits the work-group's loop over work-items in two, so
//          leaving it out can be the faster choice; with both at 0 the kernel has no barrier.
//   PANELS 1 (with CACHE_A = CACHE_B = 0): A and BT come packed into panels (see A_VEC below).
//   PACK_K P > 0 (a CPU's form, with CACHE_A = CACHE_B = PANELS = 0, VWN = 1, WPTM = VWM):
//          a work-group is one work-item that owns the whole TSM x TSN tile of C, the
//          RTSM x RTSN pieces of WPTM x WPTN sums that a group's work-items would own. For each
//          P * TSK steps of K it copies the tile's rows of A and columns of B (or rows of BT)
//          into local memory, which stays in its core's cache, and walks every piece over them,
//          adding to the sums that the earlier steps left in C. The operands are read where the
//          caller has them, and each core packs only what it is about to use, while it is in
//          that core's cache, instead of a pack of both operands in a launch of its own.
//   RASTER  0: the tiles of C in the launch's order, a column of tiles after another. R > 0: in
//          bands of R tile rows, so the groups resident at one time share rows of A and columns
//          of BT and find them in the device's last-level cache.
//   WARP_M  0: work-items as launched. W > 0: each run of 32 consecutive work-items (one NVIDIA
//          warp) takes a W x (32/W) block of the group's work-items, so that it reads W distinct
//          A vectors and 32/W distinct B vectors per step instead of a whole column of them. The
//          tile loads keep the launch's order, so they stay coalesced.
//   UNROLL_K 0: the loop over a tile's depth as the compiler leaves it. 1: unrolled outright,
//          so that every step's local reads can be issued ahead of the sums. Compilers differ
//          in how far they unroll it by themselves (NVIDIA's OpenCL and NVRTC do not agree),
//          and which is faster depends on the configuration, so it is the tuner's to choose.
//   PIPELINE 0: the next tiles are fetched into registers during the compute and stored after
//          it (two local buffers). S >= 2 (NVIDIA, compute capability 8.0 and newer): S local
//          buffers filled by cp.async through inline PTX, straight from global memory without
//          registers, S - 1 tiles in flight while one is computed on.
//   LOCKSTEP 1 (with CACHE_A = CACHE_B = 0): a barrier after every tile anyway. It orders no
//          memory; it makes a CPU runtime that runs a work-group as loops over its work-items
//          run every work-item through one tile before any starts the next, so the tile's
//          values that they share are still in cache when the next work-item reads them.
//   KSPLIT 1: one work-group walks all of K. S = 2 or 4 (with local tiles, no PIPELINE): S
//          slices of the group's work-items, each with its own tiles, walk one S-th of K each,
//          and slice 0 adds the others' sums through local memory before it stores. On a GPU a
//          product too small to fill every compute unit with enough warps then has S times as
//          many of them at work, each over a shorter loop, with no second launch. The slices
//          lie along the group's second dimension (RTSN * KSPLIT work-items), so the launch's
//          geometry is that of KSPLIT = 1 with taller groups.
//   TSM, TSN, TSK, WPTM, WPTN, WIDTH: as in rung 7
//   RTSM, RTSN, VTSM, VTSN, LPTA, LPTB: derived as in rung 7;  VPTM = WPTM/VWM, VPTN = WPTN/VWN

// ---- parameters (-D NAME=VALUE; these defaults make the file build on its own) ---------
#ifndef TSM
  #define TSM 128      // tile rows (along M)
#endif
#ifndef TSN
  #define TSN 128      // tile columns (along N)
#endif
#ifndef TSK
  #define TSK 16       // tile depth (along K)
#endif
#ifndef WPTM
  #define WPTM 8       // outputs per work-item along M
#endif
#ifndef WPTN
  #define WPTN 8       // outputs per work-item along N
#endif
#ifndef WIDTH
  #define WIDTH 4      // floats per vector load from global memory
#endif
#ifndef VWM
  #define VWM 1        // floats per register vector along M (A values, sums)
#endif
#ifndef VWN
  #define VWN 1        // floats per register vector along N (B values)
#endif
#ifndef CACHE_A
  #define CACHE_A 1    // 1: A tiles through local memory; 0: A read from global
#endif
#ifndef CACHE_B
  #define CACHE_B 1    // 1: B tiles through local memory; 0: B read from global
#endif
#ifndef PANELS
  #define PANELS 0     // 1: A and BT read from panels packed before the kernel
#endif
#ifndef LOCKSTEP
  #define LOCKSTEP 0   // 1: a barrier per tile even without local memory (CPUs)
#endif
#ifndef PIPELINE
  #define PIPELINE 0   // S >= 2: S local buffers filled by cp.async (NVIDIA sm_80+)
#endif
#ifndef RASTER
  #define RASTER 0     // R > 0: tiles of C in bands of R tile rows (cache reuse between groups)
#endif
#ifndef WARP_M
  #define WARP_M 0     // W > 0: each 32 work-items a W x (32/W) block of the group
#endif
#ifndef UNROLL_K
  #define UNROLL_K 0   // 1: the loop over a tile's depth unrolled outright
#endif
#ifndef KSPLIT
  #define KSPLIT 1     // S: K in S slices of one work-group, summed in local memory
#endif
#ifndef PACK_K
  #define PACK_K 0     // P > 0: one work-item a group, its operands copied P tiles of K at a time
#endif
#if PACK_K && (CACHE_A || CACHE_B || PANELS || LOCKSTEP || PIPELINE || KSPLIT != 1 || WARP_M \
               || VWN != 1 || WPTM != VWM)
  #error "PACK_K needs no local tiles, panels, LOCKSTEP, PIPELINE, WARP_M or KSPLIT; VWN 1; WPTM VWM"
#endif
#if KSPLIT != 1 && KSPLIT != 2 && KSPLIT != 4
  #error "KSPLIT is 1, 2 or 4"
#endif
#if KSPLIT > 1 && (PIPELINE || WARP_M || !CACHE_A || !CACHE_B)
  #error "KSPLIT > 1 needs CACHE_A = CACHE_B = 1, PIPELINE = 0 and WARP_M = 0"
#endif
// ---- set by the call, not tuned -----------------------------------------------------------
#ifndef BATCHED
  #define BATCHED 0    // 1: a stack of products along dimension 2 (three strides more)
#endif
#ifndef BT_FROM_B
  #define BT_FROM_B 0  // 1: the B argument is B itself (K x N), transposed tile by tile
#endif
#ifndef STACKED_B
  #define STACKED_B 0  // with BT_FROM_B and BATCHED, 1: a stack of products, each B its own
#endif                 // K x N (stride_b floats apart); 0: slices of one K (stride_b a depth)
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

// Global -> registers: the vectors of the A (B) tile that starts at depth k0.
#define FETCH_A(k0)                                                                  \
    for (int l = 0; l < LPTA; l++) {                                                 \
        const int e = tid + l * RTSM * RTSN;                                         \
        Anext[l] = LOAD_GLOBAL(A, ((k0) + e / VTSM) * Mv + offm / WIDTH + e % VTSM); \
    }
#if BT_FROM_B && CACHE_B
// B itself (K x N, column-major): a B tile is loaded as vectors down its columns (along k) and
// each vector's components are spread over consecutive k of the local tile, which stays
// k-major, so the product's loop is the same; gemm() then needs no transposed copy of B.
#if TSK % WIDTH
  #error "BT_FROM_B with CACHE_B needs TSK a multiple of WIDTH"
#endif
#define B_VECTORS (TSK / WIDTH)   // vectors down one column of the B tile
#define B_AT(e, k0) ((offn + (e) / B_VECTORS) * Kv + (k0) / WIDTH + (e) % B_VECTORS)
#else
#define B_VECTORS VTSN            // vectors along one row of the BT tile
#define B_AT(e, k0) (((k0) + (e) / B_VECTORS) * Nv + offn / WIDTH + (e) % B_VECTORS)
#endif
#define FETCH_B(k0)                                                                  \
    for (int l = 0; l < LPTB; l++) {                                                 \
        const int e = tid + l * RTSM * RTSN;                                         \
        Bnext[l] = LOAD_GLOBAL(BT, B_AT(e, k0));                                     \
    }

// Registers -> local buffer `buf`: component i of a vector goes to the next row (column); of
// B itself, to the next step of k.
#define A_SLOT(i) Atile[ks][buf][ek][WIDTH * ev + (i)]
#if BT_FROM_B
#define B_SLOT(i) Btile[ks][buf][WIDTH * ev + (i)][eo]
#else
#define B_SLOT(i) Btile[ks][buf][eo][WIDTH * ev + (i)]
#endif
#define STORE_A(buf_index)                                                           \
    {                                                                                \
        const int buf = (buf_index);                                                 \
        for (int l = 0; l < LPTA; l++) {                                             \
            const int e = tid + l * RTSM * RTSN;                                     \
            const int ev = e % VTSM, ek = e / VTSM;                                  \
            SPREAD(Anext[l], A_SLOT)                                                 \
        }                                                                            \
    }
#define STORE_B(buf_index)                                                           \
    {                                                                                \
        const int buf = (buf_index);                                                 \
        for (int l = 0; l < LPTB; l++) {                                             \
            const int e = tid + l * RTSM * RTSN;                                     \
            const int ev = e % B_VECTORS, eo = e / B_VECTORS;                        \
            SPREAD(Bnext[l], B_SLOT)                                                 \
        }                                                                            \
    }

#if PIPELINE
// The copies of the tiles through cp.async (CP_ASYNC in common.h).
#if BT_FROM_B || !CACHE_A || !CACHE_B || !(WIDTH == 1 || WIDTH == 2 || WIDTH == 4)
  #error "PIPELINE needs CACHE_A = CACHE_B = 1, BT rather than B itself, and WIDTH 1, 2 or 4"
#endif
#if PIPELINE < 2 || PIPELINE > 4
  #error "PIPELINE is 0, 2, 3 or 4"
#endif
// The A (BT) tile at depth k0 into local buffer `buf`: vector e of the tile lies in global memory
// as it is to lie in the k-major local tile, so each is one copy.
#define ASYNC_A(buf, k0)                                                               \
    for (int l = 0; l < LPTA; l++) {                                                   \
        const int e = tid + l * RTSM * RTSN;                                           \
        CP_ASYNC(&Atile[0][buf][e / VTSM][WIDTH * (e % VTSM)],                            \
                 A + ((k0) + e / VTSM) * Mv + offm / WIDTH + e % VTSM, 4 * WIDTH);     \
    }
#define ASYNC_B(buf, k0)                                                               \
    for (int l = 0; l < LPTB; l++) {                                                   \
        const int e = tid + l * RTSM * RTSN;                                           \
        CP_ASYNC(&Btile[0][buf][e / VTSN][WIDTH * (e % VTSN)], BT + B_AT(e, k0), 4 * WIDTH); \
    }
#define BUFFERS PIPELINE
#else
#define BUFFERS 2
#endif

// The vector of A at step k of the current tile, vector slot v along M (likewise B along N).
// With PANELS (and no local memory) A and BT arrive packed by helper steps: the TSM rows of A
// (TSN rows of BT) that one work-group reads lie contiguously over k, so each work-item walks a
// stream instead of touching a new column, often a new page, at every step.
#if CACHE_A
  #define A_VEC(k, v) LOCAL_VEC(floatM, &Atile[ks][cur][k][VWM * (v)])
#elif PANELS
  #define A_VEC(k, v) VLOADM(Af + ((offm / TSM) * K + k0 + (k)) * TSM + VWM * (v))
#else
  #define A_VEC(k, v) VLOADM(Af + (k0 + (k)) * M + offm + VWM * (v))
#endif
#if CACHE_B
  #define B_VEC(k, v) LOCAL_VEC(floatN, &Btile[ks][cur][k][VWN * (v)])
#elif BT_FROM_B
  // B itself without local memory (a CPU's micro-kernel on the caller's operands): column
  // offn + v of B, one float at each step, so each work-item walks WPTN streams down columns.
  #if VWN != 1 || PANELS
    #error "BT_FROM_B without CACHE_B needs VWN = 1 and PANELS = 0"
  #endif
  #define B_VEC(k, v) BTf[(long)(offn + (v)) * Kb + k0 + (k)]
#elif PANELS
  #define B_VEC(k, v) VLOADN(BTf + ((offn / TSN) * K + k0 + (k)) * TSN + VWN * (v))
#else
  #define B_VEC(k, v) VLOADN(BTf + (k0 + (k)) * N + offn + VWN * (v))
#endif

// Panels read straight from global memory with no barrier are a CPU's micro-kernel: its
// register block is unrolled outright, so that the sums stay in vector registers rather than
// in an array in memory (PoCL does not unroll it by itself). With LOCKSTEP's barrier the
// unrolled loop came out slower there, so it is left as it is.
#if !CACHE_A && !CACHE_B && (PANELS || BT_FROM_B) && !LOCKSTEP
  #define UNROLLED _Pragma("unroll")
#else
  #define UNROLLED
#endif
#if UNROLL_K
  #define DEPTH_LOOP _Pragma("unroll")
#else
  #define DEPTH_LOOP
#endif

#if PACK_K
  #define GROUP_M 1
  #define GROUP_N 1
#else
  #define GROUP_M RTSM
  #define GROUP_N (RTSN * KSPLIT)
#endif
__kernel __attribute__((reqd_work_group_size(GROUP_M, GROUP_N, 1)))
void gemm_tiled(const int M, const int N, const int K,
                   const __global floatX* RESTRICT A, const __global floatX* RESTRICT BT,
                   __global float* C
#if BATCHED
                   , const int stride_a, const int stride_b, const int stride_c
#endif
                   ) {
#if BATCHED
    // Product z of the stack: each operand starts stride floats (a multiple of WIDTH) further
    // on. gemm() splits a long K this way too, slice z reading columns z*K... of A and BT.
    const long z = get_group_id(2);
    A += z * (stride_a / WIDTH);
    BT += z * (stride_b / WIDTH);
    C += z * stride_c;
#endif
#if WARP_M
    const int lid = (int)get_local_id(1) * RTSM + (int)get_local_id(0);
    const int lane = lid % 32, warp = lid / 32;
    const int tidm = (warp % (RTSM / WARP_M)) * WARP_M + lane % WARP_M;
    const int tidn = (warp / (RTSM / WARP_M)) * (32 / WARP_M) + lane / WARP_M;
#else
    const int tidm = get_local_id(0);
    const int tidn = (int)get_local_id(1) % RTSN;
#endif
    const int ks = (int)get_local_id(1) / RTSN;   // the group's slice of K (0 where KSPLIT = 1)
#if RASTER
    BANDED_TILE(offm, offn)   // common.h: the tiles of C in bands of RASTER tile rows
#else
    const int offm = TSM * get_group_id(0);
    const int offn = TSN * get_group_id(1);
#endif
#if CACHE_A || CACHE_B
    // The tile loads follow the launch's order of work-items, whatever WARP_M makes of them.
    const int tid = ((int)get_local_id(1) % RTSN) * RTSM + (int)get_local_id(0);
#endif
    // Column lengths in vectors for the tile loads; the inputs seen as floats for direct reads.
#if CACHE_A
    const int Mv = M / WIDTH;
#else
    const __global float* RESTRICT Af = (const __global float*)A;
#endif
#if CACHE_B && BT_FROM_B && BATCHED && !STACKED_B
    // With B itself and slices of one K, B's columns hold every slice.
    const int Kv = K * (int)get_num_groups(2) / WIDTH;
#elif CACHE_B && BT_FROM_B
    const int Kv = K / WIDTH;
#elif CACHE_B
    const int Nv = N / WIDTH;
#else
    const __global float* RESTRICT BTf = (const __global float*)BT;
#endif
#if !CACHE_B && BT_FROM_B && BATCHED && !STACKED_B
    const int Kb = K * (int)get_num_groups(2);   // a column of B holds every slice
#elif !CACHE_B && BT_FROM_B
    const int Kb = K;
#endif

#if PACK_K
    // The tile's copies: A as RTSM vectors of WPTM rows at each step; B by columns, each
    // B_SKEW floats longer than the copy's depth so that the WPTN columns read at one step do
    // not all fall in one cache set (as columns a power of two of floats long would); BT by
    // steps, its WPTN values of one step side by side.
    #define DEPTH (PACK_K * TSK)
    #define B_SKEW 16
    __local floatM Apack[RTSM][DEPTH];
  #if BT_FROM_B
    __local float Bpack[RTSN][WPTN][DEPTH + B_SKEW];
    #define B_PACKED(q, c, k) Bpack[q][c][k]
  #else
    __local float Bpack[RTSN][DEPTH][WPTN];
    #define B_PACKED(q, c, k) Bpack[q][k][c]
  #endif
    for (int kc = 0; kc < K; kc += DEPTH) {
        // a column of the tile's rows of A at a time: TSM floats in a row, then the next page
        for (int k = 0; k < DEPTH; k++)
            for (int p = 0; p < RTSM; p++)
                Apack[p][k] = VLOADM(Af + (long)(kc + k) * M + offm + VWM * p);
        for (int q = 0; q < RTSN; q++) {
  #if BT_FROM_B
            for (int c = 0; c < WPTN; c++) {
                const __global float* column = BTf + (long)(offn + WPTN * q + c) * Kb + kc;
                for (int k = 0; k < DEPTH; k++) Bpack[q][c][k] = column[k];
            }
  #else
            for (int k = 0; k < DEPTH; k++)
                for (int c = 0; c < WPTN; c++)
                    Bpack[q][k][c] = BTf[(long)(kc + k) * N + offn + WPTN * q + c];
  #endif
        }
        // A column of pieces after another, so that its WPTN columns of B stay in the nearest
        // cache while the pieces' rows of A go by.
        for (int q = 0; q < RTSN; q++)
            for (int p = 0; p < RTSM; p++) {
                __global float* out = C + (long)(offn + WPTN * q) * M + offm + VWM * p;
                floatM sums[WPTN];
                _Pragma("unroll")
                for (int c = 0; c < WPTN; c++)
                    sums[c] = kc ? VLOADM(out + (long)c * M) : (floatM)(0.0f);
                for (int k = 0; k < DEPTH; k++) {
                    const floatM av = Apack[p][k];
                    _Pragma("unroll")
                    for (int c = 0; c < WPTN; c++) sums[c] += av * B_PACKED(q, c, k);
                }
                _Pragma("unroll")
                for (int c = 0; c < WPTN; c++) VSTOREM(sums[c], out + (long)c * M);
            }
    }
#else
#if CACHE_A
    __local float Atile[KSPLIT][BUFFERS][TSK][TSM] __attribute__((aligned(64)));
#endif
#if CACHE_B
    __local float Btile[KSPLIT][BUFFERS][TSK][TSN] __attribute__((aligned(64)));
#endif
#if CACHE_A && !PIPELINE
    floatX Anext[LPTA];
#endif
#if CACHE_B && !PIPELINE
    floatX Bnext[LPTB];
#endif
    floatM a[VPTM];
    float b[WPTN];
    floatM acc[VPTM][WPTN];
    for (int vm = 0; vm < VPTM; vm++)
        for (int wn = 0; wn < WPTN; wn++) acc[vm][wn] = (floatM)(0.0f);

    const int tiles = K / TSK / KSPLIT;
    const int kb = ks * tiles * TSK;   // where this slice's part of K starts
#if PIPELINE
    PIPELINE_START(tiles)   // common.h
    for (int t = 0; t < tiles; t++) {
        const int cur = t % PIPELINE;
        PIPELINE_STEP(t, tiles)
        DEPTH_LOOP
        for (int k = 0; k < TSK; k++) {
            for (int vn = 0; vn < VPTN; vn++) VSTOREN(B_VEC(k, tidn + vn * RTSN), b + VWN * vn);
            for (int vm = 0; vm < VPTM; vm++) a[vm] = A_VEC(k, tidm + vm * RTSM);
            for (int vm = 0; vm < VPTM; vm++)
                for (int wn = 0; wn < WPTN; wn++) acc[vm][wn] += a[vm] * b[wn];
        }
    }
#else
    // Prologue: the first pair of tiles, with nothing yet to overlap them with.
#if CACHE_A
    FETCH_A(kb)
    STORE_A(0)
#endif
#if CACHE_B
    FETCH_B(kb)
    STORE_B(0)
#endif
#if CACHE_A || CACHE_B
    barrier(CLK_LOCAL_MEM_FENCE);
#endif

    for (int t = 0; t < tiles; t++) {
        const int k0 = kb + TSK * t;
#if CACHE_A || CACHE_B
        const int cur = t % 2;
        const bool more = t + 1 < tiles;
#endif
#if CACHE_A
        if (more) {
            FETCH_A(k0 + TSK)                   // in flight during the loop below
        }
#endif
#if CACHE_B
        if (more) {
            FETCH_B(k0 + TSK)
        }
#endif

        DEPTH_LOOP
        for (int k = 0; k < TSK; k++) {
            UNROLLED
            for (int vn = 0; vn < VPTN; vn++) VSTOREN(B_VEC(k, tidn + vn * RTSN), b + VWN * vn);
            UNROLLED
            for (int vm = 0; vm < VPTM; vm++) a[vm] = A_VEC(k, tidm + vm * RTSM);
            UNROLLED
            for (int vm = 0; vm < VPTM; vm++)
                UNROLLED
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
#if CACHE_A || CACHE_B || LOCKSTEP
        barrier(CLK_LOCAL_MEM_FENCE);
#endif
    }
#endif

#if KSPLIT > 1
    // Every slice has passed the loop's last barrier: slices 1.. leave their sums in local
    // memory, each work-item's at its own index so that a warp's stores are consecutive, and
    // slice 0 adds them to its own and stores the tile.
    __local floatM parts[KSPLIT - 1][VPTM * WPTN][RTSM * RTSN];
    const int own = tidn * RTSM + tidm;
    if (ks > 0)
        for (int vm = 0; vm < VPTM; vm++)
            for (int wn = 0; wn < WPTN; wn++) parts[ks - 1][vm * WPTN + wn][own] = acc[vm][wn];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (ks > 0) return;
    for (int s = 0; s < KSPLIT - 1; s++)
        for (int vm = 0; vm < VPTM; vm++)
            for (int wn = 0; wn < WPTN; wn++) acc[vm][wn] += parts[s][vm * WPTN + wn][own];
#endif
    // Accumulator acc[vm][VWN*vn + i] holds rows VWM*(tidm + vm*RTSM) ... + VWM-1 of column
    // VWN*(tidn + vn*RTSN) + i; C is column-major, so each is one contiguous vector store.
    for (int vn = 0; vn < VPTN; vn++) {
        for (int i = 0; i < VWN; i++) {
            const int n = offn + VWN * (tidn + vn * RTSN) + i;
            for (int vm = 0; vm < VPTM; vm++) {
                const int m = offm + VWM * (tidm + vm * RTSM);
                VSTOREM(acc[vm][VWN * vn + i], C + n * M + m);
            }
        }
    }
#endif
}
