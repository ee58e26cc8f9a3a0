/* prefix_sum.c - inclusive prefix sum (scan), out[i] = out[i-1] + in[i].
 * Exercises: a loop-carried flow dependence at distance 1 (out[i] reads
 * the previous iteration's write): not parallel as written. */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 1000000
#endif

void prefix_sum(int n, const float *in, float *out)
{
    int i;
    out[0] = in[0];
    for (i = 1; i < n; i++)
        out[i] = out[i - 1] + in[i];
}

int main(void)
{
    float *in = malloc(N * sizeof(float));
    float *out = malloc(N * sizeof(float));
    double sum = 0.0;
    int i;

    if (!in || !out)
        return 1;
    for (i = 0; i < N; i++)
        in[i] = (float)((i * 7) % 17) / 170.0f;

    prefix_sum(N, in, out);

    for (i = 0; i < N; i++)
        sum += out[i];
    printf("prefix_sum: out checksum = %.6f, out[N-1] = %.6f\n",
           sum, (double)out[N - 1]);

    free(in);
    free(out);
    return 0;
}
