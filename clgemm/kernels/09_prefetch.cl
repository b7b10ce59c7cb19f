// Rung 9: rung 8 with prefetching. Up to rung 8 a work-group loads a pair of tiles, waits at a
// barrier, computes on them and waits at a second barrier before the next loads may overwrite
// them: while the loads are in flight nothing computes, and while it computes nothing loads.
// Here each operand has two local buffers. In the iteration for tile t, every work-item first
// issues the global loads of its share of tile t+1 into registers (Anext, Bnext), then computes
// on tile t from buffer t%2, and only then stores the registers into the other buffer. A load
// does not stall a work-item until its result is used, so the loads travel during the compute.
// A prologue fills buffer 0 before the loop, with nothing to overlap it with.
//
// One barrier per tile is enough. The iteration for tile t reads buffer t%2, writes buffer
// (t+1)%2 and ends at the barrier. Its writes go to the buffer that the iteration before read,
// and every one of those reads was made before the barrier that ended that iteration; its reads
// are of the buffer that the iteration before wrote, and every one of those writes was made
// before the same barrier. So no work-item reads a buffer while another writes it, which is what
// the second barrier of rung 8 was for. The price is twice the local memory and LPTA + LPTB
// vectors of registers per work-item.
//   TSM, TSN, TSK, WPTM, WPTN, WIDTH, PAD, USE_SHUFFLE, SGS: as in rung 8, and so is the opt-in
//   shuffle path;  RTSM, RTSN, VTSM, VTSN, LPTA, LPTB, KPS: derived as in rung 8

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

// Global -> registers: this work-item's vectors of the A and B tiles that start at depth k0.
// The loads are only issued here; nothing waits for them until STORE_TILES uses the registers.
#define FETCH_TILES(k0)                                                             \
    for (int l = 0; l < LPTA; l++) {                                                \
        const int e = tid + l * RTSM * RTSN;                                        \
        const int ev = e % VTSM, ek = e / VTSM;                                     \
        Anext[l] = LOAD_GLOBAL(A, ((k0) + ek) * Mv + offm / WIDTH + ev);            \
    }                                                                               \
    for (int l = 0; l < LPTB; l++) {                                                \
        const int e = tid + l * RTSM * RTSN;                                        \
        const int ev = e % VTSN, ek = e / VTSN;                                     \
        Bnext[l] = LOAD_GLOBAL(BT, ((k0) + ek) * Nv + offn / WIDTH + ev);           \
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
void gemm_prefetch(const int M, const int N, const int K,
                   const __global floatX* RESTRICT A, const __global floatX* RESTRICT BT,
                   __global float* C) {
    const int tidm = get_local_id(0);
    const int tidn = get_local_id(1);
    const int tid = tidn * RTSM + tidm;
    const int offm = TSM * get_group_id(0);
    const int offn = TSN * get_group_id(1);
    const int Mv = M / WIDTH, Nv = N / WIDTH;

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

    const int tiles = K / TSK;
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
            C[n * M + offm + tidm + wm * RTSM] = acc[wm][wn];
        }
    }
}
