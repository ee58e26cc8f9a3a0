/* histogram.c - histogram of byte values, hist[data[i]]++.
 * Exercises: an indirect (data-dependent, non-affine) write subscript; two
 * iterations may hit the same bin, so the loop is only parallel with
 * atomic updates or privatized histograms. */
#include <stdio.h>

#ifndef N
#define N 1000000
#endif
#ifndef BINS
#define BINS 256
#endif

static unsigned char data[N];
static int hist[BINS];

void histogram(void)
{
    int i;
    for (i = 0; i < BINS; i++)
        hist[i] = 0;
    for (i = 0; i < N; i++)
        hist[data[i]]++;
}

int main(void)
{
    long sum = 0;
    int i;

    for (i = 0; i < N; i++)
        data[i] = (unsigned char)((i * 7 + i / 5) % BINS);

    histogram();

    for (i = 0; i < BINS; i++)
        sum += (long)hist[i] * (i + 1);
    printf("histogram: hist checksum = %ld (hist[0] = %d, hist[%d] = %d)\n",
           sum, hist[0], BINS - 1, hist[BINS - 1]);
    return 0;
}
