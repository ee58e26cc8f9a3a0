/* matmul_ptr.c - matrix multiplication on flat arrays, c = a * b.
 * Exercises: linearized subscripts a[i*n + k] (affine in the loop indices
 * but with a symbolic stride n), a local scalar accumulator privatized per
 * (i, j), and const / non-restrict pointer parameters. */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 256
#endif

void matmul(int n, const float *a, const float *b, float *c)
{
    int i, j, k;
    for (i = 0; i < n; i++) {
        for (j = 0; j < n; j++) {
            float sum = 0.0f;
            for (k = 0; k < n; k++)
                sum += a[i * n + k] * b[k * n + j];
            c[i * n + j] = sum;
        }
    }
}

int main(void)
{
    float *a = malloc((size_t)N * N * sizeof(float));
    float *b = malloc((size_t)N * N * sizeof(float));
    float *c = malloc((size_t)N * N * sizeof(float));
    double sum = 0.0;
    int i, j;

    if (!a || !b || !c)
        return 1;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            a[i * N + j] = (float)((i * 7 + j * 3) % 17) / 17.0f;
            b[i * N + j] = (float)((i * 5 + j * 11) % 13) / 13.0f;
        }

    matmul(N, a, b, c);

    for (i = 0; i < N * N; i++)
        sum += c[i];
    printf("matmul_ptr: c checksum = %.6f\n", sum);

    free(a);
    free(b);
    free(c);
    return 0;
}
