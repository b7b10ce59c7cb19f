// A CPU form of SGEMM that packs its own operands, for scripts/cpu_blocks_probe.py (not a
// library kernel). C := A B, all column-major and tight: A is M x K, B is K x N, C is M x N,
// every size a multiple of the block it is cut in. A work-group is one work-item (a CPU runtime
// runs it on one core) and owns a block of C of GM x GN sums of MR x NR. For each KC steps of K
// it copies the block's rows of A and columns of B into local memory, which stays in that
// core's cache, then walks the sums of each MR x NR piece over those KC steps with MR-float
// vectors of A and NR broadcast values of B, adding to what the earlier steps left in C. The
// copies are the pack that gemm() otherwise runs as a launch of its own over both operands;
// here each core packs only what it is about to use, while it is in its cache.
//   MR: floats per vector of A and of the sums (4, 8 or 16); NR: columns per piece of sums
//   GM, GN: pieces per block along M and N; KC: steps of K per copy
//   BCOLS 0: B's block is turned k-major as it is copied, NR values of one step side by side;
//         1: B's columns are copied as they lie, each BPAD floats longer than KC so that the
//         NR columns read at one step fall in different cache sets
#ifndef MR
#define MR 16
#endif
#ifndef NR
#define NR 16
#endif
#ifndef GM
#define GM 4
#endif
#ifndef GN
#define GN 4
#endif
#ifndef KC
#define KC 256
#endif
#ifndef BCOLS
#define BCOLS 0
#endif
#ifndef BPAD
#define BPAD 16
#endif
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define VEC CAT(float, MR)
#define VLOAD CAT(vload, MR)
#define VSTORE CAT(vstore, MR)

__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void gemm_blocks(const int M, const int N, const int K,
                 const __global float* restrict A, const __global float* restrict B,
                 __global float* restrict C) {
    __local VEC Ap[GM][KC];
#if BCOLS
    __local float Bp[GN][NR][KC + BPAD];
    #define B_AT(q, c, k) Bp[q][c][k]
#else
    __local float Bp[GN][KC][NR];
    #define B_AT(q, c, k) Bp[q][k][c]
#endif
    const int m0 = get_group_id(0) * (MR * GM);
    const int n0 = get_group_id(1) * (NR * GN);
    for (int kc = 0; kc < K; kc += KC) {
        for (int p = 0; p < GM; p++)
            for (int k = 0; k < KC; k++)
                Ap[p][k] = VLOAD(0, A + (long)(kc + k) * M + m0 + MR * p);
        for (int q = 0; q < GN; q++)
            for (int c = 0; c < NR; c++) {
                const __global float* col = B + (long)(n0 + NR * q + c) * K + kc;
#if BCOLS
                for (int k = 0; k < KC; k += MR) VSTORE(VLOAD(0, col + k), 0, &Bp[q][c][k]);
#else
                for (int k = 0; k < KC; k++) Bp[q][k][c] = col[k];
#endif
            }
        // a column of pieces at a time, so that its NR columns of B stay in the nearest cache
        for (int q = 0; q < GN; q++)
            for (int p = 0; p < GM; p++) {
                VEC acc[NR];
                __global float* out = C + (long)(n0 + NR * q) * M + m0 + MR * p;
                _Pragma("unroll") for (int c = 0; c < NR; c++)
                    acc[c] = kc ? VLOAD(0, out + (long)c * M) : (VEC)(0.0f);
                for (int k = 0; k < KC; k++) {
                    const VEC a = Ap[p][k];
                    _Pragma("unroll") for (int c = 0; c < NR; c++)
                        acc[c] = fma(a, (VEC)(B_AT(q, c, k)), acc[c]);
                }
                _Pragma("unroll") for (int c = 0; c < NR; c++)
                    VSTORE(acc[c], 0, out + (long)c * M);
            }
    }
}
