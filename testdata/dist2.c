/* dist2.c - dependences at a distance other than 1, and on the inner loop only.
 * Exercises: (1) a[i] = a[i-2] + b[i]: flow dependence at distance 2 (the
 * loop is not parallel, though even and odd iterations form two independent
 * chains); (2) A[i][j] = A[i][j-1]*0.5 + B[i][j]: the i loop is parallel,
 * the inner j loop carries a distance-1 dependence. */
#include <stdio.h>

#ifndef N
#define N 100000
#endif
#ifndef ROWS
#define ROWS 512
#endif
#ifndef M
#define M 512
#endif

static float a[N], b[N];
static float A[ROWS][M], B[ROWS][M];

void recur2(void)
{
    int i;
    for (i = 2; i < N; i++)
        a[i] = a[i - 2] + b[i];
}

void row_recurrence(void)
{
    int i, j;
    for (i = 0; i < ROWS; i++)
        for (j = 1; j < M; j++)
            A[i][j] = A[i][j - 1] * 0.5f + B[i][j];
}

int main(void)
{
    double sa = 0.0, sA = 0.0;
    int i, j;

    for (i = 0; i < N; i++) {
        a[i] = (float)(i % 3);
        b[i] = (float)((i * 7) % 17) / 1700.0f;
    }
    for (i = 0; i < ROWS; i++)
        for (j = 0; j < M; j++) {
            A[i][j] = (float)((i * 3 + j) % 5) / 5.0f;
            B[i][j] = (float)((i * 7 + j * 3) % 17) / 17.0f;
        }

    recur2();
    row_recurrence();

    for (i = 0; i < N; i++)
        sa += a[i];
    for (i = 0; i < ROWS; i++)
        for (j = 0; j < M; j++)
            sA += A[i][j];
    printf("dist2: a checksum = %.6f, A checksum = %.6f\n", sa, sA);
    return 0;
}
