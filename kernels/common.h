// Shared definitions for every rung. The runner prepends this file to each kernel source,
// after any backend header (cl2cuda.h on the CUDA path), and passes the macros as -D options.
// Matrices are column-major: A is M x K, B is K x N, C is M x N.

// Vector type of WIDTH floats, for the rungs that load or compute several values at once.
#ifdef WIDTH
  #if WIDTH == 1
    typedef float floatX;
  #elif WIDTH == 2
    typedef float2 floatX;
  #elif WIDTH == 4
    typedef float4 floatX;
  #elif WIDTH == 8
    typedef float8 floatX;
  #elif WIDTH == 16
    typedef float16 floatX;
  #else
    #error "WIDTH must be 1, 2, 4, 8 or 16"
  #endif
#endif

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
// (rungs 7-10 store vector loads into scalar local tiles this way).
#ifdef WIDTH
  #if WIDTH == 1
    #define SPREAD(v, SLOT) SLOT(0) = (v);
  #elif WIDTH == 2
    #define SPREAD(v, SLOT) SLOT(0) = (v).s0; SLOT(1) = (v).s1;
  #elif WIDTH == 4
    #define SPREAD(v, SLOT) SLOT(0) = (v).s0; SLOT(1) = (v).s1; SLOT(2) = (v).s2; SLOT(3) = (v).s3;
  #elif WIDTH == 8
    #define SPREAD(v, SLOT) SLOT(0) = (v).s0; SLOT(1) = (v).s1; SLOT(2) = (v).s2; SLOT(3) = (v).s3; \
                            SLOT(4) = (v).s4; SLOT(5) = (v).s5; SLOT(6) = (v).s6; SLOT(7) = (v).s7;
  #endif
#endif

// CAT(a, b) pastes its arguments after expanding them: CAT(float, VWM) is float4 when VWM is 4.
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

// Register vectors of rungs 9-10: floatM holds VWM consecutive rows (values of A, accumulators),
// floatN VWN consecutive columns (values of B). VLOAD*/VSTORE* move one such vector from or to
// consecutive floats at any address; width 1 is a plain float, for which OpenCL has no vload1.
#ifdef VWM
  #if VWM == 1
    typedef float floatM;
    #define VLOADM(p) (*(p))
    #define VSTOREM(v, p) (*(p) = (v))
  #else
    typedef CAT(float, VWM) floatM;
    #define VLOADM(p) CAT(vload, VWM)(0, p)
    #define VSTOREM(v, p) CAT(vstore, VWM)(v, 0, p)
  #endif
#endif
#ifdef VWN
  #if VWN == 1
    typedef float floatN;
    #define VLOADN(p) (*(p))
    #define VSTOREN(v, p) (*(p) = (v))
  #else
    typedef CAT(float, VWN) floatN;
    #define VLOADN(p) CAT(vload, VWN)(0, p)
    #define VSTOREN(v, p) CAT(vstore, VWN)(v, 0, p)
  #endif
#endif

// LOCAL_VEC(type, p): the vector of `type` stored at local address p, read or written as one
// access. p must be aligned to the vector's size; vloadN promises only a float's alignment, so a
// compiler may split it into scalar accesses, which is what the vector widths are meant to avoid.
#ifndef LOCAL_VEC
  #define LOCAL_VEC(type, p) (*(__local type*)(p))
#endif
