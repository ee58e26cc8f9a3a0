/* c2gpu parse-only <math.h>: the C99 math library in double, float (f) and
 * long double (l) forms. Classification "macros" (isnan, isinf, ...) are declared
 * as functions so they stay visible as calls in the AST (CUDA has all of them).
 * INFINITY / NAN are plain constant expressions (no __builtin_*). */
#ifndef _C2GPU_MATH_H
#define _C2GPU_MATH_H

#define M_E        2.7182818284590452354
#define M_LOG2E    1.4426950408889634074
#define M_LOG10E   0.43429448190325182765
#define M_LN2      0.69314718055994530942
#define M_LN10     2.30258509299404568402
#define M_PI       3.14159265358979323846
#define M_PI_2     1.57079632679489661923
#define M_PI_4     0.78539816339744830962
#define M_1_PI     0.31830988618379067154
#define M_2_PI     0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2    1.41421356237309504880
#define M_SQRT1_2  0.70710678118654752440

#define HUGE_VAL   (1e300 * 1e300)
#define HUGE_VALF  ((float)(1e300 * 1e300))
#define HUGE_VALL  ((long double)(1e300 * 1e300))
#define INFINITY   ((float)(1e300 * 1e300))
#define NAN        ((float)(0.0 / 0.0))

#define FP_NAN       0
#define FP_INFINITE  1
#define FP_ZERO      2
#define FP_SUBNORMAL 3
#define FP_NORMAL    4

typedef float float_t;
typedef double double_t;

int isnan(double x);
int isinf(double x);
int isfinite(double x);
int isnormal(double x);
int signbit(double x);
int fpclassify(double x);

/* one argument */
double sqrt(double x); float sqrtf(float x); long double sqrtl(long double x);
double cbrt(double x); float cbrtf(float x); long double cbrtl(long double x);
double exp(double x); float expf(float x); long double expl(long double x);
double exp2(double x); float exp2f(float x); long double exp2l(long double x);
double expm1(double x); float expm1f(float x); long double expm1l(long double x);
double log(double x); float logf(float x); long double logl(long double x);
double log2(double x); float log2f(float x); long double log2l(long double x);
double log10(double x); float log10f(float x); long double log10l(long double x);
double log1p(double x); float log1pf(float x); long double log1pl(long double x);
double logb(double x); float logbf(float x); long double logbl(long double x);
double sin(double x); float sinf(float x); long double sinl(long double x);
double cos(double x); float cosf(float x); long double cosl(long double x);
double tan(double x); float tanf(float x); long double tanl(long double x);
double asin(double x); float asinf(float x); long double asinl(long double x);
double acos(double x); float acosf(float x); long double acosl(long double x);
double atan(double x); float atanf(float x); long double atanl(long double x);
double sinh(double x); float sinhf(float x); long double sinhl(long double x);
double cosh(double x); float coshf(float x); long double coshl(long double x);
double tanh(double x); float tanhf(float x); long double tanhl(long double x);
double asinh(double x); float asinhf(float x); long double asinhl(long double x);
double acosh(double x); float acoshf(float x); long double acoshl(long double x);
double atanh(double x); float atanhf(float x); long double atanhl(long double x);
double fabs(double x); float fabsf(float x); long double fabsl(long double x);
double floor(double x); float floorf(float x); long double floorl(long double x);
double ceil(double x); float ceilf(float x); long double ceill(long double x);
double round(double x); float roundf(float x); long double roundl(long double x);
double trunc(double x); float truncf(float x); long double truncl(long double x);
double rint(double x); float rintf(float x); long double rintl(long double x);
double nearbyint(double x); float nearbyintf(float x); long double nearbyintl(long double x);
double erf(double x); float erff(float x); long double erfl(long double x);
double erfc(double x); float erfcf(float x); long double erfcl(long double x);
double tgamma(double x); float tgammaf(float x); long double tgammal(long double x);
double lgamma(double x); float lgammaf(float x); long double lgammal(long double x);
/* two arguments */
double pow(double x, double y); float powf(float x, float y); long double powl(long double x, long double y);
double atan2(double x, double y); float atan2f(float x, float y); long double atan2l(long double x, long double y);
double fmod(double x, double y); float fmodf(float x, float y); long double fmodl(long double x, long double y);
double fmin(double x, double y); float fminf(float x, float y); long double fminl(long double x, long double y);
double fmax(double x, double y); float fmaxf(float x, float y); long double fmaxl(long double x, long double y);
double hypot(double x, double y); float hypotf(float x, float y); long double hypotl(long double x, long double y);
double copysign(double x, double y); float copysignf(float x, float y); long double copysignl(long double x, long double y);
double fdim(double x, double y); float fdimf(float x, float y); long double fdiml(long double x, long double y);
double remainder(double x, double y); float remainderf(float x, float y); long double remainderl(long double x, long double y);
double nextafter(double x, double y); float nextafterf(float x, float y); long double nextafterl(long double x, long double y);
/* others */
double fma(double x, double y, double z); float fmaf(float x, float y, float z); long double fmal(long double x, long double y, long double z);
double frexp(double x, int *exp); float frexpf(float x, int *exp); long double frexpl(long double x, int *exp);
double ldexp(double x, int exp); float ldexpf(float x, int exp); long double ldexpl(long double x, int exp);
double scalbn(double x, int n); float scalbnf(float x, int n); long double scalbnl(long double x, int n);
double modf(double x, double *iptr); float modff(float x, float *iptr); long double modfl(long double x, long double *iptr);
double remquo(double x, double y, int *quo); float remquof(float x, float y, int *quo); long double remquol(long double x, long double y, int *quo);
int ilogb(double x); int ilogbf(float x); int ilogbl(long double x);
long lround(double x); long lroundf(float x); long lroundl(long double x);
long lrint(double x); long lrintf(float x); long lrintl(long double x);
long long llround(double x); long long llroundf(float x); long long llroundl(long double x);
long long llrint(double x); long long llrintf(float x); long long llrintl(long double x);
double nan(const char *tag); float nanf(const char *tag); long double nanl(const char *tag);

#endif /* _C2GPU_MATH_H */
