/* may_alias.c - a loop that is parallel only if its pointers do not alias.
 * Exercises: shift_add looks like a trivially parallel 1-D loop, but main
 * calls it with overlapping pointers (dst = buf + 1, src = buf), which turns
 * it into a running sum: dst[i] = src[i] + 1 reads the element written by
 * the previous iteration. Porting it without an alias check changes the
 * result. A second, non-overlapping call is included for contrast. */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 100000
#endif

void shift_add(int n, float *dst, const float *src)
{
    int i;
    for (i = 0; i < n; i++)
        dst[i] = src[i] + 1.0f;
}

int main(void)
{
    float *buf = malloc(N * sizeof(float));
    float *other = malloc(N * sizeof(float));
    double s1 = 0.0, s2 = 0.0;
    int i;

    if (!buf || !other)
        return 1;
    for (i = 0; i < N; i++)
        buf[i] = (float)((i * 7) % 17) / 17.0f;

    /* disjoint: other[i] = buf[i] + 1 */
    shift_add(N, other, buf);
    /* overlapping: buf[i+1] = buf[i] + 1, so buf[i] = buf[0] + i */
    shift_add(N - 1, buf + 1, buf);

    for (i = 0; i < N; i++) {
        s1 += other[i];
        s2 += buf[i];
    }
    printf("may_alias: other checksum = %.6f, buf checksum = %.6f, buf[N-1] = %.1f\n",
           s1, s2, (double)buf[N - 1]);

    free(buf);
    free(other);
    return 0;
}
