/* gauss_seidel.c - in-place Gauss-Seidel 5-point stencil sweeps.
 * Exercises: dependences carried by both loops. A[i][j] reads A[i-1][j]
 * and A[i][j-1] already updated in this sweep (flow, distance 1 on i and
 * on j) and A[i+1][j], A[i][j+1] not yet updated (anti): neither i nor j is
 * parallel as written; the port runs fronts i + j (a wavefront) instead. */
#include <stdio.h>

#ifndef N
#define N 512
#endif
#ifndef TSTEPS
#define TSTEPS 10
#endif

static float A[N][N];

void gauss_seidel(void)
{
    int t, i, j;
    for (t = 0; t < TSTEPS; t++)
        for (i = 1; i < N - 1; i++)
            for (j = 1; j < N - 1; j++)
                A[i][j] = 0.2f * (A[i - 1][j] + A[i][j - 1] + A[i][j]
                                  + A[i][j + 1] + A[i + 1][j]);
}

int main(void)
{
    double sum = 0.0;
    int i, j;

    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            A[i][j] = (float)((i * 7 + j * 3) % 17) / 17.0f;

    gauss_seidel();

    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            sum += A[i][j] * (float)(1 + (i + j) % 3);
    printf("gauss_seidel: A checksum = %.6f\n", sum);
    return 0;
}
