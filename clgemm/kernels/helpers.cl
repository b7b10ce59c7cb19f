// Helper kernels that prepare inputs for the rungs. They handle any size (bounds-checked).

// ---- parameters (-D NAME=VALUE; these defaults make the file build on its own) ---------
#ifndef TRX
  #define TRX 16      // transpose: block side along P (the rows of `in`)
#endif
#ifndef TRY
  #define TRY 16      // transpose: block side along Q (the columns of `in`)
#endif
#ifndef PANEL
  #define PANEL 128   // pack_panels: rows per panel (the tile side of the kernel it serves)
#endif

// transpose: out (Q x P, column-major) = in (P x Q, column-major)^T.
// A work-group of TRX x TRY work-items moves one TRX x TRY block through local memory so that
// both the reads and the writes are coalesced; the +1 column avoids bank conflicts.
//   TRX, TRY: block sides (the helper's own tile macros)
__kernel __attribute__((reqd_work_group_size(TRX, TRY, 1)))
void transpose(const int P, const int Q,
               const __global float* in, __global float* out) {
    const int lx = get_local_id(0), ly = get_local_id(1);
    __local float block[TRY][TRX + 1];

    // Read: x runs along P (rows of in), y along Q.
    const int p = TRX * get_group_id(0) + lx;
    const int q = TRY * get_group_id(1) + ly;
    if (p < P && q < Q) {
        block[ly][lx] = in[q * P + p];
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    // Write: reassign the work-items so that x runs along Q (rows of out).
    const int lid = ly * TRX + lx;
    const int bq = lid % TRY, bp = lid / TRY;
    const int oq = TRY * get_group_id(1) + bq;
    const int op = TRX * get_group_id(0) + bp;
    if (oq < Q && op < P) {
        out[op * Q + oq] = block[bq][bp];
    }
}

// pack_panels: the rows of a column-major R x K matrix in blocks of PANEL rows, each block stored
// contiguously over k: row r, column k goes to ((r / PANEL) * K + k) * PANEL + r % PANEL. A rung
// that reads a block of rows at every k then walks one contiguous stream instead of touching a
// new column (and often a new page) at each step. R is a multiple of PANEL.
//   PANEL: rows per block (the helper's own macro, set from the kernel's tile)
__kernel void pack_panels(const int R, const int K, const __global float* in, __global float* out) {
    const int r = get_global_id(0), k = get_global_id(1);
    if (r < R && k < K) {
        out[((r / PANEL) * K + k) * PANEL + r % PANEL] = in[k * R + r];
    }
}
