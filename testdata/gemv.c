/* gemv.c - matrix-vector product y = A * x.
 * Exercises: an array-element reduction y[i] += ... over the inner j loop
 * (i parallel, j a reduction into y[i]) after an initializing store
 * y[i] = 0 in the same i iteration; row-wise reads of A per i. */
#include <stdio.h>

#ifndef N
#define N 2048
#endif
#ifndef M
#define M 2048
#endif

static float A[N][M];
static float x[M];
static float y[N];

void gemv(void)
{
    int i, j;
    for (i = 0; i < N; i++) {
        y[i] = 0;
        for (j = 0; j < M; j++)
            y[i] += A[i][j] * x[j];
    }
}

int main(void)
{
    double sum = 0.0;
    int i, j;

    for (i = 0; i < N; i++)
        for (j = 0; j < M; j++)
            A[i][j] = (float)((i * 7 + j * 3) % 17) / 17.0f;
    for (j = 0; j < M; j++)
        x[j] = (float)((j * 5) % 11) / 11.0f;

    gemv();

    for (i = 0; i < N; i++)
        sum += y[i];
    printf("gemv: y checksum = %.6f\n", sum);
    return 0;
}
