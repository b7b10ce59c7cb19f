// Direct GEMM: the whole BLAS SGEMM in one kernel, with no helper kernels before or after it.
//
//   C := alpha * op(A) * op(B) + beta * C
//
// All matrices are column-major and are read where the caller keeps them: each starts at an
// element offset and has its own leading dimension. op(A) is M x K and op(B) is K x N:
//   op(A)(i, k) = A[a_offset + i + k * lda]   (TRANS_A = 0: A is stored M x K)
//               = A[a_offset + k + i * lda]   (TRANS_A = 1: A is stored K x M)
//   op(B)(k, j) = B[b_offset + k + j * ldb]   (TRANS_B = 0: B is stored K x N)
//               = B[b_offset + j + k * ldb]   (TRANS_B = 1: B is stored N x K)
//   C(i, j)     = C[c_offset + i + j * ldc]
// Any M, N >= 1 and K >= 0 (K = 0 gives C := beta * C).
//
// Geometry as in rung 6: a work-group computes a TSM x TSN tile of C with RTSM x RTSN work-items,
// each holding a WPTM x WPTN block of sums in registers, strided by RTSM rows and RTSN columns so
// that neighbouring work-items touch neighbouring addresses. Per step of TSK along k, the group
// copies a TSK x TSM tile of op(A) and a TSK x TSN tile of op(B) into local memory, both laid out
// [k][m] / [k][n]. Each copy is zero-filled beyond M, N and K, so the last, partial step along K
// and the tiles at the right and bottom edges need no other care; only the stores are guarded.
//
// The copies read global memory along the stored matrix's contiguous dimension, whatever the
// transposition: consecutive work-items take consecutive rows of the stored matrix. For A that
// is along m without transposition and along k with it; for B along k without and along n with
// it. Where that is along k, consecutive work-items write a column of the local tile, PAD floats
// further apart than the tile is wide, so an odd row length spreads them over the banks.
//
// beta is tested at run time: with beta == 0, C is only written, never read, so whatever it held
// (NaN included) cannot reach the result.
//
// BATCHED = 1 makes one launch multiply a stack of matrices, as BLAS's strided-batched GEMM: the
// launch's third dimension counts the products, and product p reads A, B and C from a_stride,
// b_stride and c_stride floats times p further on (a stride of 0 repeats one matrix for every
// product). The arguments then end in those three strides.

// ---- parameters (set with -D; the defaults make the file build on its own) ---------------------
#ifndef TRANS_A
  #define TRANS_A 0    // 1: op(A) is A transposed (A stored K x M)
#endif
#ifndef TRANS_B
  #define TRANS_B 0    // 1: op(B) is B transposed (B stored N x K)
#endif
#ifndef TSM
  #define TSM 64       // rows of C per work-group (along M)
#endif
#ifndef TSN
  #define TSN 64       // columns of C per work-group (along N)
#endif
#ifndef TSK
  #define TSK 16       // depth of the local tiles (step along K)
#endif
#ifndef WPTM
  #define WPTM 4       // rows of C per work-item
#endif
#ifndef WPTN
  #define WPTN 4       // columns of C per work-item
#endif
#ifndef PAD
  #define PAD 1        // floats of padding per row of each local tile
#endif
#ifndef BATCHED
  #define BATCHED 0    // 1: a stack of products, one per work-group along the third dimension
#endif

// ---- consistency of the parameters -----------------------------------------------------------
#if TRANS_A != 0 && TRANS_A != 1
  #error "TRANS_A must be 0 or 1"
#endif
#if BATCHED != 0 && BATCHED != 1
  #error "BATCHED must be 0 or 1"
#endif
#if TRANS_B != 0 && TRANS_B != 1
  #error "TRANS_B must be 0 or 1"
#endif
#if TSM < 1 || TSN < 1 || TSK < 1 || WPTM < 1 || WPTN < 1 || PAD < 0
  #error "TSM, TSN, TSK, WPTM and WPTN must be positive and PAD must not be negative"
#endif
#if TSM % WPTM != 0
  #error "TSM must be a multiple of WPTM"
#endif
#if TSN % WPTN != 0
  #error "TSN must be a multiple of WPTN"
#endif

// ---- derived (as clgemm/rungs derives them for the launch) -------------------------------------
#ifndef RTSM
  #define RTSM (TSM / WPTM)               // work-items per group along M
#endif
#ifndef RTSN
  #define RTSN (TSN / WPTN)               // work-items per group along N
#endif
#ifndef THREADS
  #define THREADS (RTSM * RTSN)           // work-items per group
#endif
#if (TSK * TSM) % THREADS != 0
  #error "TSK*TSM must be a multiple of the number of work-items, TSM/WPTM * TSN/WPTN"
#endif
#if (TSK * TSN) % THREADS != 0
  #error "TSK*TSN must be a multiple of the number of work-items, TSM/WPTM * TSN/WPTN"
#endif
#ifndef LPTA
  #define LPTA (TSK * TSM / THREADS)      // elements of the op(A) tile each work-item copies
#endif
#ifndef LPTB
  #define LPTB (TSK * TSN / THREADS)      // elements of the op(B) tile each work-item copies
#endif

// Offsets of op(A)(i, k) and op(B)(k, j) from the start of their matrices, in 64-bit arithmetic:
// each index fits an int, the product with a leading dimension need not.
#if TRANS_A
  #define A_INDEX(i, k) ((long)(i) * lda + (k))
#else
  #define A_INDEX(i, k) ((long)(k) * lda + (i))
#endif
#if TRANS_B
  #define B_INDEX(k, j) ((long)(k) * ldb + (j))
#else
  #define B_INDEX(k, j) ((long)(j) * ldb + (k))
#endif

__kernel __attribute__((reqd_work_group_size(RTSM, RTSN, 1)))
void gemm_direct(const int M, const int N, const int K, const float alpha, const float beta,
                 const __global float* A, const int a_offset, const int lda,
                 const __global float* B, const int b_offset, const int ldb,
                 __global float* C, const int c_offset, const int ldc
#if BATCHED
                 , const int a_stride, const int b_stride, const int c_stride
#endif
                 ) {
    const int tidm = get_local_id(0);             // 0 .. RTSM-1
    const int tidn = get_local_id(1);             // 0 .. RTSN-1
    const int tid = tidn * RTSM + tidm;           // linear id, tidm fastest
    const int m0 = TSM * get_group_id(0);         // first row of this group's tile of C
    const int n0 = TSN * get_group_id(1);         // first column
#if BATCHED
    const long p = get_group_id(2);               // which product of the stack
    const __global float* Ap = A + a_offset + p * a_stride;
    const __global float* Bp = B + b_offset + p * b_stride;
    __global float* Cp = C + c_offset + p * c_stride;
#else
    const __global float* Ap = A + a_offset;
    const __global float* Bp = B + b_offset;
    __global float* Cp = C + c_offset;
#endif

    __local float Alm[TSK][TSM + PAD];            // op(A) tile, [k][m]
    __local float Blm[TSK][TSN + PAD];            // op(B) tile, [k][n]

    float Areg[WPTM];
    float Breg[WPTN];
    float acc[WPTM][WPTN];
    for (int wm = 0; wm < WPTM; wm++)
        for (int wn = 0; wn < WPTN; wn++) acc[wm][wn] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += TSK) {
        // Copy the tiles, zeros outside the matrices. Consecutive work-items take consecutive
        // elements of the stored matrix's columns.
        for (int l = 0; l < LPTA; l++) {
            const int e = tid + l * THREADS;
#if TRANS_A
            const int ek = e % TSK, em = e / TSK;      // A's columns run along k
#else
            const int em = e % TSM, ek = e / TSM;      // A's columns run along m
#endif
            const int i = m0 + em, k = k0 + ek;
            Alm[ek][em] = (i < M && k < K) ? Ap[A_INDEX(i, k)] : 0.0f;
        }
        for (int l = 0; l < LPTB; l++) {
            const int e = tid + l * THREADS;
#if TRANS_B
            const int en = e % TSN, ek = e / TSN;      // B's columns run along n
#else
            const int ek = e % TSK, en = e / TSK;      // B's columns run along k
#endif
            const int j = n0 + en, k = k0 + ek;
            Blm[ek][en] = (j < N && k < K) ? Bp[B_INDEX(k, j)] : 0.0f;
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        for (int k = 0; k < TSK; k++) {
            for (int wm = 0; wm < WPTM; wm++) Areg[wm] = Alm[k][tidm + wm * RTSM];
            for (int wn = 0; wn < WPTN; wn++) Breg[wn] = Blm[k][tidn + wn * RTSN];
            for (int wm = 0; wm < WPTM; wm++)
                for (int wn = 0; wn < WPTN; wn++) acc[wm][wn] += Areg[wm] * Breg[wn];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    // Guarded stores; neighbouring work-items write neighbouring rows of a column of C.
    if (beta == 0.0f) {
        for (int wn = 0; wn < WPTN; wn++) {
            const int j = n0 + tidn + wn * RTSN;
            for (int wm = 0; wm < WPTM; wm++) {
                const int i = m0 + tidm + wm * RTSM;
                if (i < M && j < N) Cp[(long)j * ldc + i] = alpha * acc[wm][wn];
            }
        }
    } else {
        for (int wn = 0; wn < WPTN; wn++) {
            const int j = n0 + tidn + wn * RTSN;
            for (int wm = 0; wm < WPTM; wm++) {
                const int i = m0 + tidm + wm * RTSM;
                if (i < M && j < N) {
                    const long ci = (long)j * ldc + i;
                    Cp[ci] = alpha * acc[wm][wn] + beta * Cp[ci];
                }
            }
        }
    }
}
