/* polybench_mini.h - a small, self-written header in the style of
 * PolyBench/C 4.2's polybench.h (not a copy). It provides the macros the
 * PolyBench sources are written with, so that c2gpu sees the same code
 * shapes: C99 VLA parameters, pointer-to-VLA heap arrays, _PB_ loop bounds,
 * #pragma scop regions.
 *
 * Differences from the real one: no padding, no cache flushing, no PAPI;
 * polybench_prevent_dce(f) always runs f, and print_array (defined in each
 * benchmark, its signature is benchmark-specific) prints checksums to
 * stdout; the full dump is printed to stderr only with -DPOLYBENCH_DUMP_ARRAYS. */
#ifndef POLYBENCH_MINI_H
#define POLYBENCH_MINI_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Dataset selection; each benchmark maps the dataset to its sizes. */
#if !defined(MINI_DATASET) && !defined(SMALL_DATASET) && \
    !defined(STANDARD_DATASET) && !defined(LARGE_DATASET) && \
    !defined(EXTRALARGE_DATASET)
#define STANDARD_DATASET
#endif

/* Element type: float unless -DDATA_TYPE_IS_DOUBLE. */
#ifdef DATA_TYPE_IS_DOUBLE
#define DATA_TYPE double
#define DATA_PRINTF_MODIFIER "%0.2lf "
#define SCALAR_VAL(x) x
#define SQRT_FUN(x) sqrt(x)
#else
#define DATA_TYPE float
#define DATA_PRINTF_MODIFIER "%0.2f "
#define SCALAR_VAL(x) x##f
#define SQRT_FUN(x) sqrtf(x)
#endif

/* Loop bounds: the run-time parameters (ni), not the macros (NI). */
#define POLYBENCH_LOOP_BOUND(x, y) y

/* Array declarators; used for parameters (VLA) and for declarations. */
#define POLYBENCH_1D(var, dim1, ddim1) var[ddim1]
#define POLYBENCH_2D(var, dim1, dim2, ddim1, ddim2) var[ddim1][ddim2]
#define POLYBENCH_3D(var, dim1, dim2, dim3, ddim1, ddim2, ddim3) \
    var[ddim1][ddim2][ddim3]

/* Heap arrays: a pointer to a VLA, allocated with malloc. */
#define POLYBENCH_1D_ARRAY_DECL(var, type, dim1, ddim1) \
    type (*var)[ddim1] = (type (*)[ddim1])polybench_alloc_data((ddim1), sizeof(type))
#define POLYBENCH_2D_ARRAY_DECL(var, type, dim1, dim2, ddim1, ddim2) \
    type (*var)[ddim1][ddim2] = \
        (type (*)[ddim1][ddim2])polybench_alloc_data((ddim1) * (ddim2), sizeof(type))
#define POLYBENCH_ARRAY(x) *x
#define POLYBENCH_FREE_ARRAY(x) free((void *)x)

/* Always run the output code (the real header hides it behind argc > 42). */
#define polybench_prevent_dce(func) func

/* Timer: only with -DPOLYBENCH_TIME. */
#ifdef POLYBENCH_TIME
#define polybench_start_instruments polybench_timer_start()
#define polybench_stop_instruments polybench_timer_stop()
#define polybench_print_instruments polybench_timer_print()
#else
#define polybench_start_instruments
#define polybench_stop_instruments
#define polybench_print_instruments
#endif

static clock_t polybench_t_start, polybench_t_end;

static inline void polybench_timer_start(void) { polybench_t_start = clock(); }
static inline void polybench_timer_stop(void) { polybench_t_end = clock(); }
static inline void polybench_timer_print(void)
{
    printf("%0.6f\n", (double)(polybench_t_end - polybench_t_start) / CLOCKS_PER_SEC);
}

static inline void *polybench_alloc_data(unsigned long long n, int elt_size)
{
    void *p = malloc((size_t)n * (size_t)elt_size);
    if (p == NULL) {
        fprintf(stderr, "[PolyBench] malloc failed\n");
        exit(1);
    }
    return p;
}

/* Checksum of n elements, printed as "name checksum = value". */
static inline void polybench_print_checksum(const char *name, const DATA_TYPE *data,
                                            long n)
{
    double sum = 0.0;
    long i;
    for (i = 0; i < n; i++)
        sum += (double)data[i] * (double)(1 + i % 7);
    printf("%s checksum = %.6f\n", name, sum);
}

#define POLYBENCH_DUMP_TARGET stderr
#define POLYBENCH_DUMP_START fprintf(POLYBENCH_DUMP_TARGET, "==BEGIN DUMP_ARRAYS==\n")
#define POLYBENCH_DUMP_FINISH fprintf(POLYBENCH_DUMP_TARGET, "==END   DUMP_ARRAYS==\n")
#define POLYBENCH_DUMP_BEGIN(s) fprintf(POLYBENCH_DUMP_TARGET, "begin dump: %s", s)
#define POLYBENCH_DUMP_END(s) fprintf(POLYBENCH_DUMP_TARGET, "\nend   dump: %s\n", s)

#endif /* POLYBENCH_MINI_H */
