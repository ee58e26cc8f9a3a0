/* validation/syrk.c - PolyBench/GPU syrk: C = alpha*A*A^T + beta*C over the
 * FULL square C (NI = NJ = 1024, one launch, block 32 x 8, thread (x, y) ->
 * j = x, i = y, both < NI). Unlike testdata/syrk.c this is not triangular.
 * Exercises: model calibration; a parallel i, j nest with a k reduction
 * that reads two rows of A (A[i][k] and A[j][k], the latter strided across
 * neighbouring threads). Flat float pointers, no restrict. */
#include <stdio.h>
#include <stdlib.h>

#ifndef NI
#define NI 1024
#endif
#ifndef NJ
#define NJ 1024
#endif

void syrk(float alpha, float beta, const float *A, float *C)
{
    int i, j, k;
    for (i = 0; i < NI; i++)
        for (j = 0; j < NI; j++) {
            C[i * NI + j] *= beta;
            for (k = 0; k < NJ; k++)
                C[i * NI + j] += alpha * A[i * NJ + k] * A[j * NJ + k];
        }
}

int main(void)
{
    float *A = malloc((size_t)NI * NJ * sizeof(float));
    float *C = malloc((size_t)NI * NI * sizeof(float));
    double sum = 0.0;
    int i, j;

    if (!A || !C)
        return 1;
    for (i = 0; i < NI; i++)
        for (j = 0; j < NJ; j++)
            A[i * NJ + j] = (float)((i * 7 + j * 3) % 17) / 17.0f;
    for (i = 0; i < NI; i++)
        for (j = 0; j < NI; j++)
            C[i * NI + j] = (float)((i * 5 + j * 11) % 13) / 13.0f;

    syrk(1.5f, 1.2f, A, C);

    for (i = 0; i < NI * NI; i++)
        sum += C[i];
    printf("validation/syrk: C checksum = %.6f\n", sum);

    free(A);
    free(C);
    return 0;
}
