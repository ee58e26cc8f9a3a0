/* reductions.c - several reduction kinds, one per function.
 * Exercises recognition of: max written as a guarded assignment
 * (if (a[i] > m) m = a[i]) and as m = fmaxf(m, a[i]); min; product
 * (p *= a[i]); a conditional count; and gesummv-like array-element
 * reductions, two accumulations (tmp[i], y[i]) in one j loop with i
 * parallel. */
#include <stdio.h>
#include <math.h>

#ifndef N
#define N 100000
#endif
#ifndef ROWS
#define ROWS 1024
#endif

static float a[N];
static float A[ROWS][ROWS], B[ROWS][ROWS], x[ROWS], y[ROWS], tmp[ROWS];

float max_if(int n, const float *v)
{
    float m = v[0];
    int i;
    for (i = 1; i < n; i++)
        if (v[i] > m)
            m = v[i];
    return m;
}

float max_fmaxf(int n, const float *v)
{
    float m = -INFINITY;
    int i;
    for (i = 0; i < n; i++)
        m = fmaxf(m, v[i]);
    return m;
}

float min_if(int n, const float *v)
{
    float m = v[0];
    int i;
    for (i = 1; i < n; i++)
        if (v[i] < m)
            m = v[i];
    return m;
}

float product(int n, const float *v)
{
    float p = 1.0f;
    int i;
    for (i = 0; i < n; i++)
        p *= v[i];
    return p;
}

int count_above(int n, const float *v, float threshold)
{
    int count = 0;
    int i;
    for (i = 0; i < n; i++)
        if (v[i] > threshold)
            count++;
    return count;
}

void gesummv_like(float alpha, float beta)
{
    int i, j;
    for (i = 0; i < ROWS; i++) {
        tmp[i] = 0.0f;
        y[i] = 0.0f;
        for (j = 0; j < ROWS; j++) {
            tmp[i] += A[i][j] * x[j];
            y[i] += B[i][j] * x[j];
        }
        y[i] = alpha * tmp[i] + beta * y[i];
    }
}

int main(void)
{
    double sy = 0.0, st = 0.0;
    int i, j;

    for (i = 0; i < N; i++)
        a[i] = 1.0f + (float)((i * 7) % 13 - 6) * 1e-4f;
    for (i = 0; i < ROWS; i++) {
        x[i] = (float)((i * 5) % 11) / 11.0f;
        for (j = 0; j < ROWS; j++) {
            A[i][j] = (float)((i * 7 + j * 3) % 17) / 17.0f;
            B[i][j] = (float)((i * 3 + j * 11) % 19) / 19.0f;
        }
    }

    printf("reductions: max_if = %.6f, max_fmaxf = %.6f, min = %.6f\n",
           (double)max_if(N, a), (double)max_fmaxf(N, a), (double)min_if(N, a));
    printf("reductions: product = %.6f, count = %d\n",
           (double)product(N, a), count_above(N, a, 1.0f));

    gesummv_like(1.5f, 1.2f);
    for (i = 0; i < ROWS; i++) {
        sy += y[i];
        st += tmp[i];
    }
    printf("reductions: y checksum = %.6f, tmp checksum = %.6f\n", sy, st);
    return 0;
}
