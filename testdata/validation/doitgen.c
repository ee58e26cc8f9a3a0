/* validation/doitgen.c - PolyBench/GPU 1.0 doitgen (CUDA/DOITGEN/doitgen.cu):
 * NR = NQ = NP = 128, block 32 x 8.  The CUDA version keeps the r loop on
 * the host and launches two kernels per r, each followed by a synchronize
 * (256 launches): kernel 1, thread (x, y) -> p = x, q = y, sums over s into
 * the global element sum[r][q][p]; kernel 2 copies sum[r] back into A[r].
 * Exercises: a parallel loop (r) kept on the host with a launch per
 * iteration (the validation case forces map q, p); a reduction on a global
 * element. Flat float pointers, no restrict. Held back: no measurement in
 * the validation data handed over. */
#include <stdio.h>
#include <stdlib.h>

#ifndef NR
#define NR 128
#endif
#ifndef NQ
#define NQ 128
#endif
#ifndef NP
#define NP 128
#endif

void doitgen(float *A, const float *C4, float *sum)
{
    int r, q, p, s;
    for (r = 0; r < NR; r++) {
        for (q = 0; q < NQ; q++)
            for (p = 0; p < NP; p++) {
                sum[r * NQ * NP + q * NP + p] = 0.0f;
                for (s = 0; s < NP; s++)
                    sum[r * NQ * NP + q * NP + p] = sum[r * NQ * NP + q * NP + p]
                                                    + A[r * NQ * NP + q * NP + s] * C4[s * NP + p];
            }
        for (q = 0; q < NQ; q++)
            for (p = 0; p < NP; p++)
                A[r * NQ * NP + q * NP + p] = sum[r * NQ * NP + q * NP + p];
    }
}

int main(void)
{
    float *A = malloc((size_t)NR * NQ * NP * sizeof(float));
    float *C4 = malloc((size_t)NP * NP * sizeof(float));
    float *sum = malloc((size_t)NR * NQ * NP * sizeof(float));
    double sa = 0.0;
    int i, j, k;

    if (!A || !C4 || !sum)
        return 1;
    for (i = 0; i < NR; i++)
        for (j = 0; j < NQ; j++)
            for (k = 0; k < NP; k++)
                A[(i * NQ + j) * NP + k] = ((float)i * j + k) / NP;
    for (i = 0; i < NP; i++)
        for (j = 0; j < NP; j++)
            C4[i * NP + j] = ((float)i * j) / NP;

    doitgen(A, C4, sum);

    for (i = 0; i < NR * NQ * NP; i++)
        sa += A[i];
    printf("validation/doitgen: A checksum = %.6f\n", sa);

    free(A); free(C4); free(sum);
    return 0;
}
