/* validation/mvt.c - PolyBench/GPU 1.0 mvt (CUDA/MVT/mvt.cu): N = 4096,
 * block 32 x 8 on a 1-D grid of ceil(N / 32) blocks (the 8 rows of a block
 * compute the same element); the two kernels are launched back to back
 * and synchronized once after both.  Kernel 1, thread x -> i: x1[i] +=
 * a[i][j] * y_1[j] over j (a row walk); kernel 2, thread x -> i: x2[i] +=
 * a[j][i] * y_2[j] over j (a column walk).  Both accumulate into a global
 * element.
 * Exercises: row-walk and column-walk reductions on a global element; back
 * to back launches. Flat float pointers, no restrict. Held back: no
 * measurement in the validation data handed over. */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 4096
#endif

void mvt(const float *a, float *x1, float *x2, const float *y_1, const float *y_2)
{
    int i, j;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            x1[i] = x1[i] + a[i * N + j] * y_1[j];
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            x2[i] = x2[i] + a[j * N + i] * y_2[j];
}

int main(void)
{
    float *a = malloc((size_t)N * N * sizeof(float));
    float *x1 = malloc((size_t)N * sizeof(float));
    float *x2 = malloc((size_t)N * sizeof(float));
    float *y_1 = malloc((size_t)N * sizeof(float));
    float *y_2 = malloc((size_t)N * sizeof(float));
    double s1 = 0.0, s2 = 0.0;
    int i, j;

    if (!a || !x1 || !x2 || !y_1 || !y_2)
        return 1;
    for (i = 0; i < N; i++) {
        x1[i] = (float)i / N;
        x2[i] = ((float)i + 1) / N;
        y_1[i] = ((float)i + 3) / N;
        y_2[i] = ((float)i + 4) / N;
        for (j = 0; j < N; j++)
            a[i * N + j] = ((float)i * j) / N;
    }

    mvt(a, x1, x2, y_1, y_2);

    for (i = 0; i < N; i++) {
        s1 += x1[i];
        s2 += x2[i];
    }
    printf("validation/mvt: x1 checksum = %.6f, x2 checksum = %.6f\n", s1, s2);

    free(a); free(x1); free(x2); free(y_1); free(y_2);
    return 0;
}
