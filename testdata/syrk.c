/* syrk.c - symmetric rank-k update on the lower triangle (PolyBench syrk
 * style): C = beta*C + alpha*A*A^T for j <= i.
 * Exercises: a triangular nest (inner bound j <= i depends on the outer
 * index), in-place scaling followed by a k reduction into C[i][j], and
 * reads of A through two different rows A[i][k] and A[j][k]. */
#include <stdio.h>

#ifndef N
#define N 256
#endif
#ifndef M
#define M 200
#endif

static float A[N][M];
static float C[N][N];

void syrk(float alpha, float beta)
{
    int i, j, k;
    for (i = 0; i < N; i++)
        for (j = 0; j <= i; j++) {
            C[i][j] *= beta;
            for (k = 0; k < M; k++)
                C[i][j] += alpha * A[i][k] * A[j][k];
        }
}

int main(void)
{
    double sum = 0.0;
    int i, j;

    for (i = 0; i < N; i++)
        for (j = 0; j < M; j++)
            A[i][j] = (float)((i * 7 + j * 3) % 17) / 17.0f;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            C[i][j] = (float)((i * 5 + j * 11) % 13) / 13.0f;

    syrk(1.5f, 1.2f);

    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            sum += C[i][j];
    printf("syrk: C checksum = %.6f\n", sum);
    return 0;
}
