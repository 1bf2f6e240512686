/* Go's math.Exp and math.Log as the reference runs them on amd64
 * (gomath.h): the same operations in the same order, so that a score
 * built from them has the same bits. Go picks its Exp's fused
 * multiply-add path when the CPU has AVX and FMA; so does this. */
#include "evalspecs/gomath.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static double from_bits(uint64_t b) {
  double d;
  memcpy(&d, &b, sizeof(d));
  return d;
}

static uint64_t to_bits(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof(b));
  return b;
}

static bool use_fma(void) {
  static int known = -1;
  if (known < 0)
    known = __builtin_cpu_supports("avx") && __builtin_cpu_supports("fma");
  return known == 1;
}

double tally_go_exp_path(double x, bool fused) {
  static const double ln2u = 0.69314718055966295651160180568695068359375;
  static const double ln2l =
      0.28235290563031577122588448175013436025525412068e-12;
  static const double log2e = 1.4426950408889634073599246810018920;
  static const double c[9] = {0.5,
                              1.0,
                              2.0,
                              1.6666666666666666667e-1,
                              4.1666666666666666667e-2,
                              8.3333333333333333333e-3,
                              1.3888888888888888889e-3,
                              1.9841269841269841270e-4,
                              2.4801587301587301587e-5};
  uint64_t b = to_bits(x);
  if ((b & ~(1ull << 63)) >= 0x7FF0000000000000ull)
    return b == 0xFFF0000000000000ull ? 0 : x; /* -Inf; NaN or +Inf */
  if (x > 7.09782712893384e+02)
    return INFINITY;
  double t = x * log2e;
  /* CVTSD2SL: round to nearest even; out of range gives INT32_MIN. */
  int32_t e =
      t >= -2147483648.5 && t < 2147483647.5 ? (int32_t)lrint(t) : INT32_MIN;
  double fe = (double)e;
  double r, p;
  if (fused) {
    r = fma(-ln2u, fe, x);
    r = fma(-ln2l, fe, r);
    r *= 0.0625;
    p = fma(c[8], r, c[7]);
    p = fma(p, r, c[6]);
    p = fma(p, r, c[5]);
    p = fma(p, r, c[4]);
    p = fma(p, r, c[3]);
    p = fma(p, r, c[0]);
    p = fma(p, r, c[1]);
    r = r * p;
    for (int i = 0; i < 3; i++)
      r = r * (r + c[2]);
    r = fma(r, r + c[2], c[1]);
  } else {
    r = x - ln2u * fe;
    r = r - ln2l * fe;
    r *= 0.0625;
    p = c[8] * r + c[7];
    p = p * r + c[6];
    p = p * r + c[5];
    p = p * r + c[4];
    p = p * r + c[3];
    p = p * r + c[0];
    p = p * r + c[1];
    r = r * p;
    for (int i = 0; i < 4; i++)
      r = r * (c[2] + r);
    r = r + c[1];
  }
  int64_t be = (int64_t)e + 0x3FF;
  if (be <= 0) { /* denormal */
    if (be < -52)
      return 0;
    be += 0x3FE;
    r = r * from_bits((uint64_t)be << 52);
    be = 1;
  } else if (be >= 0x7FF) {
    return INFINITY;
  }
  return r * from_bits((uint64_t)be << 52);
}

double tally_go_exp(double x) {
  return tally_go_exp_path(x, use_fma());
}

double tally_go_log(double x) {
  static const double hsqrt2 = 7.07106781186547524401e-01;
  static const double ln2hi = 6.93147180369123816490e-01;
  static const double ln2lo = 1.90821492927058770002e-10;
  static const double l1 = 6.666666666666735130e-01;
  static const double l2 = 3.999999999940941908e-01;
  static const double l3 = 2.857142874366239149e-01;
  static const double l4 = 2.222219843214978396e-01;
  static const double l5 = 1.818357216161805012e-01;
  static const double l6 = 1.531383769920937332e-01;
  static const double l7 = 1.479819860511658591e-01;
  uint64_t b = to_bits(x);
  if ((b & ~(1ull << 63)) == 0)
    return -INFINITY;
  if ((int64_t)b < 0)
    return from_bits(0x7FF8000000000001ull);
  if (b >= 0x7FF0000000000000ull)
    return x;
  double f1 = from_bits((b & 0x000FFFFFFFFFFFFFull) | 0x3FE0000000000000ull);
  double k = (double)((int32_t)((b >> 52) & 0x7FF) - 0x3FE);
  /* CMPSD's "not less than": 1 when !(hsqrt2 < f1). */
  double adj = !(hsqrt2 < f1) ? 1.0 : 0.0;
  k = k - adj;
  f1 = f1 * (adj + 1.0);
  double f = f1 - 1.0;
  double s = f / (2.0 + f);
  double s2 = s * s;
  double s4 = s2 * s2;
  double t1 = s2 * (((l7 * s4 + l5) * s4 + l3) * s4 + l1);
  double t2 = s4 * ((l6 * s4 + l4) * s4 + l2);
  double r = t1 + t2;
  double hfsq = 0.5 * f * f;
  double a = s * (hfsq + r) + k * ln2lo;
  return k * ln2hi - ((hfsq - a) - f);
}
