/* atax.c - y = A^T * (A * x), written in the style of PolyBench/C 4.2.
 * Uses polybench_mini.h (-I testdata/polybench).
 * Exercises: a #pragma scop region inside the kernel function, with
 * non-candidate loops outside it (init_array, print_array); inside the
 * scop, a 1-D init loop, then an i loop holding two j loops: the first is
 * a reduction into tmp[i], the second scatters into y[j] for every i, so i
 * carries a reduction on y[] and is not parallel without distribution or
 * interchange. */
#include <stdio.h>
#include <stdlib.h>
#include "polybench_mini.h"

#if !defined(M) && !defined(N)
#ifdef MINI_DATASET
#define M 38
#define N 42
#endif
#ifdef SMALL_DATASET
#define M 116
#define N 124
#endif
#ifdef STANDARD_DATASET
#define M 1900
#define N 2100
#endif
#ifdef LARGE_DATASET
#define M 4000
#define N 4200
#endif
#ifdef EXTRALARGE_DATASET
#define M 8000
#define N 8400
#endif
#endif
#define _PB_M POLYBENCH_LOOP_BOUND(M, m)
#define _PB_N POLYBENCH_LOOP_BOUND(N, n)

static void init_array(int m, int n, DATA_TYPE POLYBENCH_2D(A, M, N, m, n),
                       DATA_TYPE POLYBENCH_1D(x, N, n))
{
    int i, j;
    DATA_TYPE fn = (DATA_TYPE)n;

    for (i = 0; i < n; i++)
        x[i] = 1 + (i / fn);
    for (i = 0; i < m; i++)
        for (j = 0; j < n; j++)
            A[i][j] = (DATA_TYPE)((i + j) % n) / (5 * m);
}

static void print_array(int m, int n, DATA_TYPE POLYBENCH_1D(y, N, n),
                        DATA_TYPE POLYBENCH_1D(tmp, M, m))
{
#ifdef POLYBENCH_DUMP_ARRAYS
    int i;

    POLYBENCH_DUMP_START;
    POLYBENCH_DUMP_BEGIN("y");
    for (i = 0; i < n; i++) {
        if (i % 20 == 0)
            fprintf(POLYBENCH_DUMP_TARGET, "\n");
        fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, y[i]);
    }
    POLYBENCH_DUMP_END("y");
    POLYBENCH_DUMP_FINISH;
#endif
    polybench_print_checksum("atax: y", y, n);
    polybench_print_checksum("atax: tmp", tmp, m);
}

static void kernel_atax(int m, int n, DATA_TYPE POLYBENCH_2D(A, M, N, m, n),
                        DATA_TYPE POLYBENCH_1D(x, N, n),
                        DATA_TYPE POLYBENCH_1D(y, N, n),
                        DATA_TYPE POLYBENCH_1D(tmp, M, m))
{
    int i, j;

#pragma scop
    for (i = 0; i < _PB_N; i++)
        y[i] = 0;
    for (i = 0; i < _PB_M; i++) {
        tmp[i] = SCALAR_VAL(0.0);
        for (j = 0; j < _PB_N; j++)
            tmp[i] = tmp[i] + A[i][j] * x[j];
        for (j = 0; j < _PB_N; j++)
            y[j] = y[j] + A[i][j] * tmp[i];
    }
#pragma endscop
}

int main(void)
{
    int m = M;
    int n = N;
    POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, M, N, m, n);
    POLYBENCH_1D_ARRAY_DECL(x, DATA_TYPE, N, n);
    POLYBENCH_1D_ARRAY_DECL(y, DATA_TYPE, N, n);
    POLYBENCH_1D_ARRAY_DECL(tmp, DATA_TYPE, M, m);

    init_array(m, n, POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(x));

    polybench_start_instruments;
    kernel_atax(m, n, POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(x),
                POLYBENCH_ARRAY(y), POLYBENCH_ARRAY(tmp));
    polybench_stop_instruments;
    polybench_print_instruments;

    polybench_prevent_dce(print_array(m, n, POLYBENCH_ARRAY(y), POLYBENCH_ARRAY(tmp)));

    POLYBENCH_FREE_ARRAY(A);
    POLYBENCH_FREE_ARRAY(x);
    POLYBENCH_FREE_ARRAY(y);
    POLYBENCH_FREE_ARRAY(tmp);
    return 0;
}
