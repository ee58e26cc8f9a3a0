/* validation/convolution-2d.c - PolyBench/GPU 2DConvolution: a 3 x 3
 * constant-weighted stencil (NI = NJ = 4096, one launch, block 32 x 8,
 * thread (x, y) -> j = x, i = y, interior 0 < i < NI-1, 0 < j < NJ-1).
 * Exercises: model calibration for a memory-bound, fully parallel 2-D
 * stencil with nine overlapping reads per point and constant weights held
 * in local const scalars. Flat float pointers, no restrict. */
#include <stdio.h>
#include <stdlib.h>

#ifndef NI
#define NI 4096
#endif
#ifndef NJ
#define NJ 4096
#endif

void convolution2d(const float *A, float *B)
{
    const float c11 = +0.2f, c21 = +0.5f, c31 = -0.8f;
    const float c12 = -0.3f, c22 = +0.6f, c32 = -0.9f;
    const float c13 = +0.4f, c23 = +0.7f, c33 = +0.10f;
    int i, j;

    for (i = 1; i < NI - 1; i++)
        for (j = 1; j < NJ - 1; j++)
            B[i * NJ + j] =
                  c11 * A[(i - 1) * NJ + (j - 1)] + c12 * A[(i + 0) * NJ + (j - 1)]
                + c13 * A[(i + 1) * NJ + (j - 1)] + c21 * A[(i - 1) * NJ + (j + 0)]
                + c22 * A[(i + 0) * NJ + (j + 0)] + c23 * A[(i + 1) * NJ + (j + 0)]
                + c31 * A[(i - 1) * NJ + (j + 1)] + c32 * A[(i + 0) * NJ + (j + 1)]
                + c33 * A[(i + 1) * NJ + (j + 1)];
}

int main(void)
{
    float *A = malloc((size_t)NI * NJ * sizeof(float));
    float *B = malloc((size_t)NI * NJ * sizeof(float));
    double sum = 0.0;
    long i;

    if (!A || !B)
        return 1;
    for (i = 0; i < (long)NI * NJ; i++) {
        A[i] = (float)((i * 7 + (i / NJ) * 3) % 17) / 17.0f;
        B[i] = 0.0f;
    }

    convolution2d(A, B);

    for (i = 0; i < (long)NI * NJ; i++)
        sum += B[i];
    printf("validation/convolution-2d: B checksum = %.6f\n", sum);

    free(A);
    free(B);
    return 0;
}
