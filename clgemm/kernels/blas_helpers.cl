// Kernels around the rungs for the BLAS-style entry points (clgemm.gemm, clgemm.gemm_buffers).
// The rungs read tightly packed, column-major operands with no offset (A as M x K, B as K x N or
// BT as N x K) and write a tightly packed M x N result. A caller's matrices may instead have a
// leading dimension larger than the number of rows, start at an offset, be transposed, or have
// sizes that are not multiples of a rung's tiles. The pack kernels bridge the inputs, the
// epilogue bridges the output and applies alpha and beta.
//
// Indices into the caller's buffers are computed in 64-bit arithmetic: each of offset, ld, row
// and column fits an int, but offset + column * ld need not.
//   PACK_TILE: side of the square work-group of the pack kernels and the epilogue

#ifndef PACK_TILE
  #define PACK_TILE 16
#endif
#ifndef BATCHED
  #define BATCHED 0   // pack_transpose: 1: a stack of matrices along dimension 2 (a stride more)
#endif
#ifndef PANEL
  #define PANEL 128   // pack_panels_of: rows per panel (the tile side of the kernel it serves)
#endif

// pack_copy: out (out_rows x out_cols, column-major, leading dimension out_rows) gets
// X[offset + i + j * ld] for i < rows, j < cols, and zero in the rows and columns beyond, which a
// rung then multiplies as padding that adds nothing. Neighbouring work-items along dimension 0
// read neighbouring addresses, so the copy is coalesced.
__kernel void pack_copy(const int rows, const int cols, const int out_rows, const int out_cols,
                        const __global float* X, const int offset, const int ld,
                        __global float* out) {
    const int i = get_global_id(0);
    const int j = get_global_id(1);
    if (i >= out_rows || j >= out_cols) {
        return;
    }
    float v = 0.0f;
    if (i < rows && j < cols) {
        v = X[(long)offset + i + (long)j * ld];
    }
    out[i + (long)j * out_rows] = v;
}

// pack_transpose: as pack_copy, but of the stored matrix transposed: out[i, j] gets
// X[offset + j + i * ld]. A naive version would read with a stride of ld between neighbouring
// work-items; instead one PACK_TILE x PACK_TILE block goes through local memory, read along the
// stored matrix's columns and written along out's columns (the +1 avoids bank conflicts).
// Every work-item stores one value (zero outside the matrix) before the barrier, so the block
// holds no uninitialised values when it is read back.
// With BATCHED, matrix z of a stack (stride floats apart) goes to out's z-th out_rows x out_cols.
__kernel __attribute__((reqd_work_group_size(PACK_TILE, PACK_TILE, 1)))
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
    const int ri = i0 + ly, rj = j0 + lx;
    block[ly][lx] = (ri < rows && rj < cols) ? X[(long)offset + rj + (long)ri * ld] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);

    // Write: lx runs along out's rows.
    const int wi = i0 + lx, wj = j0 + ly;
    if (wi < out_rows && wj < out_cols) {
        out[wi + (long)wj * out_rows] = block[lx][ly];
    }
}

// pack_panels_of: op(X) (rows x cols; X stored at offset with leading dimension ld, read
// transposed where `transposed`), zero-padded to out_rows x out_cols, written straight into the
// panels a CPU form of the tiled kernel reads (see pack_panels in helpers.cl: row i, column j
// goes to ((i / PANEL) * out_cols + j) * PANEL + i % PANEL). One pass does what a pack and a
// packing into panels did in two, so the operand crosses memory once instead of twice.
// Dimension 0 runs along the direction X is stored in (down a column of X), so neighbouring
// work-items read neighbouring addresses whichever way X is read.
//   PANEL: rows per panel; out_rows is a multiple of it
__kernel void pack_panels_of(const int rows, const int cols, const int out_rows,
                             const int out_cols, const __global float* X, const int offset,
                             const int ld, const int transposed, __global float* out) {
    const int s = get_global_id(0), t = get_global_id(1);
    const int i = transposed ? t : s, j = transposed ? s : t;  // row and column of op(X)
    if (i >= out_rows || j >= out_cols) {
        return;
    }
    float v = 0.0f;
    if (i < rows && j < cols) {
        v = X[(long)offset + s + (long)t * ld];
    }
    out[((long)(i / PANEL) * out_cols + j) * PANEL + i % PANEL] = v;
}

// epilogue: C[c_offset + i + j * ldc] = alpha * P[i + j * ldp] + beta * C[...] for i < M, j < N.
// With read_c == 0 (beta == 0) C is never read, so whatever it held (NaN included) cannot leak
// into the result, as BLAS promises. With use_p == 0 (alpha == 0 or K == 0) there is no product
// and P is never read.
__kernel void epilogue(const int M, const int N,
                       const float alpha, const __global float* P, const int ldp, const int use_p,
                       const float beta, __global float* C, const int c_offset, const int ldc,
                       const int read_c) {
    const int i = get_global_id(0);
    const int j = get_global_id(1);
    if (i >= M || j >= N) {
        return;
    }
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

// reduce_splits: C = alpha * (P_0 + ... + P_{splits-1}) + beta * C, for a product whose K was split
// into slices multiplied at once (one launch of the batched direct kernel, product p of the stack
// the slice p): the partial products lie one after another in P, each M x N with leading
// dimension M. The slices are summed in order, so the result does not depend on the schedule.
// With read_c == 0 (beta == 0) C is never read.
__kernel void reduce_splits(const int M, const int N, const int splits, const float alpha,
                            const __global float* P, const float beta, __global float* C,
                            const int c_offset, const int ldc, const int read_c) {
    const int i = get_global_id(0);
    const int j = get_global_id(1);
    if (i >= M || j >= N) {
        return;
    }
    const long mn = (long)M * N;
    const long pi = i + (long)j * M;
    float sum = 0.0f;
    for (int p = 0; p < splits; p++) {
        sum += P[pi + p * mn];
    }
    const long ci = (long)c_offset + i + (long)j * ldc;
    C[ci] = read_c ? alpha * sum + beta * C[ci] : alpha * sum;
}
