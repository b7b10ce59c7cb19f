// Skinny GEMM: a product whose C has few rows or few columns, in one launch that streams the
// long operand once.
//
// With one side of C small (at most a few dozen), each element of the long operand is used only
// that many times, so the product is bound by reading the long operand, not by arithmetic. A
// tiled kernel spends most of its tile on rows or columns that do not exist; this one gives a
// work-group a block of the long side and the whole short side (or a block of it, SB), and
// spreads K over work-items of the group as well, so that there are enough loads in flight to
// keep memory busy even though the long side alone makes few work-groups.
//
// The kernel computes  O := alpha * X * Y + beta * O  with
//   X  R x K, the long operand:  X(r, p) = X[x_offset + r * xr + p * xk]
//   Y  K x S, the short operand: Y(p, s) = Y[y_offset + p * yk + s * ys]
//   O  R x S, the result:        O(r, s) = O[o_offset + r * or_ + s * os]
// The strides are arguments, so one build serves C = op(A) op(B) with N small (X = op(A),
// Y = op(B), O = C) and, read as C^T = op(B)^T op(A)^T, with M small (X = op(B)^T, Y = op(A)^T,
// O = C^T), whatever the transposes: the library passes the strides each case needs. One of
// xr, xk is 1 in every case, and neighbouring work-items read neighbouring floats of X either way:
// neighbouring rows where X runs along r, neighbouring steps of K (the lanes of one row) where it
// runs along K.
//
// Geometry: a work-group has LR x LK work-items, LR along r and LK "lanes" along K (numbered
// rows first where X runs along r, lanes first where it runs along K). Work-item (t, l) owns
// rows r0 + t + v * LR (v < VR) and SB columns of O from s0; lane l takes p = k0 + l + LK * u
// (u < KC) of each chunk of LK * KC steps along K. Per chunk:
//   - the group copies Y's LK*KC x SB block into local memory ([p][s], zeros outside Y); with
//     YLOCAL = 0 each work-item reads Y where it lies instead, and the loop has no barrier;
//   - each work-item loads its KC x VR values of X into registers first (all loads in flight
//     before any is used); with PREFETCH = 1 the next chunk's values are loaded while this one
//     is multiplied, so the group hides their latency itself;
//   - it multiplies them with float4s of the block.
// At the end the lanes' partial sums are added through local memory, four columns at a time,
// and the group writes its block of O. Y's block and the sums share one local buffer, since the
// one is done with before the other begins. A work-item keeps a pointer to each of its rows of X
// and steps along K by adding to it.
//
// beta is tested at run time: with beta == 0, O is only written, never read.
//
// BATCHED = 1 makes one launch do a stack of such products, one per work-group along the third
// dimension: product z reads X, Y and O x_stride, y_stride and o_stride floats times z further
// on. A configuration with SPLIT > 1 runs so over slices of K (the slices of X and Y are views
// one depth apart along K), and one more launch sums the partial products: SPLIT only says how
// many slices the caller makes, the kernel itself does not read it.

// ---- parameters (set with -D; the defaults make the file build on its own) ---------------------
#ifndef LR
  #define LR 32        // work-items per group along the long side
#endif
#ifndef LK
  #define LK 8         // work-items per group along K (lanes)
#endif
#ifndef VR
  #define VR 1         // rows of the long side per work-item
#endif
#ifndef SB
  #define SB 16        // columns of the short side per group (a multiple of 4)
#endif
#ifndef KC
  #define KC 4         // steps along K per lane and chunk
#endif

#ifndef YLOCAL
  #define YLOCAL 1     // 1: Y's block for each chunk staged in local memory; 0: read from global
#endif
#ifndef PREFETCH
  #define PREFETCH 0   // 1: each chunk's X loaded during the chunk before (twice the registers)
#endif
#ifndef SPLIT
  #define SPLIT 1      // slices of K over work-groups: the caller's (BATCHED over the slices)
#endif
#ifndef BATCHED
  #define BATCHED 0    // 1: a stack of products, one per work-group along the third dimension
#endif

#if BATCHED != 0 && BATCHED != 1
  #error "BATCHED must be 0 or 1"
#endif
#if PREFETCH != 0 && PREFETCH != 1
  #error "PREFETCH must be 0 or 1"
#endif
#if YLOCAL != 0 && YLOCAL != 1
  #error "YLOCAL must be 0 or 1"
#endif
#if LR < 1 || LK < 1 || VR < 1 || SB < 4 || KC < 1
  #error "LR, LK, VR and KC must be positive and SB at least 4"
#endif
#if SB % 4 != 0
  #error "SB must be a multiple of 4"
#endif

// ---- derived (as clgemm/rungs/skinny.py derives them) -----------------------------------------
#ifndef THREADS
  #define THREADS (LR * LK)               // work-items per group
#endif
#ifndef TR
  #define TR (LR * VR)                    // rows of the long side per group
#endif
#ifndef CHUNK
  #define CHUNK (LK * KC)                 // steps along K per chunk
#endif
#define SB4 (SB / 4)                      // float4s per row of the local block
#define YROW (SB + 4)                     // floats per row of the local block: one float4 more,
                                          // so lanes reading different rows meet other banks
// Y's block is used inside the loop along K and the lanes' sums after it, so one local buffer
// holds either: the larger of the two.
#if YLOCAL
  #define YL_FLOAT4S (CHUNK * YROW / 4)
#else
  #define YL_FLOAT4S 0
#endif
#define RED_FLOAT4S (LK * TR)
#define SHARED_FLOAT4S (YL_FLOAT4S > RED_FLOAT4S ? YL_FLOAT4S : RED_FLOAT4S)
#define YL(pp, s) (((__local float*)shared)[(pp) * YROW + (s)])
#define RED(q, e) (shared[(q) * TR + (e)])

// The KC x VR values of X this work-item multiplies in the chunk from k0 (zero past K). xp[v]
// points at its row v's first step; a step u of the chunk lies kx + u * lane_step further on, so
// each load costs one addition. Only the chunk that reaches past K tests its steps.
#define LOAD_X(dst, k0)                                                                          \
    {                                                                                            \
        const long kx = (long)(k0) * xk;                                                         \
        if ((k0) + CHUNK <= K) {                                                                 \
            for (int u = 0; u < KC; u++) {                                                       \
                const long at = kx + u * lane_step;                                              \
                for (int v = 0; v < VR; v++) (dst)[u][v] = LOAD_GLOBAL(xp[v], at);               \
            }                                                                                    \
        } else {                                                                                 \
            for (int u = 0; u < KC; u++) {                                                       \
                const long at = kx + u * lane_step;                                              \
                const int inside = (k0) + l + LK * u < K;                                        \
                for (int v = 0; v < VR; v++)                                                     \
                    (dst)[u][v] = inside ? LOAD_GLOBAL(xp[v], at) : 0.0f;                        \
            }                                                                                    \
        }                                                                                        \
    }

// Y(p, s) read from global memory (YLOCAL = 0), zero past K and past S; yp is Y's offset of row p
#define Y_AT(p, yp, sc) \
    (((p) < K && (sc) < S) ? LOAD_GLOBAL(Y, (yp) + (long)(sc) * ys) : 0.0f)

__kernel __attribute__((reqd_work_group_size(LR, LK, 1)))
void gemm_skinny(const int R, const int S, const int K, const float alpha, const float beta,
                 const __global float* RESTRICT X, const int x_offset, const int xr, const int xk,
                 const __global float* RESTRICT Y, const int y_offset, const int yk, const int ys,
                 __global float* O, const int o_offset, const int or_, const int os
#if BATCHED
                 , const int x_stride, const int y_stride, const int o_stride
#endif
                 ) {
#if BATCHED
    const long z = get_group_id(2);               // which product of the stack
    X += z * x_stride;
    Y += z * y_stride;
    O += z * o_stride;
#endif
    // Work-items are numbered along dimension 0 first, and neighbours in that numbering read
    // together: along r they should differ in row where X runs along r, in lane where it runs
    // along K (then the lanes of a row read a run of neighbouring floats).
    const int tid = get_local_id(1) * LR + get_local_id(0);
    const int along_k = xk == 1 && xr != 1;
    const int t = along_k ? tid / LK : tid % LR;  // 0 .. LR-1
    const int l = along_k ? tid % LK : tid / LR;  // 0 .. LK-1
    // Groups that share rows of X run next to one another: the launch numbers groups along
    // dimension 0 first, so the blocks of the short side are taken as the fastest-varying part
    // of that numbering. X's rows are then read from memory once and from the cache by the
    // other blocks of S, however many there are.
    const int blocks = get_num_groups(1);
    const int g = get_group_id(0) + get_num_groups(0) * get_group_id(1);
    const int r0 = TR * (g / blocks);
    const int s0 = SB * (g % blocks);

    __local float4 shared[SHARED_FLOAT4S];

    // The rows this work-item reads, clamped to the last one so that no load needs a guard
    // (the rows past R are computed and never stored), at the lane's first step along K.
    const __global float* xp[VR];
    for (int v = 0; v < VR; v++) {
        const int r = min(r0 + t + v * LR, R - 1);
        xp[v] = X + (long)x_offset + (long)r * xr + (long)l * xk;
    }
    const long lane_step = (long)LK * xk;         // from a lane's step along K to its next

    float4 acc[VR][SB4];
    for (int v = 0; v < VR; v++)
        for (int s = 0; s < SB4; s++) acc[v][s] = (float4)(0.0f);

#if PREFETCH
    float xn[KC][VR];
    LOAD_X(xn, 0);
#endif
    for (int k0 = 0; k0 < K; k0 += CHUNK) {
#if YLOCAL
        // Y's block for this chunk: consecutive work-items take consecutive floats of Y's
        // contiguous direction (along s where ys == 1, else along p).
        for (int e = tid; e < CHUNK * SB; e += THREADS) {
            int pp, s;
            if (ys == 1) { pp = e / SB; s = e % SB; } else { s = e / CHUNK; pp = e % CHUNK; }
            const int p = k0 + pp, sc = s0 + s;
            YL(pp, s) = (p < K && sc < S)
                ? LOAD_GLOBAL(Y, (long)y_offset + (long)p * yk + (long)sc * ys) : 0.0f;
        }
#endif
#if PREFETCH
        // this chunk's X came with the last one; the next chunk's loads go out now, and are in
        // flight while this one is multiplied
        float xv[KC][VR];
        for (int u = 0; u < KC; u++)
            for (int v = 0; v < VR; v++) xv[u][v] = xn[u][v];
        LOAD_X(xn, k0 + CHUNK);
#else
        float xv[KC][VR];
        LOAD_X(xv, k0);
#endif
#if YLOCAL
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int u = 0; u < KC; u++) {
            const int pp = l + LK * u;
            for (int s = 0; s < SB4; s++) {
                const float4 y = LOCAL_VEC(float4, &YL(pp, 4 * s));
                for (int v = 0; v < VR; v++) acc[v][s] += xv[u][v] * y;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
#else
        // Y straight from global memory: the work-items of a lane read the same floats, which
        // the cache serves to all of them; no barrier holds a work-item back.
        for (int u = 0; u < KC; u++) {
            const int p = k0 + l + LK * u;
            const long yp = (long)y_offset + (long)p * yk;
            for (int s = 0; s < SB4; s++) {
                const int sc = s0 + 4 * s;
                const float4 y = (float4)(Y_AT(p, yp, sc), Y_AT(p, yp, sc + 1),
                                          Y_AT(p, yp, sc + 2), Y_AT(p, yp, sc + 3));
                for (int v = 0; v < VR; v++) acc[v][s] += xv[u][v] * y;
            }
        }
#endif
    }

    // The lanes' sums, added four columns at a time; work-item e of the group then stores row
    // r0 + e's four columns (neighbouring work-items, neighbouring rows).
    for (int s = 0; s < SB4; s++) {
        for (int v = 0; v < VR; v++) RED(l, t + v * LR) = acc[v][s];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int e = tid; e < TR; e += THREADS) {
            float4 sum = RED(0, e);
            for (int q = 1; q < LK; q++) sum += RED(q, e);
            const int r = r0 + e;
            const float part[4] = {sum.x, sum.y, sum.z, sum.w};
            if (r < R) {
                for (int c = 0; c < 4; c++) {
                    const int sc = s0 + 4 * s + c;
                    if (sc < S) {
                        const long oi = (long)o_offset + (long)r * or_ + (long)sc * os;
                        O[oi] = beta == 0.0f ? alpha * part[c] : alpha * part[c] + beta * O[oi];
                    }
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
