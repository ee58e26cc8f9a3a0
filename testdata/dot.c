/* dot.c - dot product of two float vectors.
 * Exercises: a scalar sum reduction (sum += a[i] * b[i]) into a local double
 * accumulator that is returned; the loop is parallel only as a reduction. */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 1000000
#endif

double dot(int n, const float *a, const float *b)
{
    double sum = 0.0;
    int i;
    for (i = 0; i < n; i++)
        sum += a[i] * b[i];
    return sum;
}

int main(void)
{
    float *a = malloc(N * sizeof(float));
    float *b = malloc(N * sizeof(float));
    double result;
    int i;

    if (!a || !b)
        return 1;
    for (i = 0; i < N; i++) {
        a[i] = (float)((i * 7) % 17) / 17.0f;
        b[i] = (float)((i * 3) % 23) / 23.0f;
    }

    result = dot(N, a, b);
    printf("dot: result = %.6f\n", result);

    free(a);
    free(b);
    return 0;
}
