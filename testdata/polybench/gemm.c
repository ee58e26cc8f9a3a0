/* gemm.c - C = alpha*A*B + beta*C, written in the style of PolyBench/C 4.2
 * (VLA parameters via POLYBENCH_2D, heap arrays via POLYBENCH_2D_ARRAY_DECL,
 * _PB_ loop bounds, #pragma scop). Uses polybench_mini.h (-I testdata/polybench).
 * Exercises: candidate selection by #pragma scop / endscop (only the kernel
 * nest is inside; init and output loops are not); VLA array parameters whose
 * extents are function parameters; the real PolyBench i, k, j loop order
 * where j (not k) is innermost, so C[i][j] += is a reduction over k that
 * sits outside the parallel j loop. */
#include <stdio.h>
#include <stdlib.h>
#include "polybench_mini.h"

/* Sizes (what PolyBench keeps in gemm.h). */
#if !defined(NI) && !defined(NJ) && !defined(NK)
#ifdef MINI_DATASET
#define NI 20
#define NJ 25
#define NK 30
#endif
#ifdef SMALL_DATASET
#define NI 60
#define NJ 70
#define NK 80
#endif
#ifdef STANDARD_DATASET
#define NI 500
#define NJ 520
#define NK 540
#endif
#ifdef LARGE_DATASET
#define NI 1000
#define NJ 1100
#define NK 1200
#endif
#ifdef EXTRALARGE_DATASET
#define NI 2000
#define NJ 2300
#define NK 2600
#endif
#endif
#define _PB_NI POLYBENCH_LOOP_BOUND(NI, ni)
#define _PB_NJ POLYBENCH_LOOP_BOUND(NJ, nj)
#define _PB_NK POLYBENCH_LOOP_BOUND(NK, nk)

static void init_array(int ni, int nj, int nk, DATA_TYPE *alpha, DATA_TYPE *beta,
                       DATA_TYPE POLYBENCH_2D(C, NI, NJ, ni, nj),
                       DATA_TYPE POLYBENCH_2D(A, NI, NK, ni, nk),
                       DATA_TYPE POLYBENCH_2D(B, NK, NJ, nk, nj))
{
    int i, j;

    *alpha = SCALAR_VAL(1.5);
    *beta = SCALAR_VAL(1.2);
    for (i = 0; i < ni; i++)
        for (j = 0; j < nj; j++)
            C[i][j] = (DATA_TYPE)((i * 3 + j * 5 + 1) % 13) / 13;
    for (i = 0; i < ni; i++)
        for (j = 0; j < nk; j++)
            A[i][j] = (DATA_TYPE)((i * 7 + j * 2) % 17) / 17;
    for (i = 0; i < nk; i++)
        for (j = 0; j < nj; j++)
            B[i][j] = (DATA_TYPE)((i * 4 + j * 9 + 2) % 19) / 19;
}

static void print_array(int ni, int nj, DATA_TYPE POLYBENCH_2D(C, NI, NJ, ni, nj))
{
#ifdef POLYBENCH_DUMP_ARRAYS
    int i, j;

    POLYBENCH_DUMP_START;
    POLYBENCH_DUMP_BEGIN("C");
    for (i = 0; i < ni; i++)
        for (j = 0; j < nj; j++) {
            if ((i * ni + j) % 20 == 0)
                fprintf(POLYBENCH_DUMP_TARGET, "\n");
            fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, C[i][j]);
        }
    POLYBENCH_DUMP_END("C");
    POLYBENCH_DUMP_FINISH;
#endif
    polybench_print_checksum("gemm: C", &C[0][0], (long)ni * nj);
}

static void kernel_gemm(int ni, int nj, int nk, DATA_TYPE alpha, DATA_TYPE beta,
                        DATA_TYPE POLYBENCH_2D(C, NI, NJ, ni, nj),
                        DATA_TYPE POLYBENCH_2D(A, NI, NK, ni, nk),
                        DATA_TYPE POLYBENCH_2D(B, NK, NJ, nk, nj))
{
    int i, j, k;

#pragma scop
    for (i = 0; i < _PB_NI; i++) {
        for (j = 0; j < _PB_NJ; j++)
            C[i][j] *= beta;
        for (k = 0; k < _PB_NK; k++) {
            for (j = 0; j < _PB_NJ; j++)
                C[i][j] += alpha * A[i][k] * B[k][j];
        }
    }
#pragma endscop
}

int main(void)
{
    int ni = NI;
    int nj = NJ;
    int nk = NK;
    DATA_TYPE alpha;
    DATA_TYPE beta;
    POLYBENCH_2D_ARRAY_DECL(C, DATA_TYPE, NI, NJ, ni, nj);
    POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, NI, NK, ni, nk);
    POLYBENCH_2D_ARRAY_DECL(B, DATA_TYPE, NK, NJ, nk, nj);

    init_array(ni, nj, nk, &alpha, &beta,
               POLYBENCH_ARRAY(C), POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(B));

    polybench_start_instruments;
    kernel_gemm(ni, nj, nk, alpha, beta,
                POLYBENCH_ARRAY(C), POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(B));
    polybench_stop_instruments;
    polybench_print_instruments;

    polybench_prevent_dce(print_array(ni, nj, POLYBENCH_ARRAY(C)));

    POLYBENCH_FREE_ARRAY(C);
    POLYBENCH_FREE_ARRAY(A);
    POLYBENCH_FREE_ARRAY(B);
    return 0;
}
