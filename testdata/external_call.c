/* external_call.c - a loop that calls a function with hidden side effects.
 * Exercises: an opaque call in the loop body. sensor_read is declared
 * before use and defined only at the bottom of the file; its body updates
 * global state (a call counter), so iterations are not independent and the
 * call has no device version: the loop must not be ported as is. */
#include <stdio.h>

#ifndef N
#define N 100000
#endif

extern double sensor_read(int channel);

static double scale[N];
static double out[N];

void sample_all(int n)
{
    int i;
    for (i = 0; i < n; i++)
        out[i] = sensor_read(i) * scale[i];
}

int main(void)
{
    double sum = 0.0;
    int i;

    for (i = 0; i < N; i++)
        scale[i] = 1.0 + (double)(i % 10) / 10.0;

    sample_all(N);

    for (i = 0; i < N; i++)
        sum += out[i];
    printf("external_call: out checksum = %.6f\n", sum);
    return 0;
}

/* Defined after its use: each call advances a global counter, and the value
 * returned depends on how many calls came before. */
static long sensor_calls = 0;

double sensor_read(int channel)
{
    sensor_calls++;
    return (double)((sensor_calls * 31 + channel) % 97) / 97.0;
}
