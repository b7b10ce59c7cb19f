// Rung 4: wider data types. Each work-item holds WIDTH consecutive rows of one column of C in a
// vector, and tiles move between global and local memory as WIDTH-wide vectors: fewer, wider
// memory instructions. A is read as vectors along M, B as vectors along K.
//   TS: tile side;  WIDTH: vector width (1, 2, 4 or 8);  TSW (derived) = TS / WIDTH

// ---- parameters (-D NAME=VALUE; these defaults make the file build on its own) ---------
#ifndef TS
  #define TS 32     // tile side
#endif
#ifndef WIDTH
  #define WIDTH 4   // vector width
#endif
// ---- derived from the parameters, as clgemm/rungs derives them for the launch ------
#ifndef TSW
  #define TSW (TS / WIDTH)   // work-group rows: vectors per tile column
#endif

// acc += a-column-vectors of tile row k .. k+WIDTH-1, each scaled by one component of b.
#if WIDTH == 1
  #define MAC_VECTOR(acc, kv, b) acc += Atile[(kv)][lm] * (b);
#elif WIDTH == 2
  #define MAC_VECTOR(acc, kv, b) \
    acc += Atile[2*(kv)][lm] * (b).s0 + Atile[2*(kv)+1][lm] * (b).s1;
#elif WIDTH == 4
  #define MAC_VECTOR(acc, kv, b) \
    acc += Atile[4*(kv)][lm] * (b).s0 + Atile[4*(kv)+1][lm] * (b).s1 \
         + Atile[4*(kv)+2][lm] * (b).s2 + Atile[4*(kv)+3][lm] * (b).s3;
#elif WIDTH == 8
  #define MAC_VECTOR(acc, kv, b) \
    acc += Atile[8*(kv)][lm] * (b).s0 + Atile[8*(kv)+1][lm] * (b).s1 \
         + Atile[8*(kv)+2][lm] * (b).s2 + Atile[8*(kv)+3][lm] * (b).s3 \
         + Atile[8*(kv)+4][lm] * (b).s4 + Atile[8*(kv)+5][lm] * (b).s5 \
         + Atile[8*(kv)+6][lm] * (b).s6 + Atile[8*(kv)+7][lm] * (b).s7;
#endif

__kernel __attribute__((reqd_work_group_size(TSW, TS, 1)))
void gemm_wide_types(const int M, const int N, const int K,
                     const __global floatX* A, const __global floatX* B, __global floatX* C) {
    const int lm = get_local_id(0);              // vector row inside the tile, 0 .. TSW-1
    const int ln = get_local_id(1);              // column inside the tile, 0 .. TS-1
    const int mv = TSW * get_group_id(0) + lm;   // vector row of C
    const int n = TS * get_group_id(1) + ln;     // column of C

    __local floatX Atile[TS][TSW];   // [k][m / WIDTH]
    __local floatX Btile[TS][TSW];   // [n][k / WIDTH]

    floatX acc = (floatX)(0.0f);
    const int tiles = K / TS;
    for (int t = 0; t < tiles; t++) {
        Atile[ln][lm] = A[(TS * t + ln) * (M / WIDTH) + mv];
        Btile[ln][lm] = B[n * (K / WIDTH) + TSW * t + lm];
        barrier(CLK_LOCAL_MEM_FENCE);

        for (int kv = 0; kv < TSW; kv++) {
            const floatX b = Btile[ln][kv];
            MAC_VECTOR(acc, kv, b)
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[n * (M / WIDTH) + mv] = acc;
}
