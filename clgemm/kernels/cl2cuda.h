// cl2cuda.h: lets the OpenCL C kernels of this ladder compile unchanged as CUDA C++ (NVRTC).
//
// The CUDA backend places this file before common.h and the rung's .cl file. It maps the OpenCL
// qualifiers, work-item functions, barriers and attributes onto CUDA's, and gives OpenCL's vector
// types (float2 .. float16) their OpenCL behaviour: .s0-.sF and .x-.w components, element-wise
// arithmetic with vectors and scalars, and the (floatN)(x) broadcast.
//
// One thing no header can do is left to the backend (translate() in clgemm/backends/cuda.py):
// C++ reads the vector literal (float4)(a, b, c, d) as a cast of the comma expression, that is of
// d alone, so the backend rewrites it to the constructor call float4(a, b, c, d) before compiling.
// The broadcast (float4)(x) is a valid C++ cast and needs nothing.
//
// Hints the rungs leave open are filled in for CUDA: RESTRICT is __restrict__, LOAD_GLOBAL reads
// through the read-only data cache (__ldg), and SHUFFLE / SG_LANE / SG_SIZE use the 32-lane warp
// as the sub-group.
//
// Everything defined here is an OpenCL name, one of those hint macros, or starts with cl2cuda_
// (CL2CUDA_), so nothing collides with a kernel's own names.

// CUDA's own 2- and 4-float vectors, named before float2/float4 are taken over below; __ldg has
// overloads for them.
typedef float2 cl2cuda_native_float2;
typedef float4 cl2cuda_native_float4;

#define CL2CUDA_FN __device__ __forceinline__
#define CL2CUDA_HD __host__ __device__ __forceinline__
#define CL2CUDA_UNROLL _Pragma("unroll")

// ---- scalar type names ------------------------------------------------------------------------
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;

// ---- address-space qualifiers and function qualifiers -----------------------------------------
// Global and private memory need no qualifier in CUDA; OpenCL's local memory is CUDA's shared
// memory. __constant is only ever a pointer-parameter qualifier in these kernels, where the
// OpenCL meaning (read-only data) is plain const.
#define __kernel extern "C" __global__
#define __global
#define __local __shared__
#define __constant const
#define __private
#define restrict __restrict__
#define RESTRICT __restrict__
// A cast cannot name __shared__; shared memory is in the generic address space anyway.
#define LOCAL_VEC(type, p) (*(type*)(p))
#define SHARED_ADDRESS(p) ((unsigned)__cvta_generic_to_shared(p))

// ---- attributes -------------------------------------------------------------------------------
// reqd_work_group_size(X, Y, Z) becomes CUDA's launch bounds of X*Y*Z threads: the compiler may
// then use registers up to what that block size allows, as an OpenCL compiler may with the
// required size. (__launch_bounds__(n) is spelled __attribute__((launch_bounds(n))) underneath,
// which is how it can stand inside the kernel's own __attribute__((...)).) Define
// CL2CUDA_NO_LAUNCH_BOUNDS to drop the hint, or CL2CUDA_MIN_BLOCKS=B to ask for registers few
// enough that B blocks of that size fit one multiprocessor (a compiler's register cap
// otherwise gives way to the launch bounds).
#ifdef CL2CUDA_NO_LAUNCH_BOUNDS
  #define reqd_work_group_size(x, y, z) __unused__
#elif defined(CL2CUDA_MIN_BLOCKS)
  #define reqd_work_group_size(x, y, z) launch_bounds((x) * (y) * (z), CL2CUDA_MIN_BLOCKS)
#else
  #define reqd_work_group_size(x, y, z) launch_bounds((x) * (y) * (z))
#endif
#define work_group_size_hint(x, y, z) __unused__
#define vec_type_hint(t) __unused__

// ---- work-item functions ----------------------------------------------------------------------
// OpenCL returns size_t, and so do these, so mixed signed/unsigned arithmetic behaves the same.
CL2CUDA_FN size_t cl2cuda_dim(const uint3& v, uint d) {
  return d == 0 ? v.x : (d == 1 ? v.y : (d == 2 ? v.z : 1));
}
CL2CUDA_FN size_t cl2cuda_dim(const dim3& v, uint d) {
  return d == 0 ? v.x : (d == 1 ? v.y : (d == 2 ? v.z : 1));
}
CL2CUDA_FN size_t get_local_id(uint d) { return d < 3 ? cl2cuda_dim(threadIdx, d) : 0; }
CL2CUDA_FN size_t get_group_id(uint d) { return d < 3 ? cl2cuda_dim(blockIdx, d) : 0; }
CL2CUDA_FN size_t get_local_size(uint d) { return cl2cuda_dim(blockDim, d); }
CL2CUDA_FN size_t get_num_groups(uint d) { return cl2cuda_dim(gridDim, d); }
CL2CUDA_FN size_t get_global_size(uint d) {
  return cl2cuda_dim(gridDim, d) * cl2cuda_dim(blockDim, d);
}
CL2CUDA_FN size_t get_global_id(uint d) {
  return d < 3 ? cl2cuda_dim(blockIdx, d) * cl2cuda_dim(blockDim, d) + cl2cuda_dim(threadIdx, d)
               : 0;
}
CL2CUDA_FN size_t get_global_offset(uint) { return 0; }
CL2CUDA_FN uint get_work_dim() { return 3; }
CL2CUDA_FN size_t get_local_linear_id() {
  return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
}

// ---- synchronisation --------------------------------------------------------------------------
// __syncthreads orders both shared and global memory within the block, which covers every fence.
#define CLK_LOCAL_MEM_FENCE 1
#define CLK_GLOBAL_MEM_FENCE 2
CL2CUDA_FN void barrier(uint) { __syncthreads(); }
CL2CUDA_FN void work_group_barrier(uint) { __syncthreads(); }
CL2CUDA_FN void mem_fence(uint) { __threadfence_block(); }
CL2CUDA_FN void read_mem_fence(uint) { __threadfence_block(); }
CL2CUDA_FN void write_mem_fence(uint) { __threadfence_block(); }

// ---- vector types -----------------------------------------------------------------------------
// Each is a union of an array (used by the operators) and the OpenCL component names. Alignment is
// the OpenCL one (the vector's size), so a load of a float4 from global memory is one 16-byte
// load. The default constructor is trivial, which __shared__ arrays of vectors require.
// Not provided: swizzles and the halves .lo/.hi/.even/.odd (a vector with constructors cannot be
// a member of the anonymous structs that g++ accepts; no kernel uses them, and
// tests/test_cl2cuda_text.py fails if one starts to).
struct __align__(8) cl2cuda_float2 {
  union {
    float v_[2];
    struct { float x, y; };
    struct { float s0, s1; };
  };
  cl2cuda_float2() = default;
  CL2CUDA_HD cl2cuda_float2(float a) { v_[0] = a; v_[1] = a; }
  CL2CUDA_HD cl2cuda_float2(float a, float b) { v_[0] = a; v_[1] = b; }
};

struct __align__(16) cl2cuda_float4 {
  union {
    float v_[4];
    struct { float x, y, z, w; };
    struct { float s0, s1, s2, s3; };
  };
  cl2cuda_float4() = default;
  CL2CUDA_HD cl2cuda_float4(float a) {
    CL2CUDA_UNROLL for (int i = 0; i < 4; i++) v_[i] = a;
  }
  CL2CUDA_HD cl2cuda_float4(float a, float b, float c, float d) {
    v_[0] = a; v_[1] = b; v_[2] = c; v_[3] = d;
  }
  CL2CUDA_HD cl2cuda_float4(cl2cuda_float2 a, cl2cuda_float2 b) {
    v_[0] = a.v_[0]; v_[1] = a.v_[1]; v_[2] = b.v_[0]; v_[3] = b.v_[1];
  }
  CL2CUDA_HD cl2cuda_float4(cl2cuda_float2 a, float c, float d) {
    v_[0] = a.v_[0]; v_[1] = a.v_[1]; v_[2] = c; v_[3] = d;
  }
  CL2CUDA_HD cl2cuda_float4(float a, float b, cl2cuda_float2 c) {
    v_[0] = a; v_[1] = b; v_[2] = c.v_[0]; v_[3] = c.v_[1];
  }
  CL2CUDA_HD cl2cuda_float4(float a, cl2cuda_float2 b, float d) {
    v_[0] = a; v_[1] = b.v_[0]; v_[2] = b.v_[1]; v_[3] = d;
  }
};

struct __align__(32) cl2cuda_float8 {
  union {
    float v_[8];
    struct { float s0, s1, s2, s3, s4, s5, s6, s7; };
    struct { float x, y, z, w; };
  };
  cl2cuda_float8() = default;
  CL2CUDA_HD cl2cuda_float8(float a) {
    CL2CUDA_UNROLL for (int i = 0; i < 8; i++) v_[i] = a;
  }
  CL2CUDA_HD cl2cuda_float8(float a0, float a1, float a2, float a3,
                            float a4, float a5, float a6, float a7) {
    v_[0] = a0; v_[1] = a1; v_[2] = a2; v_[3] = a3; v_[4] = a4; v_[5] = a5; v_[6] = a6; v_[7] = a7;
  }
  CL2CUDA_HD cl2cuda_float8(cl2cuda_float4 a, cl2cuda_float4 b) {
    CL2CUDA_UNROLL for (int i = 0; i < 4; i++) { v_[i] = a.v_[i]; v_[i + 4] = b.v_[i]; }
  }
};

struct __align__(64) cl2cuda_float16 {
  union {
    float v_[16];
    struct { float s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, sa, sb, sc, sd, se, sf; };
    struct { float S0_, S1_, S2_, S3_, S4_, S5_, S6_, S7_, S8_, S9_, sA, sB, sC, sD, sE, sF; };
    struct { float x, y, z, w; };
  };
  cl2cuda_float16() = default;
  CL2CUDA_HD cl2cuda_float16(float a) {
    CL2CUDA_UNROLL for (int i = 0; i < 16; i++) v_[i] = a;
  }
  CL2CUDA_HD cl2cuda_float16(float a0, float a1, float a2, float a3, float a4, float a5,
                             float a6, float a7, float a8, float a9, float a10, float a11,
                             float a12, float a13, float a14, float a15) {
    v_[0] = a0; v_[1] = a1; v_[2] = a2; v_[3] = a3; v_[4] = a4; v_[5] = a5; v_[6] = a6;
    v_[7] = a7; v_[8] = a8; v_[9] = a9; v_[10] = a10; v_[11] = a11; v_[12] = a12; v_[13] = a13;
    v_[14] = a14; v_[15] = a15;
  }
  CL2CUDA_HD cl2cuda_float16(cl2cuda_float8 a, cl2cuda_float8 b) {
    CL2CUDA_UNROLL for (int i = 0; i < 8; i++) { v_[i] = a.v_[i]; v_[i + 8] = b.v_[i]; }
  }
};

// Element-wise arithmetic, as OpenCL defines it: vector op vector, vector op scalar, scalar op
// vector, the compound assignments, and unary minus and plus.
#define CL2CUDA_VECTOR_OP(V, N, OP)                                                            \
  CL2CUDA_HD V& operator OP##=(V& a, const V& b) {                                             \
    CL2CUDA_UNROLL for (int i = 0; i < N; i++) a.v_[i] OP##= b.v_[i];                          \
    return a;                                                                                  \
  }                                                                                            \
  CL2CUDA_HD V& operator OP##=(V& a, float b) {                                                \
    CL2CUDA_UNROLL for (int i = 0; i < N; i++) a.v_[i] OP##= b;                                \
    return a;                                                                                  \
  }                                                                                            \
  CL2CUDA_HD V operator OP(V a, const V& b) { return a OP##= b; }                              \
  CL2CUDA_HD V operator OP(V a, float b) { return a OP##= b; }                                 \
  CL2CUDA_HD V operator OP(float a, const V& b) { V r(a); return r OP##= b; }

#define CL2CUDA_VECTOR_OPS(V, N)                                                               \
  CL2CUDA_VECTOR_OP(V, N, +)                                                                   \
  CL2CUDA_VECTOR_OP(V, N, -)                                                                   \
  CL2CUDA_VECTOR_OP(V, N, *)                                                                   \
  CL2CUDA_VECTOR_OP(V, N, /)                                                                   \
  CL2CUDA_HD V operator-(V a) {                                                                \
    CL2CUDA_UNROLL for (int i = 0; i < N; i++) a.v_[i] = -a.v_[i];                             \
    return a;                                                                                  \
  }                                                                                            \
  CL2CUDA_HD V operator+(V a) { return a; }                                                    \
  CL2CUDA_FN V mad(V a, const V& b, const V& c) {                                              \
    CL2CUDA_UNROLL for (int i = 0; i < N; i++) a.v_[i] = fmaf(a.v_[i], b.v_[i], c.v_[i]);      \
    return a;                                                                                  \
  }                                                                                            \
  CL2CUDA_FN V fma(V a, const V& b, const V& c) { return mad(a, b, c); }

CL2CUDA_VECTOR_OPS(cl2cuda_float2, 2)
CL2CUDA_VECTOR_OPS(cl2cuda_float4, 4)
CL2CUDA_VECTOR_OPS(cl2cuda_float8, 8)
CL2CUDA_VECTOR_OPS(cl2cuda_float16, 16)

// OpenCL's mad may be computed as a fused multiply-add; the GPU does exactly that.
CL2CUDA_FN float mad(float a, float b, float c) { return fmaf(a, b, c); }

// vloadN / vstoreN: N floats at p + N*i, with no alignment beyond a float's.
#define CL2CUDA_VLOAD_VSTORE(V, N)                                                             \
  CL2CUDA_FN V vload##N(size_t i, const float* p) {                                            \
    V r;                                                                                       \
    CL2CUDA_UNROLL for (int j = 0; j < N; j++) r.v_[j] = p[N * i + j];                         \
    return r;                                                                                  \
  }                                                                                            \
  CL2CUDA_FN void vstore##N(const V& v, size_t i, float* p) {                                  \
    CL2CUDA_UNROLL for (int j = 0; j < N; j++) p[N * i + j] = v.v_[j];                         \
  }
CL2CUDA_VLOAD_VSTORE(cl2cuda_float2, 2)
CL2CUDA_VLOAD_VSTORE(cl2cuda_float4, 4)
CL2CUDA_VLOAD_VSTORE(cl2cuda_float8, 8)
CL2CUDA_VLOAD_VSTORE(cl2cuda_float16, 16)

// ---- read-only loads (LOAD_GLOBAL) ------------------------------------------------------------
// __ldg reads through the read-only data cache. CUDA has it for float, float2 and float4; the
// wider vectors are read as 16-byte pieces.
CL2CUDA_FN float cl2cuda_ldg(const float* p) { return __ldg(p); }
CL2CUDA_FN int cl2cuda_ldg(const int* p) { return __ldg(p); }
CL2CUDA_FN cl2cuda_float2 cl2cuda_ldg(const cl2cuda_float2* p) {
  const cl2cuda_native_float2 t = __ldg(reinterpret_cast<const cl2cuda_native_float2*>(p));
  return cl2cuda_float2(t.x, t.y);
}
CL2CUDA_FN cl2cuda_float4 cl2cuda_ldg(const cl2cuda_float4* p) {
  const cl2cuda_native_float4 t = __ldg(reinterpret_cast<const cl2cuda_native_float4*>(p));
  return cl2cuda_float4(t.x, t.y, t.z, t.w);
}
CL2CUDA_FN cl2cuda_float8 cl2cuda_ldg(const cl2cuda_float8* p) {
  const cl2cuda_float4* q = reinterpret_cast<const cl2cuda_float4*>(p);
  return cl2cuda_float8(cl2cuda_ldg(q), cl2cuda_ldg(q + 1));
}
CL2CUDA_FN cl2cuda_float16 cl2cuda_ldg(const cl2cuda_float16* p) {
  const cl2cuda_float8* q = reinterpret_cast<const cl2cuda_float8*>(p);
  return cl2cuda_float16(cl2cuda_ldg(q), cl2cuda_ldg(q + 1));
}
#define LOAD_GLOBAL(ptr, i) cl2cuda_ldg((ptr) + (i))

// ---- sub-groups: the warp ---------------------------------------------------------------------
// A sub-group is a warp of 32 lanes cut from the linear thread id, as the rungs assume. Every
// lane of the warp must reach a shuffle (the full mask), which the rungs guarantee.
#define CL2CUDA_FULL_MASK 0xffffffffu
CL2CUDA_FN uint get_sub_group_size() { return warpSize; }
CL2CUDA_FN uint get_max_sub_group_size() { return warpSize; }
CL2CUDA_FN uint get_sub_group_local_id() { return (uint)get_local_linear_id() % warpSize; }
CL2CUDA_FN uint get_sub_group_id() { return (uint)get_local_linear_id() / warpSize; }
CL2CUDA_FN void sub_group_barrier(uint) { __syncwarp(); }
CL2CUDA_FN float cl2cuda_shuffle(float v, int lane) {
  return __shfl_sync(CL2CUDA_FULL_MASK, v, lane);
}
CL2CUDA_FN int cl2cuda_shuffle(int v, int lane) { return __shfl_sync(CL2CUDA_FULL_MASK, v, lane); }
CL2CUDA_FN uint cl2cuda_shuffle(uint v, int lane) {
  return __shfl_sync(CL2CUDA_FULL_MASK, v, lane);
}
#define CL2CUDA_VECTOR_SHUFFLE(V, N)                                                           \
  CL2CUDA_FN V cl2cuda_shuffle(V v, int lane) {                                                \
    CL2CUDA_UNROLL for (int i = 0; i < N; i++)                                                 \
      v.v_[i] = __shfl_sync(CL2CUDA_FULL_MASK, v.v_[i], lane);                                 \
    return v;                                                                                  \
  }
CL2CUDA_VECTOR_SHUFFLE(cl2cuda_float2, 2)
CL2CUDA_VECTOR_SHUFFLE(cl2cuda_float4, 4)
CL2CUDA_VECTOR_SHUFFLE(cl2cuda_float8, 8)
CL2CUDA_VECTOR_SHUFFLE(cl2cuda_float16, 16)
#define sub_group_shuffle(v, lane) cl2cuda_shuffle((v), (int)(lane))
#define sub_group_broadcast(v, lane) cl2cuda_shuffle((v), (int)(lane))
#define intel_sub_group_shuffle(v, lane) cl2cuda_shuffle((v), (int)(lane))
#define SHUFFLE(v, lane) cl2cuda_shuffle((v), (int)(lane))
#define SG_LANE() ((int)get_sub_group_local_id())
#define SG_SIZE() ((int)get_sub_group_size())

// ---- the OpenCL vector type names -------------------------------------------------------------
// Last, so that everything above (and CUDA's own headers, already read) sees CUDA's types.
#define float2 cl2cuda_float2
#define float4 cl2cuda_float4
#define float8 cl2cuda_float8
#define float16 cl2cuda_float16
