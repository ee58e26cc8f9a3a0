/* validation/adi.c - PolyBench/GPU 1.0 adi (CUDA/ADI/adi.cu): N = 1024,
 * TSTEPS = 1, block 256 x 1, every launch followed by a synchronize.  Per
 * time step the CUDA version launches three kernels over rows (thread x ->
 * i1, the sweep over i2 in each thread), then one kernel per i1 = 1..N-1
 * over columns (thread x -> i2), one more over the last row, and one per
 * i1 = 0..N-3 over columns: 2049 launches.
 * Exercises: a one-trip time loop; sequential loops (i1 of the column
 * sweeps) kept on the host with a launch per iteration; divisions. Flat
 * float pointers, no restrict. Held back: no measurement in the validation
 * data handed over. */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 1024
#endif
#ifndef TSTEPS
#define TSTEPS 1
#endif

void adi(const float *A, float *B, float *X)
{
    int t, i1, i2;
    for (t = 0; t < TSTEPS; t++) {
        for (i1 = 0; i1 < N; i1++)
            for (i2 = 1; i2 < N; i2++) {
                X[i1 * N + i2] = X[i1 * N + i2] - X[i1 * N + (i2 - 1)] * A[i1 * N + i2] / B[i1 * N + (i2 - 1)];
                B[i1 * N + i2] = B[i1 * N + i2] - A[i1 * N + i2] * A[i1 * N + i2] / B[i1 * N + (i2 - 1)];
            }
        for (i1 = 0; i1 < N; i1++)
            X[i1 * N + (N - 1)] = X[i1 * N + (N - 1)] / B[i1 * N + (N - 1)];
        for (i1 = 0; i1 < N; i1++)
            for (i2 = 0; i2 < N - 2; i2++)
                X[i1 * N + (N - i2 - 2)] = (X[i1 * N + (N - 2 - i2)] - X[i1 * N + (N - 2 - i2 - 1)]
                                            * A[i1 * N + (N - i2 - 3)]) / B[i1 * N + (N - 3 - i2)];
        for (i1 = 1; i1 < N; i1++)
            for (i2 = 0; i2 < N; i2++) {
                X[i1 * N + i2] = X[i1 * N + i2] - X[(i1 - 1) * N + i2] * A[i1 * N + i2] / B[(i1 - 1) * N + i2];
                B[i1 * N + i2] = B[i1 * N + i2] - A[i1 * N + i2] * A[i1 * N + i2] / B[(i1 - 1) * N + i2];
            }
        for (i2 = 0; i2 < N; i2++)
            X[(N - 1) * N + i2] = X[(N - 1) * N + i2] / B[(N - 1) * N + i2];
        for (i1 = 0; i1 < N - 2; i1++)
            for (i2 = 0; i2 < N; i2++)
                X[(N - 2 - i1) * N + i2] = (X[(N - 2 - i1) * N + i2] - X[(N - i1 - 3) * N + i2]
                                            * A[(N - 3 - i1) * N + i2]) / B[(N - 2 - i1) * N + i2];
    }
}

int main(void)
{
    float *A = malloc((size_t)N * N * sizeof(float));
    float *B = malloc((size_t)N * N * sizeof(float));
    float *X = malloc((size_t)N * N * sizeof(float));
    double sx = 0.0, sb = 0.0;
    int i, j;

    if (!A || !B || !X)
        return 1;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            X[i * N + j] = ((float)i * (j + 1) + 1) / N;
            A[i * N + j] = ((float)(i - 1) * (j + 4) + 2) / N;
            B[i * N + j] = ((float)(i + 3) * (j + 7) + 3) / N;
        }

    adi(A, B, X);

    for (i = 0; i < N * N; i++) {
        sx += X[i];
        sb += B[i];
    }
    printf("validation/adi: X checksum = %.6f, B checksum = %.6f\n", sx, sb);

    free(A); free(B); free(X);
    return 0;
}
