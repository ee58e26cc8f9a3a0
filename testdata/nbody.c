/* nbody.c - all-pairs n-body acceleration with a softening term.
 * Exercises: a math-library call (sqrtf) inside the nest, scalar
 * reductions (ax_i, ay_i, az_i) over the inner j loop with an outer
 * parallel i loop, many temporaries private to each iteration, and six
 * separate restrict-qualified float arrays (structure of arrays). */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>

#ifndef NBODIES
#define NBODIES 2048
#endif
#define EPS 0.01f

void accelerations(int n, const float *restrict x, const float *restrict y,
                   const float *restrict z, float *restrict ax,
                   float *restrict ay, float *restrict az)
{
    int i, j;
    for (i = 0; i < n; i++) {
        float axi = 0.0f, ayi = 0.0f, azi = 0.0f;
        for (j = 0; j < n; j++) {
            float dx = x[j] - x[i];
            float dy = y[j] - y[i];
            float dz = z[j] - z[i];
            float inv = 1.0f / sqrtf(dx * dx + dy * dy + dz * dz + EPS);
            float inv3 = inv * inv * inv;
            axi += dx * inv3;
            ayi += dy * inv3;
            azi += dz * inv3;
        }
        ax[i] = axi;
        ay[i] = ayi;
        az[i] = azi;
    }
}

int main(void)
{
    float *x = malloc(NBODIES * sizeof(float));
    float *y = malloc(NBODIES * sizeof(float));
    float *z = malloc(NBODIES * sizeof(float));
    float *ax = malloc(NBODIES * sizeof(float));
    float *ay = malloc(NBODIES * sizeof(float));
    float *az = malloc(NBODIES * sizeof(float));
    double sx = 0.0, sy = 0.0, sz = 0.0;
    int i;

    if (!x || !y || !z || !ax || !ay || !az)
        return 1;
    for (i = 0; i < NBODIES; i++) {
        x[i] = (float)((i * 7) % 17) / 17.0f;
        y[i] = (float)((i * 3) % 23) / 23.0f;
        z[i] = (float)((i * 11) % 29) / 29.0f;
    }

    accelerations(NBODIES, x, y, z, ax, ay, az);

    for (i = 0; i < NBODIES; i++) {
        sx += ax[i] * (float)(i % 7);
        sy += ay[i] * (float)(i % 5);
        sz += az[i] * (float)(i % 3);
    }
    printf("nbody: ax checksum = %.6f, ay checksum = %.6f, az checksum = %.6f\n",
           sx, sy, sz);

    free(x); free(y); free(z);
    free(ax); free(ay); free(az);
    return 0;
}
