// Kernels around the rungs for the BLAS-style entry points (clgemm.gemm, clgemm.gemm_buffers).
// The rungs read tightly packed, column-major operands with no offset (A as M x K, B as K x N or
// BT as N x K) and write a tightly packed M x N result. A caller's matrices may instead have a
// leading dimension larger than the number of rows, start at an offset, be transposed, or have
// sizes that are not multiples of a rung's tiles. The pack kernels bridge the inputs, the
// epilogue bridges the output and applies alpha and beta.
//
// Indices into the caller's buffers are computed in 64-bit arithmetic: each of offset, ld, row
// and column fits an int, but offset + column * ld need not.
//   PACK_TILE: side of the square block of elements one work-group of these kernels covers
//              (the block pack_transpose moves through local memory)
//   PACK_ROWS: rows of work-items in that work-group (a divisor of PACK_TILE; by default
//              PACK_TILE, one element each): PACK_TILE x PACK_ROWS work-items, each moving
//              PACK_TILE / PACK_ROWS elements PACK_ROWS columns apart. On a GPU a 32 x 32 block by
//              32 x 8 work-items keeps more loads in flight than one element a work-item, and the
//              copies run nearer the memory's bandwidth.

#ifndef PACK_TILE
  #define PACK_TILE 16
#endif
#ifndef PACK_ROWS
  #define PACK_ROWS PACK_TILE
#endif
#ifndef BATCHED
  #define BATCHED 0   // pack_transpose: 1: a stack of matrices along dimension 2 (a stride more)
#endif

// The columns j of the work-group's block this work-item moves, each with its row i:
// the block's columns are PACK_TILE * group 1 onwards, this work-item's PACK_ROWS apart.
#define FOR_MY_COLUMNS(j)                                                                \
    for (int j = PACK_TILE * (int)get_group_id(1) + (int)get_local_id(1),                 \
             j##_end = PACK_TILE * ((int)get_group_id(1) + 1);                            \
         j < j##_end; j += PACK_ROWS)

// pack_copy: out (out_rows x out_cols, column-major, leading dimension out_rows) gets
// X[offset + i + j * ld] for i < rows, j < cols, and zero in the rows and columns beyond, which a
// rung then multiplies as padding that adds nothing. Neighbouring work-items along dimension 0
// read neighbouring addresses, so the copy is coalesced.
__kernel __attribute__((reqd_work_group_size(PACK_TILE, PACK_ROWS, 1)))
void pack_copy(const int rows, const int cols, const int out_rows, const int out_cols,
               const __global float* X, const int offset, const int ld, __global float* out) {
    const int i = get_global_id(0);
    if (i >= out_rows) {
        return;
    }
    FOR_MY_COLUMNS(j) {
        if (j < out_cols) {
            float v = 0.0f;
            if (i < rows && j < cols) {
                v = X[(long)offset + i + (long)j * ld];
            }
            out[i + (long)j * out_rows] = v;
        }
    }
}

// pack_transpose: as pack_copy, but of the stored matrix transposed: out[i, j] gets
// X[offset + j + i * ld]. A naive version would read with a stride of ld between neighbouring
// work-items; instead one PACK_TILE x PACK_TILE block goes through local memory, read along the
// stored matrix's columns and written along out's columns (the +1 avoids bank conflicts).
// A work-group is PACK_TILE x PACK_ROWS work-items, each moving PACK_TILE / PACK_ROWS values of
// the block.
// Every value of the block is stored (zero outside the matrix) before the barrier, so the block
// holds no uninitialised values when it is read back.
// With BATCHED, matrix z of a stack (stride floats apart) goes to out's z-th out_rows x out_cols.
__kernel __attribute__((reqd_work_group_size(PACK_TILE, PACK_ROWS, 1)))
void pack_transpose(const int rows, const int cols, const int out_rows, const int out_cols,
                    const __global float* X, const int offset, const int ld,
                    __global float* out
#if BATCHED
                    , const int stride
#endif
                    ) {
#if BATCHED
    const long z = get_group_id(2);
    X += z * stride;
    out += z * out_rows * out_cols;
#endif
    __local float block[PACK_TILE][PACK_TILE + 1];
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int i0 = PACK_TILE * get_group_id(0);    // first row of out in this block
    const int j0 = PACK_TILE * get_group_id(1);    // first column of out in this block

    // Read: lx runs along the stored matrix's rows, which are out's columns.
    const int rj = j0 + lx;
    for (int r = ly; r < PACK_TILE; r += PACK_ROWS) {
        const int ri = i0 + r;
        block[r][lx] = (ri < rows && rj < cols) ? X[(long)offset + rj + (long)ri * ld] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    // Write: lx runs along out's rows.
    const int wi = i0 + lx;
    for (int r = ly; r < PACK_TILE; r += PACK_ROWS) {
        const int wj = j0 + r;
        if (wi < out_rows && wj < out_cols) {
            out[wi + (long)wj * out_rows] = block[lx][r];
        }
    }
}

// pack_panels_pair: op(A) and op(B) (op(X): X stored at an offset with a leading dimension,
// read transposed where `trans`), each zero-padded to a multiple of its panel height and
// written into the panels a CPU form of the tiled kernel reads (row i, column j of a matrix of
// out_cols columns goes to ((i / PANEL) * out_cols + j) * PANEL + i % PANEL, as pack_panels in
// helpers.cl lays them out). Both operands go in one launch: on a CPU runtime each launch costs
// the wake-up of every worker thread, which on a small product is more than the copy itself.
// A work-item copies one block, PANEL_RUN columns of one panel, with plain loops the compiler
// can vectorise: straight runs of PANEL floats where X is read as stored; where it is read
// transposed, squares of PACK_SUB x PACK_SUB, so that each column's PACK_SUB stores fill a
// cache line of the panel while the PACK_SUB rows of X they read stay in the cache (taken row
// by row down the whole block, each store would go to a line of its own). The blocks of A come
// first, then those of B; only blocks at the edges test the bounds.
//   PANEL_A, PANEL_B: rows per panel of each operand (the kernel's TSM and TSN)
//   PANEL_RUN: columns per block
//   PACK_SUB: the side of the squares of a transposed block
//   PACK_COLUMNS: 1 packs an operand read as stored down its columns (`PACK_COLUMNS_BLOCK`)
#ifndef PANEL_A
  #define PANEL_A 128
#endif
#ifndef PANEL_B
  #define PANEL_B 128
#endif
#ifndef PANEL_RUN
  #define PANEL_RUN 64
#endif
#ifndef PACK_SUB
  #define PACK_SUB 16
#endif
#ifndef PACK_COLUMNS
  #define PACK_COLUMNS 0
#endif

// One block of op(X)'s panels of PANEL rows (X at its offset already): block b is panel
// b / runs, columns from (b % runs) * PANEL_RUN.
#define PACK_PANEL_BLOCK(PANEL, rows, cols, out_cols, X, trans, ld, out, b)                    \
    {                                                                                         \
        const int runs = ((out_cols) + PANEL_RUN - 1) / PANEL_RUN;                            \
        const int i0 = ((b) / runs) * (PANEL), j0 = ((b) % runs) * PANEL_RUN;                 \
        const int j1 = min(j0 + PANEL_RUN, (out_cols));                                       \
        __global float* dst = (out) + (long)((b) / runs) * (out_cols) * (PANEL);              \
        if (i0 + (PANEL) <= (rows) && j1 <= (cols)) {                                         \
            if (trans) {                                                                      \
                for (int rb = 0; rb < (PANEL); rb += PACK_SUB)                                \
                    for (int jb = j0; jb < j1; jb += PACK_SUB)                                \
                        for (int j = jb; j < min(jb + PACK_SUB, j1); j++)                     \
                            for (int r = rb; r < min(rb + PACK_SUB, (PANEL)); r++)            \
                                dst[(long)j * (PANEL) + r] = (X)[j + (long)(i0 + r) * (ld)];  \
            } else {                                                                          \
                for (int j = j0; j < j1; j++)                                                 \
                    for (int r = 0; r < (PANEL); r++)                                         \
                        dst[(long)j * (PANEL) + r] = (X)[i0 + r + (long)j * (ld)];            \
            }                                                                                 \
        } else {                                                                              \
            for (int j = j0; j < j1; j++)                                                     \
                for (int r = 0; r < (PANEL); r++) {                                           \
                    const int i = i0 + r;                                                     \
                    float v = 0.0f;                                                           \
                    if (i < (rows) && j < (cols))                                             \
                        v = (trans) ? (X)[j + (long)i * (ld)] : (X)[i + (long)j * (ld)];      \
                    dst[(long)j * (PANEL) + r] = v;                                           \
                }                                                                             \
        }                                                                                     \
    }

// The same panels of an operand read as stored, down its columns: the launch's `blocks` blocks
// share the pieces of PANEL floats (piece q: panel q % panels of column q / panels) in runs of
// equal length, so a work-item reads one stretch of a column or more as one run of floats and
// stores PANEL floats into each panel it meets. A panel's block reads PANEL floats from each of
// PANEL_RUN columns a leading dimension apart, which a CPU's prefetchers do not follow once the
// operand is out of the cache, as it is when a call comes after a long kernel
// (results/pocl/pack-columns). Since the panels number blocks / runs, a block takes at most
// PANEL_RUN pieces, as a panel's block takes PANEL_RUN columns.
#define PACK_COLUMNS_BLOCK(PANEL, rows, cols, out_cols, X, ld, out, blocks, b)                 \
    {                                                                                         \
        const int panels = (blocks) / (((out_cols) + PANEL_RUN - 1) / PANEL_RUN);            \
        const long pieces = (long)(out_cols) * panels;                                        \
        const long per = (pieces + (blocks) - 1) / (blocks);                                  \
        const long q0 = (b) * per, q1 = min(q0 + per, pieces);                                \
        int j = q0 / panels, p = q0 % panels;                                                 \
        for (long q = q0; q < q1; q++) {                                                      \
            __global float* dst = (out) + ((long)p * (out_cols) + j) * (PANEL);               \
            const int i0 = p * (PANEL);                                                       \
            if (j < (cols) && i0 + (PANEL) <= (rows)) {                                       \
                for (int r = 0; r < (PANEL); r++)                                             \
                    dst[r] = (X)[i0 + r + (long)j * (ld)];                                    \
            } else {                                                                          \
                for (int r = 0; r < (PANEL); r++)                                             \
                    dst[r] = (i0 + r < (rows) && j < (cols))                                  \
                                 ? (X)[i0 + r + (long)j * (ld)] : 0.0f;                       \
            }                                                                                 \
            if (++p == panels) {                                                              \
                p = 0;                                                                        \
                j++;                                                                          \
            }                                                                                 \
        }                                                                                     \
    }

// One block of an operand's panels, down its columns where PACK_COLUMNS and X is read as stored.
#define PACK_ANY_BLOCK(PANEL, rows, cols, out_cols, X, trans, ld, out, blocks, b)              \
    if (PACK_COLUMNS && !(trans)) {                                                           \
        PACK_COLUMNS_BLOCK(PANEL, rows, cols, out_cols, X, ld, out, blocks, b)                \
    } else {                                                                                  \
        PACK_PANEL_BLOCK(PANEL, rows, cols, out_cols, X, trans, ld, out, b)                   \
    }

__kernel void pack_panels_pair(const int rows_a, const int cols_a, const int out_cols_a,
                               const __global float* A, const int offset_a, const int ld_a,
                               const int trans_a, __global float* out_a, const int blocks_a,
                               const int rows_b, const int cols_b, const int out_cols_b,
                               const __global float* B, const int offset_b, const int ld_b,
                               const int trans_b, __global float* out_b, const int blocks_b) {
    const int g = get_global_id(0);
    if (g < blocks_a) {
        const __global float* X = A + offset_a;
        PACK_ANY_BLOCK(PANEL_A, rows_a, cols_a, out_cols_a, X, trans_a, ld_a, out_a, blocks_a, g)
    } else if (g - blocks_a < blocks_b) {
        const __global float* X = B + offset_b;
        const int b = g - blocks_a;
        PACK_ANY_BLOCK(PANEL_B, rows_b, cols_b, out_cols_b, X, trans_b, ld_b, out_b, blocks_b, b)
    }
}

// epilogue: C[c_offset + i + j * ldc] = alpha * P[i + j * ldp] + beta * C[...] for i < M, j < N.
// With read_c == 0 (beta == 0) C is never read, so whatever it held (NaN included) cannot leak
// into the result, as BLAS promises. With use_p == 0 (alpha == 0 or K == 0) there is no product
// and P is never read.
__kernel __attribute__((reqd_work_group_size(PACK_TILE, PACK_ROWS, 1)))
void epilogue(const int M, const int N,
              const float alpha, const __global float* P, const int ldp, const int use_p,
              const float beta, __global float* C, const int c_offset, const int ldc,
              const int read_c) {
    const int i = get_global_id(0);
    if (i >= M) {
        return;
    }
    FOR_MY_COLUMNS(j) {
        if (j < N) {
            const long ci = (long)c_offset + i + (long)j * ldc;
            float v;
            if (use_p && read_c) {
                v = alpha * P[i + (long)j * ldp] + beta * C[ci];
            } else if (use_p) {
                v = alpha * P[i + (long)j * ldp];
            } else if (read_c) {
                v = beta * C[ci];
            } else {
                v = 0.0f;
            }
            C[ci] = v;
        }
    }
}

// reduce_splits: C = alpha * (P_0 + ... + P_{splits-1}) + beta * C, for a product whose K was split
// into slices multiplied at once (one launch of a batched kernel, product p of the stack the slice
// p): partial product p lies slice_p floats past P_0, with leading dimension ldp; both exceed the
// M x N that is summed where the product was padded to the kernel's tiles. The slices are summed
// in order, so the result does not depend on the schedule. With read_c == 0 (beta == 0) C is
// never read.
__kernel __attribute__((reqd_work_group_size(PACK_TILE, PACK_ROWS, 1)))
void reduce_splits(const int M, const int N, const int splits, const float alpha,
                   const __global float* P, const int ldp, const int slice_p, const float beta,
                   __global float* C, const int c_offset, const int ldc, const int read_c) {
    const int i = get_global_id(0);
    if (i >= M) {
        return;
    }
    FOR_MY_COLUMNS(j) {
        if (j < N) {
            const long pi = i + (long)j * ldp;
            float sum = 0.0f;
            for (int p = 0; p < splits; p++) {
                sum += P[pi + (long)p * slice_p];
            }
            const long ci = (long)c_offset + i + (long)j * ldc;
            C[ci] = read_c ? alpha * sum + beta * C[ci] : alpha * sum;
        }
    }
}
