// Rung 8: rung 7 plus two hints that some vendors' compilers turn into faster code.
//  * The inputs are declared RESTRICT (no other pointer writes what they point to) and read
//    through LOAD_GLOBAL, so a compiler may keep them in registers across stores to C and route
//    them through a read-only cache. On OpenCL LOAD_GLOBAL is a plain read; a CUDA header can map
//    it to __ldg.
//  * Opt-in (USE_SHUFFLE=1, only where the device has sub-group shuffles): the WPTN values of B
//    that a step k needs are the same for every work-item of a column tidn. Rather than each
//    work-item reading all of them from local memory, the SGS lanes of a sub-group split the
//    reads: lane l reads B value (l % WPTN) for step kc + l / WPTN, one read covering
//    KPS = SGS/WPTN steps, and the lanes then pass values to one another with SHUFFLE. For that a
//    sub-group must lie inside one column tidn, which RTSM % SGS == 0 ensures when sub-groups are
//    cut from the linear local id, as on Intel and NVIDIA hardware.
//   TSM, TSN, TSK, WPTM, WPTN, PAD, WIDTH: as in rung 7;  USE_SHUFFLE: 0 or 1;
//   SGS: sub-group size the shuffle path is built for;  KPS = SGS/WPTN (derived, like RTSM, RTSN,
//   VTSM, VTSN, LPTA, LPTB)

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

#define A_SLOT(i) Atile[ek][WIDTH * ev + (i)]
#define B_SLOT(i) Btile[WIDTH * ev + (i)][ek]

// One step k of the register block, once Breg holds the step's B values.
#define MULTIPLY_STEP(k)                                                           \
    for (int wm = 0; wm < WPTM; wm++) Areg[wm] = Atile[(k)][tidm + wm * RTSM];     \
    for (int wm = 0; wm < WPTM; wm++)                                              \
        for (int wn = 0; wn < WPTN; wn++) acc[wm][wn] += Areg[wm] * Breg[wn];

__kernel __attribute__((reqd_work_group_size(RTSM, RTSN, 1))) SG_ATTR
void gemm_vendor_loads(const int M, const int N, const int K,
                       const __global floatX* RESTRICT A, const __global floatX* RESTRICT BT,
                       __global float* C) {
    const int tidm = get_local_id(0);
    const int tidn = get_local_id(1);
    const int tid = tidn * RTSM + tidm;
    const int offm = TSM * get_group_id(0);
    const int offn = TSN * get_group_id(1);
    const int Mv = M / WIDTH, Nv = N / WIDTH;

    __local float Atile[TSK][TSM];
    __local float Btile[TSN][TSK + PAD];

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

    const int tiles = K / TSK;
    for (int t = 0; t < tiles; t++) {
        const int k0 = TSK * t;
        for (int l = 0; l < LPTA; l++) {
            const int e = tid + l * RTSM * RTSN;
            const int ev = e % VTSM, ek = e / VTSM;
            const floatX v = LOAD_GLOBAL(A, (k0 + ek) * Mv + offm / WIDTH + ev);
            SPREAD(v, A_SLOT)
        }
        for (int l = 0; l < LPTB; l++) {
            const int e = tid + l * RTSM * RTSN;
            const int ev = e % VTSN, ek = e / VTSN;
            const floatX v = LOAD_GLOBAL(BT, (k0 + ek) * Nv + offn / WIDTH + ev);
            SPREAD(v, B_SLOT)
        }
        barrier(CLK_LOCAL_MEM_FENCE);

#if USE_SHUFFLE
        if (shuffle_ok) {
            for (int kc = 0; kc < TSK; kc += KPS) {
                const float share = Btile[tidn + share_wn * RTSN][kc + share_k];
                for (int kk = 0; kk < KPS; kk++) {
                    for (int wn = 0; wn < WPTN; wn++) Breg[wn] = SHUFFLE(share, kk * WPTN + wn);
                    MULTIPLY_STEP(kc + kk)
                }
            }
        } else
#endif
        {
            for (int k = 0; k < TSK; k++) {
                for (int wn = 0; wn < WPTN; wn++) Breg[wn] = Btile[tidn + wn * RTSN][k];
                MULTIPLY_STEP(k)
            }
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
