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

// Qualifiers for read-only inputs; the CUDA path or a vendor rung may redefine them.
#ifndef RESTRICT
  #define RESTRICT
#endif
