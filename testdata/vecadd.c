/* vecadd.c - element-wise vector addition c = a + b.
 * Exercises: a 1-D loop over plain (non-restrict) pointer parameters. The
 * loop is parallel only if c does not overlap a or b, which the analysis
 * cannot prove from this function alone (may-alias). */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 1000000
#endif

void vecadd(int n, const float *a, const float *b, float *c)
{
    int i;
    for (i = 0; i < n; i++)
        c[i] = a[i] + b[i];
}

int main(void)
{
    float *a = malloc(N * sizeof(float));
    float *b = malloc(N * sizeof(float));
    float *c = malloc(N * sizeof(float));
    double sum = 0.0;
    int i;

    if (!a || !b || !c)
        return 1;
    for (i = 0; i < N; i++) {
        a[i] = (float)((i * 3) % 11) / 11.0f;
        b[i] = (float)((i * 5) % 19) / 19.0f;
    }

    vecadd(N, a, b, c);

    for (i = 0; i < N; i++)
        sum += c[i];
    printf("vecadd: c checksum = %.6f\n", sum);

    free(a);
    free(b);
    free(c);
    return 0;
}
