/* validation/fdtd-2d.c - PolyBench/GPU fdtd-2d: three naive kernels per time
 * step (NX = NY = 2048, TMAX = 500, 1500 launches, block 32 x 8, thread
 * (x, y) -> j = x, i = y).
 * Exercises: model calibration for many small launches; a time loop around
 * three parallel 2-D nests, a guarded statement (i == 0) reading fict[t]
 * (indexed by the time loop), and shifted neighbour reads (i-1, j-1, i+1,
 * j+1) that create dependences between the nests but not inside them.
 * At the default sizes this takes several seconds on a CPU: pass e.g.
 * -DNX=256 -DNY=256 -DTMAX=50 for quick runs. */
#include <stdio.h>
#include <stdlib.h>

#ifndef NX
#define NX 2048
#endif
#ifndef NY
#define NY 2048
#endif
#ifndef TMAX
#define TMAX 500
#endif

void fdtd2d(const float *fict, float *ex, float *ey, float *hz)
{
    int t, i, j;
    for (t = 0; t < TMAX; t++) {
        for (i = 0; i < NX; i++)
            for (j = 0; j < NY; j++) {
                if (i == 0)
                    ey[i * NY + j] = fict[t];
                else
                    ey[i * NY + j] -= 0.5f * (hz[i * NY + j] - hz[(i - 1) * NY + j]);
            }
        for (i = 0; i < NX; i++)
            for (j = 1; j < NY; j++)
                ex[i * NY + j] -= 0.5f * (hz[i * NY + j] - hz[i * NY + (j - 1)]);
        for (i = 0; i < NX - 1; i++)
            for (j = 0; j < NY - 1; j++)
                hz[i * NY + j] -= 0.7f * (ex[i * NY + (j + 1)] - ex[i * NY + j]
                                          + ey[(i + 1) * NY + j] - ey[i * NY + j]);
    }
}

int main(void)
{
    float *fict = malloc((size_t)TMAX * sizeof(float));
    float *ex = malloc((size_t)NX * NY * sizeof(float));
    float *ey = malloc((size_t)NX * NY * sizeof(float));
    float *hz = malloc((size_t)NX * NY * sizeof(float));
    double sx = 0.0, sy = 0.0, sz = 0.0;
    int i, j;

    if (!fict || !ex || !ey || !hz)
        return 1;
    for (i = 0; i < TMAX; i++)
        fict[i] = (float)i;
    for (i = 0; i < NX; i++)
        for (j = 0; j < NY; j++) {
            ex[i * NY + j] = ((float)i * (j + 1) + 1) / NX;
            ey[i * NY + j] = ((float)(i - 1) * (j + 2) + 2) / NX;
            hz[i * NY + j] = ((float)(i - 9) * (j + 4) + 3) / NX;
        }

    fdtd2d(fict, ex, ey, hz);

    for (i = 0; i < NX * NY; i++) {
        sx += ex[i];
        sy += ey[i];
        sz += hz[i];
    }
    printf("validation/fdtd-2d: ex checksum = %.6f, ey checksum = %.6f, hz checksum = %.6f\n",
           sx, sy, sz);

    free(fict); free(ex); free(ey); free(hz);
    return 0;
}
