/* validation/convolution-3d.c - PolyBench/GPU 1.0 3D convolution
 * (CUDA/3DCONV/3DConvolution.cu): NI = NJ = NK = 256, block 32 x 8.  The
 * CUDA version keeps the i loop on the host and launches one kernel per i
 * (254 launches, back to back, one synchronize after the last); thread
 * (x, y) -> k = x, j = y, 0 < j < NJ-1, 0 < k < NK-1.  The 15 weighted
 * neighbours are the CUDA kernel's (several repeat the same element).
 * Exercises: a parallel loop kept on the host with a launch per iteration
 * (the validation case forces map j, k); a memory-bound 3-D stencil. Flat
 * float pointers, no restrict. Held back: no measurement in the validation
 * data handed over. */
#include <stdio.h>
#include <stdlib.h>

#ifndef NI
#define NI 256
#endif
#ifndef NJ
#define NJ 256
#endif
#ifndef NK
#define NK 256
#endif

#define AT(a, i, j, k) a[(i) * (NJ * NK) + (j) * NK + (k)]

void conv3d(const float *A, float *B)
{
    int i, j, k;
    for (i = 1; i < NI - 1; ++i)
        for (j = 1; j < NJ - 1; ++j)
            for (k = 1; k < NK - 1; ++k)
                AT(B, i, j, k) = 2.0f * AT(A, i - 1, j - 1, k - 1) + 4.0f * AT(A, i + 1, j - 1, k - 1)
                               + 5.0f * AT(A, i - 1, j - 1, k - 1) + 7.0f * AT(A, i + 1, j - 1, k - 1)
                               - 8.0f * AT(A, i - 1, j - 1, k - 1) + 10.0f * AT(A, i + 1, j - 1, k - 1)
                               - 3.0f * AT(A, i, j - 1, k) + 6.0f * AT(A, i, j, k)
                               - 9.0f * AT(A, i, j + 1, k) + 2.0f * AT(A, i - 1, j - 1, k + 1)
                               + 4.0f * AT(A, i + 1, j - 1, k + 1) + 5.0f * AT(A, i - 1, j, k + 1)
                               + 7.0f * AT(A, i + 1, j, k + 1) - 8.0f * AT(A, i - 1, j + 1, k + 1)
                               + 10.0f * AT(A, i + 1, j + 1, k + 1);
}

int main(void)
{
    float *A = malloc((size_t)NI * NJ * NK * sizeof(float));
    float *B = malloc((size_t)NI * NJ * NK * sizeof(float));
    double sb = 0.0;
    int i, j, k;

    if (!A || !B)
        return 1;
    for (i = 0; i < NI; i++)
        for (j = 0; j < NJ; j++)
            for (k = 0; k < NK; k++) {
                AT(A, i, j, k) = (float)(i % 12 + 2 * (j % 7) + 3 * (k % 13));
                AT(B, i, j, k) = 0.0f;
            }

    conv3d(A, B);

    for (i = 0; i < NI * NJ * NK; i++)
        sb += B[i];
    printf("validation/convolution-3d: B checksum = %.6f\n", sb);

    free(A); free(B);
    return 0;
}
