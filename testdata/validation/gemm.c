/* validation/gemm.c - PolyBench/GPU gemm, sequential C version of the naive
 * CUDA kernel in /work/shared/validation (NI = NJ = NK = 512, one launch,
 * block 32 x 8, thread (x, y) -> j = x, i = y).
 * Exercises: model calibration. i and j are the parallel loops mapped to
 * threads; k is a sequential reduction into the global element C[i][j]
 * (a load and a store per k iteration in the naive CUDA port). Flat float
 * pointers indexed i * WIDTH + j, no restrict. */
#include <stdio.h>
#include <stdlib.h>

#ifndef NI
#define NI 512
#endif
#ifndef NJ
#define NJ 512
#endif
#ifndef NK
#define NK 512
#endif

void gemm(float alpha, float beta, const float *A, const float *B, float *C)
{
    int i, j, k;
    for (i = 0; i < NI; i++)
        for (j = 0; j < NJ; j++) {
            C[i * NJ + j] *= beta;
            for (k = 0; k < NK; k++)
                C[i * NJ + j] += alpha * A[i * NK + k] * B[k * NJ + j];
        }
}

int main(void)
{
    float *A = malloc((size_t)NI * NK * sizeof(float));
    float *B = malloc((size_t)NK * NJ * sizeof(float));
    float *C = malloc((size_t)NI * NJ * sizeof(float));
    double sum = 0.0;
    int i, j;

    if (!A || !B || !C)
        return 1;
    for (i = 0; i < NI; i++)
        for (j = 0; j < NK; j++)
            A[i * NK + j] = (float)((i * 7 + j * 3) % 17) / 17.0f;
    for (i = 0; i < NK; i++)
        for (j = 0; j < NJ; j++)
            B[i * NJ + j] = (float)((i * 5 + j * 11) % 13) / 13.0f;
    for (i = 0; i < NI; i++)
        for (j = 0; j < NJ; j++)
            C[i * NJ + j] = (float)((i * 3 + j * 2) % 7) / 7.0f;

    gemm(1.5f, 1.2f, A, B, C);

    for (i = 0; i < NI * NJ; i++)
        sum += C[i];
    printf("validation/gemm: C checksum = %.6f\n", sum);

    free(A);
    free(B);
    free(C);
    return 0;
}
