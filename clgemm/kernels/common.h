// Shared definitions for every kernel. The runner prepends this file to each kernel source,
// after any backend header (cl2cuda.h on the CUDA path), and passes the kernel's parameters as -D
// options. Each kernel file gives its parameters defaults and derives its other macros itself,
// after this file, so what here depends on a parameter (WIDTH, VWM, VWN) is a macro, expanded
// where a kernel uses it, rather than a typedef fixed before the parameters are known.
// Matrices are column-major: A is M x K, B is K x N, C is M x N.

// CAT(a, b) pastes its arguments after expanding them: CAT(VLOAD_, VWM) is VLOAD_4 when VWM is 4.
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

// FLOATS(w): the type of w floats, for w = 1, 2, 4, 8 or 16 (FLOATS(1) is a plain float).
#define FLOATS_1 float
#define FLOATS_2 float2
#define FLOATS_4 float4
#define FLOATS_8 float8
#define FLOATS_16 float16
#define FLOATS(w) CAT(FLOATS_, w)

// floatX: the vector of WIDTH floats, for the rungs that load or compute several values at once.
#define floatX FLOATS(WIDTH)

// Read-only inputs (used from rung 8 on): RESTRICT promises that nothing else writes what the
// pointer reaches, LOAD_GLOBAL reads through it. A backend header may spell them its own way
// (cl2cuda.h: __restrict__ and __ldg); otherwise they are C99 restrict and a plain read.
#ifndef RESTRICT
  #define RESTRICT restrict
#endif
#ifndef LOAD_GLOBAL
  #define LOAD_GLOBAL(ptr, i) ((ptr)[i])
#endif

// SPREAD(v, SLOT): write the WIDTH components of vector v to the lvalues SLOT(0) .. SLOT(WIDTH-1)
// (the kernels from rung 7 on store vector loads into scalar local tiles this way).
#define SPREAD_1(v, SLOT) SLOT(0) = (v);
#define SPREAD_2(v, SLOT) SLOT(0) = (v).s0; SLOT(1) = (v).s1;
#define SPREAD_4(v, SLOT) SLOT(0) = (v).s0; SLOT(1) = (v).s1; SLOT(2) = (v).s2; SLOT(3) = (v).s3;
#define SPREAD_8(v, SLOT) SLOT(0) = (v).s0; SLOT(1) = (v).s1; SLOT(2) = (v).s2; SLOT(3) = (v).s3; \
                          SLOT(4) = (v).s4; SLOT(5) = (v).s5; SLOT(6) = (v).s6; SLOT(7) = (v).s7;
#define SPREAD(v, SLOT) CAT(SPREAD_, WIDTH)(v, SLOT)

// Register vectors of the tiled kernels: floatM holds VWM consecutive rows (values of A,
// accumulators), floatN VWN consecutive columns (values of B). VLOAD*/VSTORE* move one such vector
// from or to consecutive floats at any address; width 1 is a plain float, for which OpenCL has no
// vload1.
#define floatM FLOATS(VWM)
#define floatN FLOATS(VWN)
#define VLOAD_1(p) (*(p))
#define VLOAD_2(p) vload2(0, p)
#define VLOAD_4(p) vload4(0, p)
#define VLOAD_8(p) vload8(0, p)
#define VLOAD_16(p) vload16(0, p)
#define VSTORE_1(v, p) (*(p) = (v))
#define VSTORE_2(v, p) vstore2(v, 0, p)
#define VSTORE_4(v, p) vstore4(v, 0, p)
#define VSTORE_8(v, p) vstore8(v, 0, p)
#define VSTORE_16(v, p) vstore16(v, 0, p)
#define VLOADM(p) CAT(VLOAD_, VWM)(p)
#define VSTOREM(v, p) CAT(VSTORE_, VWM)(v, p)
#define VLOADN(p) CAT(VLOAD_, VWN)(p)
#define VSTOREN(v, p) CAT(VSTORE_, VWN)(v, p)
// VLOADX(p): the floatX at p, any float-aligned address (rung 10 fills one from single floats).
#define VLOADX(p) CAT(VLOAD_, WIDTH)(p)

// SHARED_ADDRESS(p): local pointer p as the 32-bit address of PTX's .shared state space, for the
// inline cp.async of the tiled kernel's PIPELINE. NVIDIA's OpenCL keeps local pointers in that
// form already; CUDA's are generic, and cl2cuda.h converts them.
#ifndef SHARED_ADDRESS
  #define SHARED_ADDRESS(p) ((uint)(size_t)(p))
#endif

// cp.async, through inline PTX (NVIDIA, compute capability 8.0 and newer; used by the tiled
// kernels' PIPELINE): CP_ASYNC(to, from, bytes) copies the WIDTH floats at global `from` to local
// `to` with no register between, filling with zeros past `bytes` (0: all zeros, nothing read);
// CP_ASYNC_W1 one float. Copies are committed in groups, and CP_WAIT_AHEAD() waits until at most
// PIPELINE - 2 of this work-item's groups are in flight. 16 bytes go through L2 only (.cg),
// fewer through L1 (.ca). PTX wants sizes and counts as literals, hence one macro per value.
#define CP_ASYNC_PTX(op, size, to, from, bytes) \
    asm volatile("cp.async." op ".shared.global [%0], [%1], " size ", %2;" \
                 :: "r"(SHARED_ADDRESS(to)), "l"(from), "r"(bytes) : "memory")
#define CP_ASYNC_W1(to, from, bytes) CP_ASYNC_PTX("ca", "4", to, from, bytes)
#define CP_ASYNC_W2(to, from, bytes) CP_ASYNC_PTX("ca", "8", to, from, bytes)
#define CP_ASYNC_W4(to, from, bytes) CP_ASYNC_PTX("cg", "16", to, from, bytes)
#define CP_ASYNC(to, from, bytes) CAT(CP_ASYNC_W, WIDTH)(to, from, bytes)
#define CP_COMMIT() asm volatile("cp.async.commit_group;" ::: "memory")
#define CP_WAIT_AHEAD_2() asm volatile("cp.async.wait_group 0;" ::: "memory")
#define CP_WAIT_AHEAD_3() asm volatile("cp.async.wait_group 1;" ::: "memory")
#define CP_WAIT_AHEAD_4() asm volatile("cp.async.wait_group 2;" ::: "memory")
#define CP_WAIT_AHEAD() CAT(CP_WAIT_AHEAD_, PIPELINE)()
// The pipeline's two moves, for a kernel that defines ASYNC_A(buf, k0) and ASYNC_B(buf, k0):
// PIPELINE_START puts the first PIPELINE - 1 tiles in flight, one commit group each (empty past
// the last tile, so that every step counts groups alike). PIPELINE_STEP(t), before tile t is
// read: this work-item's copies of it have landed, the barrier makes everyone's visible and
// says that every work-item is done with buffer (t - 1) % PIPELINE, which the tile PIPELINE - 1
// ahead then refills.
#define PIPELINE_START(tiles)                                                        \
    for (int s = 0; s < PIPELINE - 1; s++) {                                         \
        if (s < (tiles)) {                                                           \
            ASYNC_A(s, TSK * s)                                                      \
            ASYNC_B(s, TSK * s)                                                      \
        }                                                                            \
        CP_COMMIT();                                                                 \
    }
#define PIPELINE_STEP(t, tiles)                                                      \
    CP_WAIT_AHEAD();                                                                 \
    barrier(CLK_LOCAL_MEM_FENCE);                                                    \
    if ((t) + PIPELINE - 1 < (tiles)) {                                              \
        const int ahead = ((t) + PIPELINE - 1) % PIPELINE;                           \
        ASYNC_A(ahead, TSK * ((t) + PIPELINE - 1))                                   \
        ASYNC_B(ahead, TSK * ((t) + PIPELINE - 1))                                   \
    }                                                                                \
    CP_COMMIT();

// BANDED_TILE(offm, offn): declares offm and offn, the first row and column of the TSM x TSN
// tile of C this work-group computes when the tiled kernels take their tiles in bands (RASTER
// > 0): group g of the launch (x fastest) takes tile row `first + g % rows` of its band of
// RASTER tile rows and the band's tile column `g / rows`, so the groups that run at once share
// rows of A and columns of B in the cache; the last band may have fewer rows.
#define BANDED_TILE(offm, offn)                                                      \
    const int groups_m = (int)get_num_groups(0);                                     \
    const int per_band = RASTER * (int)get_num_groups(1);                            \
    const int g = (int)get_group_id(1) * groups_m + (int)get_group_id(0);            \
    const int first = (g / per_band) * RASTER;                                       \
    const int rows = min(groups_m - first, RASTER);                                  \
    const int offm = TSM * (first + (g % per_band) % rows);                          \
    const int offn = TSN * ((g % per_band) / rows);

// LOCAL_VEC(type, p): the vector of `type` stored at local address p, read or written as one
// access. p must be aligned to the vector's size; vloadN promises only a float's alignment, so a
// compiler may split it into scalar accesses, which is what the vector widths are meant to avoid.
#ifndef LOCAL_VEC
  #define LOCAL_VEC(type, p) (*(__local type*)(p))
#endif
