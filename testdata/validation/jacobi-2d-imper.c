/* validation/jacobi-2d-imper.c - PolyBench/GPU jacobi-2d-imper: two naive
 * kernels per time step (N = 1000, TSTEPS = 20, 40 launches, block 32 x 8,
 * thread (x, y) -> j = x, i = y, 1 <= i, j < N-1).
 * Exercises: model calibration where launch overhead dominates (small
 * kernels, many launches); a sequential time loop around two parallel 2-D
 * nests. Flat float pointers, no restrict. */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 1000
#endif
#ifndef TSTEPS
#define TSTEPS 20
#endif

void jacobi2d(float *A, float *B)
{
    int t, i, j;
    for (t = 0; t < TSTEPS; t++) {
        for (i = 1; i < N - 1; i++)
            for (j = 1; j < N - 1; j++)
                B[i * N + j] = 0.2f * (A[i * N + j] + A[i * N + (j - 1)]
                                       + A[i * N + (j + 1)] + A[(i + 1) * N + j]
                                       + A[(i - 1) * N + j]);
        for (i = 1; i < N - 1; i++)
            for (j = 1; j < N - 1; j++)
                A[i * N + j] = B[i * N + j];
    }
}

int main(void)
{
    float *A = malloc((size_t)N * N * sizeof(float));
    float *B = malloc((size_t)N * N * sizeof(float));
    double sa = 0.0, sb = 0.0;
    int i, j;

    if (!A || !B)
        return 1;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            A[i * N + j] = ((float)i * (j + 2) + 2) / N;
            B[i * N + j] = ((float)i * (j + 3) + 3) / N;
        }

    jacobi2d(A, B);

    for (i = 0; i < N * N; i++) {
        sa += A[i];
        sb += B[i];
    }
    printf("validation/jacobi-2d-imper: A checksum = %.6f, B checksum = %.6f\n", sa, sb);

    free(A);
    free(B);
    return 0;
}
