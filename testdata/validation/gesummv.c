/* validation/gesummv.c - PolyBench/GPU gesummv: y = alpha*A*x + beta*B*x
 * (N = 4096, one launch, block 256 x 1, thread x -> i).
 * Exercises: model calibration for a 1-D thread mapping where each thread
 * walks a whole row of A and of B (uncoalesced across threads), with two
 * array-element reductions (tmp[i], y[i]) over j in the same loop.
 * tmp and y are zeroed by the caller, as in the CUDA version, so the
 * nest is exactly the measured kernel. Flat float pointers, no restrict. */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 4096
#endif

void gesummv(float alpha, float beta, const float *A, const float *B,
             const float *x, float *y, float *tmp)
{
    int i, j;
    for (i = 0; i < N; i++) {
        for (j = 0; j < N; j++) {
            tmp[i] += A[i * N + j] * x[j];
            y[i] += B[i * N + j] * x[j];
        }
        y[i] = alpha * tmp[i] + beta * y[i];
    }
}

int main(void)
{
    float *A = malloc((size_t)N * N * sizeof(float));
    float *B = malloc((size_t)N * N * sizeof(float));
    float *x = malloc((size_t)N * sizeof(float));
    float *y = malloc((size_t)N * sizeof(float));
    float *tmp = malloc((size_t)N * sizeof(float));
    double sy = 0.0, st = 0.0;
    int i, j;

    if (!A || !B || !x || !y || !tmp)
        return 1;
    for (i = 0; i < N; i++) {
        x[i] = (float)(i % 11) / 11.0f;
        y[i] = 0.0f;
        tmp[i] = 0.0f;
        for (j = 0; j < N; j++) {
            A[i * N + j] = (float)((i * 7 + j * 3) % 17) / 17.0f;
            B[i * N + j] = (float)((i * 3 + j * 11) % 19) / 19.0f;
        }
    }

    gesummv(1.5f, 1.2f, A, B, x, y, tmp);

    for (i = 0; i < N; i++) {
        sy += y[i];
        st += tmp[i];
    }
    printf("validation/gesummv: y checksum = %.6f, tmp checksum = %.6f\n", sy, st);

    free(A); free(B); free(x); free(y); free(tmp);
    return 0;
}
