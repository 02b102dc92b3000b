#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Numbers as the trace records them: Bool, Int64, Float32, Float64. */
static inline double irt_f64(uint64_t bits) { double d; memcpy(&d, &bits, 8); return d; }
static inline float irt_f32(uint32_t bits) { float f; memcpy(&f, &bits, 4); return f; }

/* Julia's promotion: Bool < Int64 < Float32 < Float64. */
#define IRT_K(x) _Generic((x), bool: 0, int64_t: 1, float: 2, double: 3)
#define IRT_I(x) _Generic((x), bool: (int64_t)(x), int64_t: (int64_t)(x), default: (int64_t)0)
#define IRT_D(x) ((double)(x))

/* Int64 arithmetic wraps around. */
static inline int64_t irt_wrap(uint64_t u) { return (int64_t)u; }
static inline int64_t irt_addi(int64_t a, int64_t b) { return irt_wrap((uint64_t)a + (uint64_t)b); }
static inline int64_t irt_subi(int64_t a, int64_t b) { return irt_wrap((uint64_t)a - (uint64_t)b); }
static inline int64_t irt_muli(int64_t a, int64_t b) { return irt_wrap((uint64_t)a * (uint64_t)b); }
static inline int64_t irt_negi(int64_t a) { return irt_wrap(0 - (uint64_t)a); }
static inline int64_t irt_absi(int64_t a) { return a < 0 ? irt_negi(a) : a; }
static inline int64_t irt_signi(int64_t a) { return a > 0 ? 1 : a < 0 ? -1 : 0; }

static inline void irt_fail(const char* what) {
  fprintf(stderr, "%s\n", what);
  exit(3);
}

/* An integer to an integer power (a negative power only of 1 and -1). */
static inline int64_t irt_ipow(int64_t x, int64_t e) {
  if (e < 0) {
    if (x == 1) return 1;
    if (x == -1) return (e & 1) ? -1 : 1;
    irt_fail("DomainError: an integer to a negative power");
  }
  uint64_t r = 1, b = (uint64_t)x, n = (uint64_t)e;
  while (n != 0) {
    if (n & 1) r *= b;
    b *= b;
    n >>= 1;
  }
  return irt_wrap(r);
}

/* div (truncated), rem (sign of the dividend), fld (floored), mod (sign of
   the divisor) of integers; 0 1 2 3 in that order. */
static inline int64_t irt_idiv(int64_t x, int64_t y, int kind) {
  int quotient = kind == 0 || kind == 2;
  if (y == 0 || (quotient && y == -1 && x == INT64_MIN)) irt_fail("DivideError: integer division error");
  if (y == -1) return quotient ? irt_negi(x) : 0;
  int64_t q = quotient ? x / y : x % y, rem = x % y;
  if (kind >= 2 && rem != 0 && ((rem < 0) != (y < 0))) {
    if (kind == 2) q -= 1; else q += y;
  }
  return q;
}

/* The same of floats, in double (suffix d) and float (suffix f). */
#define IRT_FDIV(T, S)                                                          \
  static inline T irt_fdiv##S(T x, T y, int kind) {                                    \
    if (kind == 1) return fmod##S(x, y);                                        \
    if (kind == 0) {                                                            \
      if (y == 0 || !isfinite(x) || !isfinite(y)) return trunc##S(x / y);       \
      return nearbyint##S((x - fmod##S(x, y)) / y);                             \
    }                                                                           \
    if (kind == 3) {                                                            \
      if (y == 0) return fmod##S(x, y);                                         \
      T r = fmod##S(x, y);                                                      \
      if (r != 0) {                                                             \
        if ((y < 0) != (r < 0)) r += y;                                         \
      } else {                                                                  \
        r = copysign##S((T)0, y);                                               \
      }                                                                         \
      return r;                                                                 \
    }                                                                           \
    if (y == 0 || !isfinite(x) || !isfinite(y)) return floor##S(x / y);         \
    T r = fmod##S(x, y);                                                        \
    T q = (x - r) / y;                                                          \
    if (r != 0 && (y < 0) != (r < 0)) q -= 1;                                   \
    if (q == 0) return copysign##S((T)0, x / y);                                \
    T f = floor##S(q);                                                          \
    if (q - f > (T)0.5) f += 1;                                                 \
    return f;                                                                   \
  }
IRT_FDIV(double, )
IRT_FDIV(float, f)

static inline double irt_fmax(double x, double y) {
  if (isnan(x) || isnan(y)) return isnan(x) ? x : y;
  return (x > y || (x == y && !signbit(x))) ? x : y;
}
static inline double irt_fmin(double x, double y) {
  if (isnan(x) || isnan(y)) return isnan(x) ? x : y;
  return (x < y || (x == y && signbit(x))) ? x : y;
}
static inline double irt_signd(double x) { return (isnan(x) || x == 0) ? x : x > 0 ? 1.0 : -1.0; }
static inline float irt_signf(float x) { return (isnan(x) || x == 0) ? x : x > 0 ? 1.0f : -1.0f; }

/* Exact comparison of two real numbers: -1, 0, 1, or 2 when unordered. */
static inline int irt_cmp_id(int64_t i, double d) {
  if (isnan(d)) return 2;
  if (d >= 9223372036854775808.0) return -1;
  if (d < -9223372036854775808.0) return 1;
  double t = trunc(d);
  int64_t ti = (int64_t)t;
  if (i < ti) return -1;
  if (i > ti) return 1;
  double frac = d - t;
  return frac > 0 ? -1 : frac < 0 ? 1 : 0;
}
static inline int irt_cmp(int ka, int64_t ia, double da, int kb, int64_t ib, double db) {
  if (ka <= 1 && kb <= 1) return ia < ib ? -1 : ia > ib ? 1 : 0;
  if (ka >= 2 && kb >= 2) {
    if (isnan(da) || isnan(db)) return 2;
    return da < db ? -1 : da > db ? 1 : 0;
  }
  if (ka <= 1) return irt_cmp_id(ia, db);
  int c = irt_cmp_id(ib, da);
  return c == 2 ? 2 : -c;
}
#define IRT_CMP(a, b) irt_cmp(IRT_K(a), IRT_I(a), IRT_D(a), IRT_K(b), IRT_I(b), IRT_D(b))

/* Tensors and tuples: one object type, irt_t, for a tensor (element type,
   dimensions, elements in row-major order), a tuple (its items) or a
   number boxed for the tensor operations. Objects are never freed before
   the program ends: each is allocated once, recorded, and freed by an
   atexit handler. Elementwise operations apply the scalar expressions
   above to each element; sums add in the order of libtrace's kernels
   (Eigen, vectorized for SSE2: packets of 2 doubles or 4 floats). */
/* No fused multiply-adds: GCC contracts none under -std=c11, clang none
   with this pragma. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif
enum { IRT_B1, IRT_I8, IRT_F4, IRT_F8, IRT_I4 }; /* element types; 0-3 also the number kinds */
enum { IRT_TENSOR = 4, IRT_TUPLE = 5, IRT_NOTHING = 6 };
typedef struct irt_obj {
  int kind;  /* 0-3: a boxed Bool, Int64, Float32, Float64; IRT_TENSOR; IRT_TUPLE; IRT_NOTHING */
  int dtype;
  int ndim;
  int64_t* shape;
  int64_t n;  /* elements, or items */
  void* data; /* elements, or the items (irt_t) */
  bool b;
  int64_t i;
  float f;
  double d;
} irt_obj;
typedef const irt_obj* irt_t;

static void** irt_blocks;
static size_t irt_nblocks, irt_cap;
static inline void irt_free_all(void) {
  for (size_t k = 0; k < irt_nblocks; ++k) free(irt_blocks[k]);
  free(irt_blocks);
}
static inline void* irt_alloc(size_t size) {
  if (irt_nblocks == irt_cap) {
    if (irt_cap == 0) atexit(irt_free_all);
    irt_cap = irt_cap ? 2 * irt_cap : 64;
    irt_blocks = (void**)realloc(irt_blocks, irt_cap * sizeof(void*));
    if (!irt_blocks) irt_fail("out of memory");
  }
  void* p = calloc(1, size ? size : 1);
  if (!p) irt_fail("out of memory");
  irt_blocks[irt_nblocks++] = p;
  return p;
}

static inline size_t irt_esize(int dt) { return dt == IRT_B1 ? 1 : dt == IRT_F4 || dt == IRT_I4 ? 4 : 8; }
static inline int64_t irt_numel(int ndim, const int64_t* shape) {
  int64_t n = 1;
  for (int d = 0; d < ndim; ++d) n *= shape[d];
  return n;
}
static inline irt_obj* irt_new(int dtype, int ndim, const int64_t* shape) {
  irt_obj* t = (irt_obj*)irt_alloc(sizeof(irt_obj));
  t->kind = IRT_TENSOR;
  t->dtype = dtype;
  t->ndim = ndim;
  t->shape = (int64_t*)irt_alloc(sizeof(int64_t) * (size_t)(ndim ? ndim : 1));
  if (ndim) memcpy(t->shape, shape, sizeof(int64_t) * (size_t)ndim);
  t->n = irt_numel(ndim, shape);
  t->data = irt_alloc(irt_esize(dtype) * (size_t)t->n);
  return t;
}
/* A tensor from its elements (data as the C type of its element type). */
static inline irt_t irt_tensor(int dtype, int ndim, const int64_t* shape, const void* data) {
  irt_obj* t = irt_new(dtype, ndim, shape);
  memcpy(t->data, data, irt_esize(dtype) * (size_t)t->n);
  return t;
}
static inline irt_t irt_tuple(int64_t n, const irt_t* items) {
  irt_obj* t = (irt_obj*)irt_alloc(sizeof(irt_obj));
  t->kind = IRT_TUPLE;
  t->n = n;
  t->data = irt_alloc(sizeof(irt_t) * (size_t)n);
  if (n) memcpy(t->data, items, sizeof(irt_t) * (size_t)n);
  return t;
}
static inline irt_t irt_item(irt_t t, int64_t k) { return ((const irt_t*)t->data)[k]; }

static inline irt_t irt_box_b(bool v) { irt_obj* o = (irt_obj*)irt_alloc(sizeof(irt_obj)); o->kind = 0; o->b = v; o->i = v; o->d = v; return o; }
static inline irt_t irt_box_i(int64_t v) { irt_obj* o = (irt_obj*)irt_alloc(sizeof(irt_obj)); o->kind = 1; o->i = v; o->d = (double)v; return o; }
static inline irt_t irt_box_f(float v) { irt_obj* o = (irt_obj*)irt_alloc(sizeof(irt_obj)); o->kind = 2; o->f = v; o->d = v; return o; }
static inline irt_t irt_box_d(double v) { irt_obj* o = (irt_obj*)irt_alloc(sizeof(irt_obj)); o->kind = 3; o->d = v; return o; }
static inline irt_t irt_box_t(irt_t v) { return v; }
static const irt_obj irt_nothing_obj = {.kind = IRT_NOTHING};
static inline irt_t irt_nothing(void) { return &irt_nothing_obj; }
static inline irt_t irt_box_int(int v) { return irt_box_b(v != 0); } /* true and false */
#define IRT_BOX(x) _Generic((x), bool: irt_box_b, int: irt_box_int, int64_t: irt_box_i, float: irt_box_f, double: irt_box_d, irt_t: irt_box_t, irt_obj*: irt_box_t)(x)
static inline int irt_isnum(irt_t x) { return x->kind < IRT_TENSOR; }
/* A number of the kind the trace recorded. */
static inline bool irt_ub(irt_t x) { if (x->kind != 0) irt_fail("TypeError: not a Bool"); return x->b; }
static inline int64_t irt_ui(irt_t x) { if (x->kind != 1) irt_fail("TypeError: not an Int64"); return x->i; }
static inline float irt_uf(irt_t x) { if (x->kind != 2) irt_fail("TypeError: not a Float32"); return x->f; }
static inline double irt_ud(irt_t x) { if (x->kind != 3) irt_fail("TypeError: not a Float64"); return x->d; }
static inline int64_t irt_index(irt_t x) {
  if (x->kind == 0 || x->kind == 1) return x->i;
  if (x->kind <= 3 && x->d == trunc(x->d)) return (int64_t)x->d;
  irt_fail("TypeError: not an index");
  return 0;
}

/* Element k: its number kind, and its value as an integer and as a double. */
typedef struct { int k; int64_t i; double d; } irt_s;
static inline irt_s irt_el(irt_t t, int64_t k) {
  irt_s s = {0, 0, 0.0};
  if (t->kind != IRT_TENSOR) {
    s.k = t->kind; s.i = t->i; s.d = t->d;
    return s;
  }
  switch (t->dtype) {
    case IRT_B1: s.k = 0; s.i = ((const bool*)t->data)[k]; s.d = (double)s.i; break;
    case IRT_I8: s.k = 1; s.i = ((const int64_t*)t->data)[k]; s.d = (double)s.i; break;
    case IRT_I4: s.k = 1; s.i = ((const int32_t*)t->data)[k]; s.d = (double)s.i; break;
    case IRT_F4: s.k = 2; s.d = ((const float*)t->data)[k]; break;
    default: s.k = 3; s.d = ((const double*)t->data)[k]; break;
  }
  return s;
}
/* Element k as a boxed number (Int32 as Int64). */
static inline irt_t irt_elbox(irt_t t, int64_t k) {
  switch (t->dtype) {
    case IRT_B1: return irt_box_b(((const bool*)t->data)[k]);
    case IRT_I8: return irt_box_i(((const int64_t*)t->data)[k]);
    case IRT_I4: return irt_box_i(((const int32_t*)t->data)[k]);
    case IRT_F4: return irt_box_f(((const float*)t->data)[k]);
    default: return irt_box_d(((const double*)t->data)[k]);
  }
}
/* Stores a number in element k, converted to the element type. */
static inline void irt_store_d(irt_obj* t, int64_t k, double v) {
  switch (t->dtype) {
    case IRT_B1: ((bool*)t->data)[k] = v != 0; break;
    case IRT_I8: ((int64_t*)t->data)[k] = (int64_t)v; break;
    case IRT_I4: ((int32_t*)t->data)[k] = (int32_t)v; break;
    case IRT_F4: ((float*)t->data)[k] = (float)v; break;
    default: ((double*)t->data)[k] = v; break;
  }
}
static inline void irt_store_i(irt_obj* t, int64_t k, int64_t v) {
  switch (t->dtype) {
    case IRT_B1: ((bool*)t->data)[k] = v != 0; break;
    case IRT_I8: ((int64_t*)t->data)[k] = v; break;
    case IRT_I4: ((int32_t*)t->data)[k] = (int32_t)v; break;
    case IRT_F4: ((float*)t->data)[k] = (float)(double)v; break;
    default: ((double*)t->data)[k] = (double)v; break;
  }
}
static inline void irt_store_f(irt_obj* t, int64_t k, float v) { irt_store_d(t, k, v); }
static inline void irt_store_b(irt_obj* t, int64_t k, bool v) { irt_store_i(t, k, v); }
#define IRT_STORE(t, k, v) _Generic((v), bool: irt_store_b, int64_t: irt_store_i, float: irt_store_f, double: irt_store_d)(t, k, v)
static inline void irt_store(irt_obj* t, int64_t k, irt_s v) {
  if (v.k <= 1) irt_store_i(t, k, v.i); else irt_store_d(t, k, v.d);
}

/* The shape operands broadcast to (NumPy's rule), and each operand's
   offset of output element k. */
typedef struct {
  int ndim;
  int64_t shape[32];
} irt_shape;
static inline irt_shape irt_bshape(int na, const irt_t* a) {
  irt_shape s;
  s.ndim = 0;
  for (int j = 0; j < na; ++j) {
    if (a[j]->kind != IRT_TENSOR) continue;
    if (a[j]->ndim > 32) irt_fail("more than 32 dimensions");
    if (a[j]->ndim > s.ndim) {
      int extra = a[j]->ndim - s.ndim;
      memmove(s.shape + extra, s.shape, sizeof(int64_t) * (size_t)s.ndim);
      for (int d = 0; d < extra; ++d) s.shape[d] = 1;
      s.ndim = a[j]->ndim;
    }
    int lead = s.ndim - a[j]->ndim;
    for (int d = 0; d < a[j]->ndim; ++d) {
      int64_t x = a[j]->shape[d], *y = &s.shape[lead + d];
      if (x == *y || x == 1) continue;
      if (*y == 1) *y = x;
      else irt_fail("ValueError: shapes cannot be broadcast together");
    }
  }
  return s;
}
/* The offset in t (broadcast to s) of element k of s. */
static inline int64_t irt_boff(irt_t t, const irt_shape* s, int64_t k) {
  if (t->kind != IRT_TENSOR) return 0;
  int64_t off = 0, stride = 1;
  int lead = s->ndim - t->ndim;
  for (int d = s->ndim - 1; d >= 0; --d) {
    int64_t i = k % s->shape[d];
    k /= s->shape[d];
    if (d >= lead) {
      int64_t n = t->shape[d - lead];
      if (n != 1) off += i * stride;
      stride *= n;
    }
  }
  return off;
}

/* Eigen's vectorized sum of x[0..n) (x from `offset` elements past an
   16-byte boundary): the elements before the first boundary and after the
   last whole packet one by one, the packets in two accumulators. */
#define IRT_SUMS(T, S, P)                                                              \
  static inline T irt_sum##S(const T* x, int64_t n, int64_t offset) {                         \
    if (n == 0) return 0;                                                              \
    int64_t start = (P - offset % P) % P;                                              \
    if (start > n) start = n;                                                          \
    if ((n - start) / P == 0) {                                                        \
      T r = x[0];                                                                      \
      for (int64_t i = 1; i < n; ++i) r = r + x[i];                                    \
      return r;                                                                        \
    }                                                                                  \
    int64_t size = n - start, end2 = start + size / (2 * P) * (2 * P);                 \
    int64_t end = start + size / P * P;                                                \
    T a0[P], a1[P];                                                                    \
    for (int q = 0; q < P; ++q) a0[q] = x[start + q];                                  \
    if (end - start > P) {                                                             \
      for (int q = 0; q < P; ++q) a1[q] = x[start + P + q];                            \
      for (int64_t i = start + 2 * P; i < end2; i += 2 * P) {                          \
        for (int q = 0; q < P; ++q) {                                                  \
          a0[q] = a0[q] + x[i + q];                                                    \
          a1[q] = a1[q] + x[i + P + q];                                                \
        }                                                                              \
      }                                                                                \
      for (int q = 0; q < P; ++q) a0[q] = a0[q] + a1[q];                               \
      if (end > end2)                                                                  \
        for (int q = 0; q < P; ++q) a0[q] = a0[q] + x[end2 + q];                       \
    }                                                                                  \
    T r = P == 2 ? a0[0] + a0[1] : (a0[0] + a0[P > 2 ? 2 : 0]) + (a0[1] + a0[P > 2 ? 3 : 1]); \
    for (int64_t i = 0; i < start; ++i) r = r + x[i];                                  \
    for (int64_t i = end; i < n; ++i) r = r + x[i];                                    \
    return r;                                                                          \
  }                                                                                    \
  /* out[j] = the sum of column j of the rows x cols matrix x, as Eigen's              \
     colwise().sum() into out (`offset` elements past a boundary). */                  \
  static inline void irt_colsum##S(const T* x, int64_t rows, int64_t cols, T* out, int64_t offset) { \
    int64_t start = (P - offset % P) % P;                                              \
    if (start > cols) start = cols;                                                    \
    int64_t end = start + (cols - start) / P * P;                                      \
    for (int64_t j = 0; j < cols; ++j) {                                               \
      if (rows == 0) {                                                                 \
        out[j] = 0;                                                                    \
        continue;                                                                      \
      }                                                                                \
      T r = x[j];                                                                      \
      int64_t i = 1;                                                                   \
      if (start <= j && j < end) {                                                     \
        int64_t size4 = (rows - 1) & ~(int64_t)3;                                      \
        for (; i < size4; i += 4)                                                      \
          r = r + ((x[i * cols + j] + x[(i + 1) * cols + j]) +                         \
                   (x[(i + 2) * cols + j] + x[(i + 3) * cols + j]));                   \
      }                                                                                \
      for (; i < rows; ++i) r = r + x[i * cols + j];                                   \
      out[j] = r;                                                                      \
    }                                                                                  \
  }
IRT_SUMS(double, d, 2)
IRT_SUMS(float, f, 4)

static inline irt_t irt_tensor_of(irt_t x) {
  if (x->kind != IRT_TENSOR) irt_fail("TypeError: not a tensor");
  return x;
}
static inline bool irt_isfloat(int dt) { return dt == IRT_F4 || dt == IRT_F8; }
static inline irt_t irt_copy(irt_t x) { return irt_tensor(x->dtype, x->ndim, x->shape, x->data); }
static inline irt_obj* irt_convert(irt_t x, int dtype) {
  irt_obj* t = irt_new(dtype, x->ndim, x->shape);
  for (int64_t k = 0; k < x->n; ++k) irt_store(t, k, irt_el(x, k));
  return t;
}

/* sum, mean, maximum, minimum (kind 0-3) of a tensor, or along dimension
   a[1] (1-based). */
static inline irt_t irt_reduce(int na, const irt_t* a, int kind) {
  irt_t x = a[0];
  if (x->kind != IRT_TENSOR) {
    if (na > 1) irt_fail("ArgumentError: a scalar has no dimensions");
    return x;
  }
  int d = na > 1 ? (int)irt_index(a[1]) - 1 : -1;
  if (na > 1 && (d < 0 || d >= x->ndim)) irt_fail("ArgumentError: no such dimension");
  int64_t outer = 1, inner = 1, length = d < 0 ? x->n : x->shape[d];
  for (int k = 0; d >= 0 && k < x->ndim; ++k) {
    if (k < d) outer *= x->shape[k];
    if (k > d) inner *= x->shape[k];
  }
  int64_t shape[32];
  for (int k = 0; k < x->ndim && k < 32; ++k) shape[k] = k == d ? 1 : x->shape[k];
  bool extreme = kind >= 2;
  if (extreme && length == 0) irt_fail("ArgumentError: reducing over an empty collection");
  if (!extreme && irt_isfloat(x->dtype)) {
    if (x->dtype == IRT_F8) {
      const double* v = (const double*)x->data;
      if (d < 0) {
        double s = irt_sumd(v, x->n, 0);
        return irt_box_d(kind == 1 ? s / (double)x->n : s);
      }
      irt_obj* out = irt_new(IRT_F8, x->ndim, shape);
      double* o = (double*)out->data;
      for (int64_t b = 0; b < outer; ++b) irt_colsumd(v + b * length * inner, length, inner, o + b * inner, b * inner);
      if (kind == 1) for (int64_t k = 0; k < out->n; ++k) o[k] = o[k] / (double)length;
      return out;
    }
    const float* v = (const float*)x->data;
    if (d < 0) {
      float s = irt_sumf(v, x->n, 0);
      return irt_box_f(kind == 1 ? s / (float)x->n : s);
    }
    irt_obj* out = irt_new(IRT_F4, x->ndim, shape);
    float* o = (float*)out->data;
    for (int64_t b = 0; b < outer; ++b) irt_colsumf(v + b * length * inner, length, inner, o + b * inner, b * inner);
    if (kind == 1) for (int64_t k = 0; k < out->n; ++k) o[k] = o[k] / (float)length;
    return out;
  }
  int out_dt = extreme ? x->dtype : kind == 1 ? IRT_F8 : IRT_I8;
  irt_obj* out = irt_new(out_dt, d < 0 ? 0 : x->ndim, shape);
  if (d < 0) inner = 1;
  for (int64_t b = 0; b < outer; ++b) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = b * length * inner + i;
      irt_s r = irt_el(x, base);
      if (!extreme) {
        int64_t s = 0;
        for (int64_t q = 0; q < length; ++q) s = irt_addi(s, irt_el(x, base + q * inner).i);
        r.k = 1;
        r.i = s;
        if (kind == 1) {
          r.k = 3;
          r.d = (double)s / (double)length;
        }
      } else {
        for (int64_t q = 1; q < length; ++q) {
          irt_s v = irt_el(x, base + q * inner);
          if (r.k == 0) r.i = kind == 2 ? (r.i || v.i) : (r.i && v.i);
          else if (r.k == 1) r.i = kind == 2 ? (v.i > r.i ? v.i : r.i) : (v.i < r.i ? v.i : r.i);
          else if (r.k == 2) r.d = (float)(kind == 2 ? irt_fmax(r.d, v.d) : irt_fmin(r.d, v.d));
          else r.d = kind == 2 ? irt_fmax(r.d, v.d) : irt_fmin(r.d, v.d);
        }
      }
      irt_store(out, b * inner + i, r);
    }
  }
  if (d < 0) return irt_elbox(out, 0);
  return out;
}
static inline irt_t irt_sum(int na, const irt_t* a) { return irt_reduce(na, a, 0); }
static inline irt_t irt_mean(int na, const irt_t* a) { return irt_reduce(na, a, 1); }
static inline irt_t irt_maximum(int na, const irt_t* a) { return irt_reduce(na, a, 2); }
static inline irt_t irt_minimum(int na, const irt_t* a) { return irt_reduce(na, a, 3); }

/* Both operands as tensors of one float type: Float32 when both are. */
static inline int irt_floats(irt_t x, irt_t y) { return x->dtype == IRT_F4 && y->dtype == IRT_F4 ? IRT_F4 : IRT_F8; }

/* A matrix product (a vector is a column): each element the sum over k of
   x[i, k] * y[k, j], added in order of k. */
static inline irt_t irt_matmul(int na, const irt_t* a) {
  (void)na;
  irt_t x0 = irt_tensor_of(a[0]), y0 = irt_tensor_of(a[1]);
  int dt = irt_floats(x0, y0);
  irt_t x = irt_convert(x0, dt), y = irt_convert(y0, dt);
  if (x->ndim > 2 || y->ndim > 2 || x->ndim == 0 || y->ndim == 0) irt_fail("DimensionMismatch: matmul of tensors that are not matrices");
  int64_t m = x->shape[0], k = x->ndim == 2 ? x->shape[1] : 1;
  int64_t k2 = y->shape[0], n = y->ndim == 2 ? y->shape[1] : 1;
  if (k != k2) irt_fail("DimensionMismatch: matmul: inner dimensions differ");
  int64_t shape[2] = {m, n};
  irt_obj* out = irt_new(dt, y->ndim == 2 ? 2 : 1, shape);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      if (k == 0) continue;
      if (dt == IRT_F8) {
        const double *xv = (const double*)x->data, *yv = (const double*)y->data;
        double r = xv[i * k] * yv[j];
        for (int64_t q = 1; q < k; ++q) r = r + xv[i * k + q] * yv[q * n + j];
        ((double*)out->data)[i * n + j] = r;
      } else {
        const float *xv = (const float*)x->data, *yv = (const float*)y->data;
        float r = xv[i * k] * yv[j];
        for (int64_t q = 1; q < k; ++q) r = r + xv[i * k + q] * yv[q * n + j];
        ((float*)out->data)[i * n + j] = r;
      }
    }
  }
  return out;
}

/* The sum of the products, in the order of Eigen's vectorized sum. */
static inline irt_t irt_dot(int na, const irt_t* a) {
  (void)na;
  irt_t x0 = irt_tensor_of(a[0]), y0 = irt_tensor_of(a[1]);
  int dt = irt_floats(x0, y0);
  irt_t x = irt_convert(x0, dt), y = irt_convert(y0, dt);
  if (x->n != y->n) irt_fail("DimensionMismatch: dot of tensors of different lengths");
  irt_obj* p = irt_new(dt, x->ndim, x->shape);
  for (int64_t k = 0; k < x->n; ++k) {
    if (dt == IRT_F8) ((double*)p->data)[k] = ((const double*)x->data)[k] * ((const double*)y->data)[k];
    else ((float*)p->data)[k] = ((const float*)x->data)[k] * ((const float*)y->data)[k];
  }
  if (dt == IRT_F8) return irt_box_d(irt_sumd((const double*)p->data, p->n, 0));
  return irt_box_f(irt_sumf((const float*)p->data, p->n, 0));
}

static inline irt_t irt_transpose(int na, const irt_t* a) {
  (void)na;
  irt_t x = a[0];
  if (x->kind != IRT_TENSOR || x->ndim == 0) return x;
  if (x->ndim == 1) {
    int64_t shape[2] = {1, x->shape[0]};
    return irt_tensor(x->dtype, 2, shape, x->data);
  }
  if (x->ndim != 2) irt_fail("transpose of a tensor of more than 2 dimensions");
  int64_t r = x->shape[0], c = x->shape[1], shape[2] = {c, r};
  irt_obj* out = irt_new(x->dtype, 2, shape);
  size_t es = irt_esize(x->dtype);
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j)
      memcpy((char*)out->data + (size_t)(j * r + i) * es, (const char*)x->data + (size_t)(i * c + j) * es, es);
  return out;
}

/* Dimensions given as numbers, or as one tuple. */
static inline int irt_dims(int na, const irt_t* a, int64_t* dims) {
  if (na == 1 && a[0]->kind == IRT_TUPLE) {
    if (a[0]->n > 32) irt_fail("more than 32 dimensions");
    for (int64_t k = 0; k < a[0]->n; ++k) dims[k] = irt_index(irt_item(a[0], k));
    return (int)a[0]->n;
  }
  if (na > 32) irt_fail("more than 32 dimensions");
  for (int k = 0; k < na; ++k) dims[k] = irt_index(a[k]);
  return na;
}

static inline irt_t irt_reshape(int na, const irt_t* a) {
  irt_t x = a[0];
  int64_t dims[32];
  int nd = irt_dims(na - 1, a + 1, dims);
  if (x->kind != IRT_TENSOR) return x;
  if (irt_numel(nd, dims) != x->n) irt_fail("DimensionMismatch: reshape to another number of elements");
  return irt_tensor(x->dtype, nd, dims, x->data);
}

/* The row-major offset of 1-based indices (one index: linear). */
static inline int64_t irt_offset(irt_t x, int ni, const irt_t* idx) {
  if (ni == 1) return irt_index(idx[0]) - 1;
  int64_t off = 0;
  for (int k = 0; k < ni && k < x->ndim; ++k) off = off * x->shape[k] + irt_index(idx[k]) - 1;
  return off;
}

static inline irt_t irt_getindex(int na, const irt_t* a) {
  irt_t x = a[0];
  if (x->kind == IRT_TUPLE) {
    int64_t k = irt_index(a[1]) - 1;
    if (k < 0 || k >= x->n) irt_fail("BoundsError: getindex: index out of bounds");
    return irt_item(x, k);
  }
  x = irt_tensor_of(x);
  int64_t k = irt_offset(x, na - 1, a + 1);
  if (k < 0 || k >= x->n) irt_fail("BoundsError: getindex: index out of bounds");
  return irt_elbox(x, k);
}

static inline irt_t irt_addindex(int na, const irt_t* a) {
  irt_t x = irt_tensor_of(a[0]);
  irt_obj* t = (irt_obj*)irt_copy(x);
  int64_t k = irt_offset(x, na - 2, a + 2);
  if (k < 0 || k >= x->n) irt_fail("BoundsError: addindex: index out of bounds");
  double v = irt_el(a[1], 0).d;
  if (t->dtype == IRT_F8) ((double*)t->data)[k] = ((double*)t->data)[k] + v;
  else if (t->dtype == IRT_F4) ((float*)t->data)[k] = ((float*)t->data)[k] + (float)v;
  else irt_fail("addindex on a tensor that is not of floats");
  return t;
}

/* x[i, ...] (0-based, negative from the end, nothing for a whole
   dimension): the result's shape in *s, blocks of `inner` contiguous
   elements, one per combination of the dimensions taken whole. */
typedef struct {
  int nf;
  int64_t base, inner, size[32], step[32];
} irt_key_t;
static inline irt_key_t irt_key(irt_t x, int ni, const irt_t* idx, irt_shape* s) {
  if (ni > x->ndim) irt_fail("IndexError: too many indices");
  irt_key_t k;
  k.nf = 0;
  k.base = 0;
  k.inner = 1;
  s->ndim = 0;
  int64_t stride[32], m = 1;
  for (int d = x->ndim - 1; d >= 0; --d) {
    stride[d] = m;
    m *= x->shape[d];
  }
  for (int d = 0; d < x->ndim; ++d) {
    if (d < ni && idx[d]->kind != IRT_NOTHING) {
      int64_t i = irt_index(idx[d]);
      if (i < 0) i += x->shape[d];
      if (i < 0 || i >= x->shape[d]) irt_fail("IndexError: index out of bounds");
      k.base += i * stride[d];
      continue;
    }
    if (d < ni) {
      k.size[k.nf] = x->shape[d];
      k.step[k.nf++] = stride[d];
    } else {
      k.inner *= x->shape[d];
    }
    s->shape[s->ndim++] = x->shape[d];
  }
  return k;
}
/* The offset in x of block b. */
static inline int64_t irt_key_block(const irt_key_t* k, int64_t b) {
  int64_t off = k->base;
  for (int d = k->nf - 1; d >= 0; --d) {
    off += (b % k->size[d]) * k->step[d];
    b /= k->size[d];
  }
  return off;
}
static inline int64_t irt_key_blocks(const irt_key_t* k) {
  int64_t n = 1;
  for (int d = 0; d < k->nf; ++d) n *= k->size[d];
  return n;
}

static inline irt_t irt_getitem(int na, const irt_t* a) {
  irt_t x = a[0];
  if (x->kind == IRT_TUPLE) {
    int64_t k = irt_index(a[1]);
    if (k < 0) k += x->n;
    if (k < 0 || k >= x->n) irt_fail("IndexError: tuple index out of range");
    return irt_item(x, k);
  }
  x = irt_tensor_of(x);
  irt_shape s;
  irt_key_t k = irt_key(x, na - 1, a + 1, &s);
  if (s.ndim == 0) return irt_elbox(x, k.base);
  irt_obj* out = irt_new(x->dtype, s.ndim, s.shape);
  size_t es = irt_esize(x->dtype), block = (size_t)k.inner * es;
  for (int64_t b = 0, n = irt_key_blocks(&k); b < n; ++b)
    memcpy((char*)out->data + (size_t)b * block,
           (const char*)x->data + (size_t)irt_key_block(&k, b) * es, block);
  return out;
}

static inline irt_t irt_additem(int na, const irt_t* a) {
  irt_t x = irt_tensor_of(a[0]), v = a[1];
  irt_obj* t = (irt_obj*)irt_copy(x);
  irt_shape s;
  irt_key_t k = irt_key(x, na - 2, a + 2, &s);
  if (!irt_isfloat(t->dtype)) irt_fail("additem on a tensor that is not of floats");
  if (v->kind == IRT_TENSOR) {
    irt_t vs[1] = {v};
    irt_shape b = irt_bshape(1, vs);
    if (b.ndim > s.ndim) irt_fail("ValueError: could not broadcast");
  }
  for (int64_t b = 0, n = irt_key_blocks(&k); b < n; ++b) {
    int64_t off = irt_key_block(&k, b);
    for (int64_t j = 0; j < k.inner; ++j) {
      double e = irt_el(v, irt_boff(v, &s, b * k.inner + j)).d;
      if (t->dtype == IRT_F8) ((double*)t->data)[off + j] = ((double*)t->data)[off + j] + e;
      else ((float*)t->data)[off + j] = ((float*)t->data)[off + j] + (float)e;
    }
  }
  return t;
}

/* x summed over the dimensions broadcasting stretched, to like's shape. */
static inline irt_t irt_sum_to(int na, const irt_t* a) {
  (void)na;
  irt_t x = a[0], like = a[1];
  if (like->kind != IRT_TENSOR) {
    bool f32 = like->kind == 2;
    if (x->kind != IRT_TENSOR) return f32 ? irt_box_f((float)x->d) : x;
    if (x->dtype == IRT_F8) {
      double s = irt_sumd((const double*)x->data, x->n, 0);
      return f32 ? irt_box_f((float)s) : irt_box_d(s);
    }
    if (x->dtype != IRT_F4) irt_fail("sum_to of a tensor that is not of floats");
    float s = irt_sumf((const float*)x->data, x->n, 0);
    return f32 || like->kind != 3 ? irt_box_f(s) : irt_box_d(s);
  }
  x = irt_tensor_of(x);
  if (!irt_isfloat(x->dtype)) irt_fail("sum_to of a tensor that is not of floats");
  if (x->ndim == like->ndim && memcmp(x->shape, like->shape, sizeof(int64_t) * (size_t)x->ndim) == 0) return x;
  int lead = x->ndim - like->ndim;
  if (lead < 0) irt_fail("sum_to: more dimensions than the tensor has");
  int64_t m = like->n;
  irt_obj* out = irt_new(x->dtype, like->ndim, like->shape);
  bool f8 = x->dtype == IRT_F8;
  if (memcmp(x->shape + lead, like->shape, sizeof(int64_t) * (size_t)like->ndim) == 0) {
    if (x->n == 0) return out;
    if (f8) irt_colsumd((const double*)x->data, x->n / m, m, (double*)out->data, 0);
    else irt_colsumf((const float*)x->data, x->n / m, m, (float*)out->data, 0);
    return out;
  }
  int64_t strides[32], s = 1;
  for (int d = x->ndim - 1; d >= 0; --d) {
    int64_t full = d < lead ? 1 : like->shape[d - lead];
    strides[d] = full == 1 ? 0 : s;
    s *= full;
  }
  int64_t inner = x->ndim ? x->shape[x->ndim - 1] : 1;
  int64_t rows = inner ? x->n / inner : 0;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t rem = r, ot = 0;
    for (int d = x->ndim - 2; d >= 0; --d) {
      ot += rem % x->shape[d] * strides[d];
      rem /= x->shape[d];
    }
    int64_t ox = r * inner;
    if (f8) {
      double *o = (double*)out->data;
      const double* v = (const double*)x->data;
      if (strides[x->ndim - 1] == 0) o[ot] = o[ot] + irt_sumd(v + ox, inner, ox);
      else for (int64_t i = 0; i < inner; ++i) o[ot + i] = o[ot + i] + v[ox + i];
    } else {
      float *o = (float*)out->data;
      const float* v = (const float*)x->data;
      if (strides[x->ndim - 1] == 0) o[ot] = o[ot] + irt_sumf(v + ox, inner, ox);
      else for (int64_t i = 0; i < inner; ++i) o[ot + i] = o[ot + i] + v[ox + i];
    }
  }
  return out;
}

/* x (plus zero of its type) broadcast to like's shape. */
static inline irt_t irt_broadcast_to(int na, const irt_t* a) {
  (void)na;
  irt_t x = a[0], like = a[1];
  if (like->kind != IRT_TENSOR) return x;
  if (x->kind == IRT_TENSOR && x->ndim == like->ndim &&
      memcmp(x->shape, like->shape, sizeof(int64_t) * (size_t)x->ndim) == 0) return x;
  int dt = x->kind == IRT_TENSOR ? x->dtype : x->kind == 2 ? IRT_F4 : IRT_F8;
  irt_shape s;
  s.ndim = like->ndim;
  memcpy(s.shape, like->shape, sizeof(int64_t) * (size_t)like->ndim);
  irt_obj* out = irt_new(dt, like->ndim, like->shape);
  for (int64_t k = 0; k < out->n; ++k) {
    irt_s e = irt_el(x, irt_boff(x, &s, k));
    if (dt == IRT_F8) ((double*)out->data)[k] = e.d + 0.0;
    else if (dt == IRT_F4) ((float*)out->data)[k] = (float)e.d + 0.0f;
    else irt_store(out, k, e);
  }
  return out;
}

static inline irt_t irt_fill(int na, const irt_t* a) {
  int64_t dims[32];
  int nd = irt_dims(na - 1, a + 1, dims);
  irt_t v = a[0];
  if (!irt_isnum(v)) irt_fail("fill with a value that is not a number");
  irt_obj* out = irt_new(v->kind, nd, dims);
  for (int64_t k = 0; k < out->n; ++k) irt_store(out, k, irt_el(v, 0));
  return out;
}
static inline irt_t irt_zeros(int na, const irt_t* a) {
  int64_t dims[32];
  int nd = irt_dims(na, a, dims);
  return irt_new(IRT_F8, nd, dims);
}
static inline irt_t irt_ones(int na, const irt_t* a) {
  int64_t dims[32];
  int nd = irt_dims(na, a, dims);
  irt_obj* out = irt_new(IRT_F8, nd, dims);
  for (int64_t k = 0; k < out->n; ++k) ((double*)out->data)[k] = 1.0;
  return out;
}
static inline irt_t irt_size(int na, const irt_t* a) {
  irt_t x = a[0];
  int nd = x->kind == IRT_TENSOR ? x->ndim : 0;
  if (na == 1) {
    irt_t items[32];
    for (int k = 0; k < nd && k < 32; ++k) items[k] = irt_box_i(x->shape[k]);
    return irt_tuple(nd, items);
  }
  int64_t k = irt_index(a[1]);
  return irt_box_i(k <= nd ? x->shape[k - 1] : 1);
}
static inline irt_t irt_length(int na, const irt_t* a) {
  (void)na;
  irt_t x = a[0];
  return irt_box_i(x->kind == IRT_TUPLE || x->kind == IRT_TENSOR ? x->n : 1);
}

/* The elements first, first + step, ... up to last (1-based) along a
   dimension of n: their count, and in *from the 0-based first one. */
static inline int64_t irt_range(int64_t n, int64_t first, int64_t last, int64_t step, int64_t* from) {
  *from = 0;
  if (step == 0) irt_fail("ValueError: slice step cannot be zero");
  if (step > 0 ? last < first : last > first) return 0;
  int64_t start = first - 1, stop = last - 1 + (step > 0 ? 1 : -1), count = 0;
  if (step > 0) {
    if (stop > n) stop = n;
    if (start < 0) start = 0;
    for (int64_t i = start; i < stop; i += step) ++count;
  } else {
    if (start > n - 1) start = n - 1;
    for (int64_t i = start; i > stop && i >= 0; i += step) ++count;
  }
  *from = start;
  return count;
}

/* Python's start:stop:step (a part left out is nothing) along a dimension
   of n, as slice.indices reads it: the count, and in *from the 0-based
   first element. */
static inline int64_t irt_pyrange(int64_t n, irt_t start, irt_t stop, irt_t step, int64_t* st,
                                  int64_t* from) {
  *st = step == NULL || step->kind == IRT_NOTHING ? 1 : irt_index(step);
  if (*st == 0) irt_fail("ValueError: slice step cannot be zero");
  int64_t lo = *st < 0 ? -1 : 0, hi = *st < 0 ? n - 1 : n, b[2];
  irt_t part[2] = {start, stop};
  for (int k = 0; k < 2; ++k) {
    if (part[k]->kind == IRT_NOTHING) {
      b[k] = (k == 0) == (*st < 0) ? hi : lo;
      continue;
    }
    int64_t v = irt_index(part[k]);
    if (v < 0) v += n;
    b[k] = v < lo ? lo : v > hi ? hi : v;
  }
  *from = b[0];
  if (*st < 0) return b[1] < b[0] ? (b[0] - b[1] - 1) / -*st + 1 : 0;
  return b[0] < b[1] ? (b[1] - b[0] - 1) / *st + 1 : 0;
}

/* slice (unslice = 0): x along dimension d; unslice: t into zeros shaped as
   x; python: getslice and ungetslice, the range as Python's. */
static inline irt_t irt_slicing(int na, const irt_t* a, int unslice, int python) {
  irt_t t = unslice ? irt_tensor_of(a[0]) : NULL, x = irt_tensor_of(a[unslice]);
  const irt_t* b = a + unslice + 1;
  int d = (int)irt_index(b[0]) - 1;
  if (d < 0 || d >= x->ndim) irt_fail("IndexError: no such dimension");
  int64_t step, from, count;
  if (python) {
    count = irt_pyrange(x->shape[d], b[1], b[2], na - unslice > 4 ? b[3] : NULL, &step, &from);
  } else {
    step = na - unslice > 4 ? irt_index(b[3]) : 1;
    count = irt_range(x->shape[d], irt_index(b[1]), irt_index(b[2]), step, &from);
  }
  int64_t outer = 1, inner = 1, shape[32];
  for (int k = 0; k < x->ndim; ++k) {
    if (k < d) outer *= x->shape[k];
    if (k > d) inner *= x->shape[k];
    shape[k] = k == d ? count : x->shape[k];
  }
  if (!unslice) {
    irt_obj* out = irt_new(x->dtype, x->ndim, shape);
    size_t es = irt_esize(x->dtype);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < count; ++j)
        memcpy((char*)out->data + (size_t)((o * count + j) * inner) * es,
               (const char*)x->data + (size_t)((o * x->shape[d] + from + j * step) * inner) * es,
               (size_t)inner * es);
    return out;
  }
  irt_obj* out = irt_new(t->dtype, x->ndim, x->shape);
  irt_shape ks;
  ks.ndim = x->ndim;
  memcpy(ks.shape, shape, sizeof(int64_t) * (size_t)x->ndim);
  int64_t k = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < count; ++j)
      for (int64_t i = 0; i < inner; ++i, ++k) {
        int64_t at = (o * x->shape[d] + from + j * step) * inner + i;
        irt_s e = irt_el(t, irt_boff(t, &ks, k));
        if (t->dtype == IRT_F8) ((double*)out->data)[at] = 0.0 + e.d;
        else if (t->dtype == IRT_F4) ((float*)out->data)[at] = 0.0f + (float)e.d;
        else irt_store(out, at, e);
      }
  return out;
}
static inline irt_t irt_slice(int na, const irt_t* a) { return irt_slicing(na, a, 0, 0); }
static inline irt_t irt_unslice(int na, const irt_t* a) { return irt_slicing(na, a, 1, 0); }
static inline irt_t irt_getslice(int na, const irt_t* a) {
  if (a[0]->kind != IRT_TUPLE) return irt_slicing(na, a, 0, 1);
  if (irt_index(a[1]) != 1) irt_fail("IndexError: a tuple has one dimension");
  int64_t step, from, count = irt_pyrange(a[0]->n, a[2], a[3], na > 4 ? a[4] : NULL, &step, &from);
  irt_t* items = (irt_t*)irt_alloc(sizeof(irt_t) * (size_t)(count ? count : 1));
  for (int64_t k = 0; k < count; ++k) items[k] = irt_item(a[0], from + k * step);
  return irt_tuple(count, items);
}
static inline irt_t irt_ungetslice(int na, const irt_t* a) { return irt_slicing(na, a, 1, 1); }

/* Running sums along dimension a[1] (of a vector without it), in order;
   integers and Bools as Int64 (wrapping), Float32 in Float32. */
static inline irt_t irt_cumsum(int na, const irt_t* a) {
  irt_t x = irt_tensor_of(a[0]);
  int d = na > 1 ? (int)irt_index(a[1]) - 1 : 0;
  if (na == 1 && x->ndim != 1) irt_fail("ArgumentError: cumsum needs the dimension to sum along");
  if (d < 0 || d >= x->ndim) irt_fail("AxisError: no such dimension");
  int dt = x->dtype == IRT_F8 || x->dtype == IRT_F4 ? x->dtype : IRT_I8;
  irt_obj* out = irt_new(dt, x->ndim, x->shape);
  int64_t outer = 1, inner = 1, len = x->shape[d];
  for (int k = 0; k < x->ndim; ++k) {
    if (k < d) outer *= x->shape[k];
    if (k > d) inner *= x->shape[k];
  }
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < inner; ++k) {
      double f8 = 0.0;
      float f4 = 0.0f;
      uint64_t i8 = 0;
      for (int64_t j = 0; j < len; ++j) {
        int64_t at = (o * len + j) * inner + k;
        irt_s e = irt_el(x, at);
        if (dt == IRT_F8) {
          f8 += e.d;
          ((double*)out->data)[at] = f8;
        } else if (dt == IRT_F4) {
          f4 += (float)e.d;
          ((float*)out->data)[at] = f4;
        } else {
          i8 += (uint64_t)e.i;
          ((int64_t*)out->data)[at] = (int64_t)i8;
        }
      }
    }
  return out;
}

/* A vector of a tuple's numbers, in the type that holds them all (as cat). */
static inline irt_t irt_collect(int na, const irt_t* a) {
  (void)na;
  irt_t t = a[0];
  if (t->kind != IRT_TUPLE) irt_fail("TypeError: collect of what is not a tuple");
  bool f64 = false, f32 = false, ints = false;
  for (int64_t k = 0; k < t->n; ++k) {
    irt_t v = irt_item(t, k);
    if (!irt_isnum(v)) irt_fail("TypeError: collect of a tuple that holds what is not a number");
    f64 |= v->kind == IRT_F8;
    f32 |= v->kind == IRT_F4;
    ints |= v->kind == IRT_I8;
  }
  int dt = f64 || (f32 && ints) ? IRT_F8 : f32 ? IRT_F4 : ints ? IRT_I8 : IRT_B1;
  int64_t n = t->n;
  irt_obj* out = irt_new(dt, 1, &n);
  for (int64_t k = 0; k < n; ++k) {
    irt_s e = irt_el(irt_item(t, k), 0);
    if (dt == IRT_F4 && e.k == 1) e.d = (double)(float)e.i, e.k = 2;
    irt_store(out, k, e);
  }
  return out;
}

/* Tensors joined along dimension a[0], in the type that holds them all. */
static inline irt_t irt_cat(int na, const irt_t* a) {
  int d = (int)irt_index(a[0]) - 1;
  if (a[1]->kind == IRT_TUPLE) { /* tuples: their items in order */
    int64_t n = 0;
    for (int j = 1; j < na; ++j) {
      if (a[j]->kind != IRT_TUPLE || d != 0) irt_fail("TypeError: cat: tuples are joined along dimension 1, with tuples only");
      n += a[j]->n;
    }
    irt_t* items = (irt_t*)irt_alloc(sizeof(irt_t) * (size_t)(n ? n : 1));
    int64_t k = 0;
    for (int j = 1; j < na; ++j)
      for (int64_t i = 0; i < a[j]->n; ++i) items[k++] = irt_item(a[j], i);
    return irt_tuple(n, items);
  }
  bool f64 = false, f32 = false, ints = false;
  for (int j = 1; j < na; ++j) {
    irt_t x = irt_tensor_of(a[j]);
    f64 |= x->dtype == IRT_F8;
    f32 |= x->dtype == IRT_F4;
    ints |= x->dtype == IRT_I8 || x->dtype == IRT_I4;
  }
  int dt = f64 || (f32 && ints) ? IRT_F8 : f32 ? IRT_F4 : ints ? IRT_I8 : IRT_B1;
  irt_t x0 = a[1];
  if (d < 0 || d >= x0->ndim) irt_fail("AxisError: no such dimension");
  int64_t shape[32], total = 0, outer = 1, inner = 1;
  for (int j = 1; j < na; ++j) {
    if (a[j]->ndim != x0->ndim) irt_fail("ValueError: cat of tensors of different dimensions");
    for (int k = 0; k < x0->ndim; ++k)
      if (k != d && a[j]->shape[k] != x0->shape[k]) irt_fail("ValueError: cat of tensors of different shapes");
    total += a[j]->shape[d];
  }
  for (int k = 0; k < x0->ndim; ++k) {
    shape[k] = k == d ? total : x0->shape[k];
    if (k < d) outer *= shape[k];
    if (k > d) inner *= shape[k];
  }
  irt_obj* out = irt_new(dt, x0->ndim, shape);
  int64_t k = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int j = 1; j < na; ++j) {
      int64_t block = a[j]->shape[d] * inner;
      for (int64_t i = 0; i < block; ++i) {
        irt_s e = irt_el(a[j], o * block + i);
        if (dt == IRT_F4 && e.k == 1) e.d = (double)(float)e.i, e.k = 2;
        irt_store(out, k++, e);
      }
    }
  return out;
}

/* An elementwise operation's result: a tensor of `dtype` of the shape its
   operands broadcast to. */
static inline irt_obj* irt_ew_new(int dtype, int na, const irt_t* a, irt_shape* s) {
  *s = irt_bshape(na, a);
  return irt_new(dtype, s->ndim, s->shape);
}
/* Whether an elementwise operation computes in a float type (its operands'
   tensors all of floats): the numbers take the tensors' type first. */
static inline int irt_ew_float(int na, const irt_t* a) {
  int dt = IRT_F4;
  for (int j = 0; j < na; ++j) {
    if (a[j]->kind != IRT_TENSOR) continue;
    if (!irt_isfloat(a[j]->dtype)) return -1;
    if (a[j]->dtype == IRT_F8) dt = IRT_F8;
  }
  return dt;
}

/* The parameters a program takes: a tensor in irt-trace's notation, of the
   element type and number of dimensions the trace recorded ([1.5, -0.5]
   for a vector, [1 2; 3 4] for a matrix). */
static inline irt_t irt_parse(const char* text, int dtype, int ndim) {
  size_t len = strlen(text), cap = len / 2 + 1;
  char* buf = (char*)irt_alloc(len + 1);
  void* data = irt_alloc(cap * 8);
  int64_t n = 0, rows = 1;
  const char* p = text;
  while (*p) {
    if (*p == ';') ++rows;
    if (*p == '[' || *p == ']' || *p == ',' || *p == ';' || *p == ' ' || *p == '\t' || *p == '\n') {
      ++p;
      continue;
    }
    size_t k = 0;
    while (p[k] && !strchr("[],; \t\n", p[k])) ++k;
    memcpy(buf, p, k);
    buf[k] = 0;
    p += k;
    char* end = buf;
    switch (dtype) {
      case IRT_B1: ((bool*)data)[n] = strcmp(buf, "true") == 0 || strcmp(buf, "1") == 0; end = buf + k; break;
      case IRT_I8: ((int64_t*)data)[n] = (int64_t)strtoll(buf, &end, 10); break;
      case IRT_I4: ((int32_t*)data)[n] = (int32_t)strtol(buf, &end, 10); break;
      case IRT_F4:
        for (size_t q = 1; q + 1 < k; ++q)
          if (buf[q] == 'f' && (buf[q - 1] == '.' || (buf[q - 1] >= '0' && buf[q - 1] <= '9'))) buf[q] = 'e';
        ((float*)data)[n] = strtof(buf, &end);
        if (strcmp(end, "32") == 0) end += 2; /* Inf32, NaN32 */
        break;
      default: ((double*)data)[n] = strtod(buf, &end); break;
    }
    if (end == buf || *end) irt_fail("an argument that is not a tensor of the recorded type");
    ++n;
  }
  int64_t shape[2] = {ndim == 2 ? rows : n, ndim == 2 ? n / rows : 1};
  if ((ndim == 2 && n % rows != 0) || ndim > 2 || (ndim == 0 && n != 1)) irt_fail("an argument of other dimensions than recorded");
  return irt_tensor(dtype, ndim, shape, data);
}

/* Writes a value: printing = 1 as the tokens check_c.py reads ("Tensor
   Float64 2 3 4 0x... ...", "Tuple 2 ..."), 0 in irt-trace's notation. */
static inline void irt_write(irt_t v, int tokens) {
  static const char* names[] = {"Bool", "Int64", "Float32", "Float64", "Int32"};
  irt_t stack[64];
  int64_t next[64];
  int depth = 0;
  stack[0] = v;
  next[0] = 0;
  for (;;) {
    irt_t x = stack[depth];
    if (x->kind == IRT_TUPLE) {
      if (next[depth] == 0) printf(tokens ? " Tuple %lld" : "(", (long long)x->n);
      if (next[depth] < x->n) {
        if (!tokens && next[depth] > 0) printf(", ");
        if (depth + 1 == 64) irt_fail("tuples nested too deep");
        stack[depth + 1] = irt_item(x, next[depth]++);
        next[++depth] = 0;
        continue;
      }
      if (!tokens) printf(x->n == 1 ? ",)" : ")");
    } else if (x->kind == IRT_TENSOR) {
      if (tokens) {
        printf(" Tensor %s %d", names[x->dtype], x->ndim);
        for (int d = 0; d < x->ndim; ++d) printf(" %lld", (long long)x->shape[d]);
      } else {
        printf("[");
      }
      int64_t cols = x->ndim == 2 ? x->shape[1] : 0;
      for (int64_t k = 0; k < x->n; ++k) {
        irt_s e = irt_el(x, k);
        if (!tokens && k > 0) printf(cols && k % cols == 0 ? "; " : cols ? " " : ", ");
        if (tokens && e.k >= 2) {
          if (e.k == 2) { float f = (float)e.d; uint32_t b; memcpy(&b, &f, 4); printf(" 0x%08x", b); }
          else { uint64_t b; memcpy(&b, &e.d, 8); printf(" 0x%016llx", (unsigned long long)b); }
        } else if (e.k == 0) {
          if (tokens) printf(" %d", (int)e.i); else printf("%s", e.i ? "true" : "false");
        } else if (e.k == 1) {
          printf(tokens ? " %lld" : "%lld", (long long)e.i);
        } else {
          printf(e.k == 2 ? "%.9g" : "%.17g", e.d);
        }
      }
      if (!tokens) printf("]");
    } else {
      irt_s e = irt_el(x, 0);
      if (tokens) printf(" %s", names[x->kind]);
      if (tokens && e.k >= 2) {
        if (e.k == 2) { uint32_t b; memcpy(&b, &x->f, 4); printf(" 0x%08x", b); }
        else { uint64_t b; memcpy(&b, &e.d, 8); printf(" 0x%016llx", (unsigned long long)b); }
      } else if (e.k == 0) {
        if (tokens) printf(" %d", (int)e.i); else printf("%s", e.i ? "true" : "false");
      } else if (e.k == 1) {
        printf(tokens ? " %lld" : "%lld", (long long)e.i);
      } else {
        printf(e.k == 2 ? "%.9g" : "%.17g", e.d);
      }
    }
    if (depth == 0) break;
    --depth;
  }
}

/* The recorded values, one line each, when IRT_PRINT_VALUES is defined. */
#ifdef IRT_PRINT_VALUES
static inline void irt_print_b(uint64_t id, bool v) { printf("%llu Bool %d\n", (unsigned long long)id, v); }
static inline void irt_print_i(uint64_t id, int64_t v) { printf("%llu Int64 %lld\n", (unsigned long long)id, (long long)v); }
static inline void irt_print_f(uint64_t id, float v) { uint32_t b; memcpy(&b, &v, 4); printf("%llu Float32 0x%08x\n", (unsigned long long)id, b); }
static inline void irt_print_d(uint64_t id, double v) { uint64_t b; memcpy(&b, &v, 8); printf("%llu Float64 0x%016llx\n", (unsigned long long)id, (unsigned long long)b); }
static inline void irt_print_t(uint64_t id, irt_t v) { printf("%llu", (unsigned long long)id); irt_write(v, 1); printf("\n"); }
#define IRT_VALUE(id, v) _Generic((v), bool: irt_print_b, int64_t: irt_print_i, float: irt_print_f, double: irt_print_d, irt_t: irt_print_t)(id, v)
#else
#define IRT_VALUE(id, v) ((void)(v))
#endif
static inline bool irt_lt(int c) { return c == -1; }
static inline bool irt_le(int c) { return c == -1 || c == 0; }
static inline bool irt_gt(int c) { return c == 1; }
static inline bool irt_ge(int c) { return c == 1 || c == 0; }
static inline bool irt_eq(int c) { return c == 0; }
static inline bool irt_ne(int c) { return c != 0; }
