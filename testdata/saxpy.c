/* saxpy.c - single-precision a*x + y.
 * Exercises: the simplest 1-D parallel loop; pointer parameters declared
 * restrict, so the analysis may assume x and y do not alias. */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 1000000
#endif

void saxpy(int n, float a, const float *restrict x, float *restrict y)
{
    int i;
    for (i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];
}

int main(void)
{
    float *x = malloc(N * sizeof(float));
    float *y = malloc(N * sizeof(float));
    double sum = 0.0;
    int i;

    if (!x || !y)
        return 1;
    for (i = 0; i < N; i++) {
        x[i] = (float)(i % 17) / 17.0f;
        y[i] = (float)((i * 7) % 13) / 13.0f;
    }

    saxpy(N, 2.5f, x, y);

    for (i = 0; i < N; i++)
        sum += y[i];
    printf("saxpy: y checksum = %.6f\n", sum);

    free(x);
    free(y);
    return 0;
}
