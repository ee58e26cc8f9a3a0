/* validation/2mm.c - PolyBench/GPU 2mm: D = alpha*A*B*C + beta*D, as two
 * naive kernels in sequence (NI = NJ = NK = NL = 1024, two launches, block
 * 32 x 8, thread (x, y) -> j = x, i = y).
 * Exercises: model calibration for two consecutive parallel 2-D nests, each
 * with a sequential k reduction into a global element; the second nest
 * reads tmp written by the first (a flow dependence between nests, none
 * inside either). Flat float pointers, no restrict.
 * At the default sizes this takes over 10 s on a CPU (strided B and C reads):
 * pass e.g. -DNI=256 -DNJ=256 -DNK=256 -DNL=256 for quick runs. */
#include <stdio.h>
#include <stdlib.h>

#ifndef NI
#define NI 1024
#endif
#ifndef NJ
#define NJ 1024
#endif
#ifndef NK
#define NK 1024
#endif
#ifndef NL
#define NL 1024
#endif

void mm2(float alpha, float beta, const float *A, const float *B,
         const float *C, float *D, float *tmp)
{
    int i, j, k;
    /* kernel 1: tmp = alpha * A * B */
    for (i = 0; i < NI; i++)
        for (j = 0; j < NJ; j++) {
            tmp[i * NJ + j] = 0.0f;
            for (k = 0; k < NK; k++)
                tmp[i * NJ + j] += alpha * A[i * NK + k] * B[k * NJ + j];
        }
    /* kernel 2: D = beta * D + tmp * C */
    for (i = 0; i < NI; i++)
        for (j = 0; j < NL; j++) {
            D[i * NL + j] *= beta;
            for (k = 0; k < NJ; k++)
                D[i * NL + j] += tmp[i * NJ + k] * C[k * NL + j];
        }
}

int main(void)
{
    float *A = malloc((size_t)NI * NK * sizeof(float));
    float *B = malloc((size_t)NK * NJ * sizeof(float));
    float *C = malloc((size_t)NJ * NL * sizeof(float));
    float *D = malloc((size_t)NI * NL * sizeof(float));
    float *tmp = malloc((size_t)NI * NJ * sizeof(float));
    double sd = 0.0, st = 0.0;
    int i, j;

    if (!A || !B || !C || !D || !tmp)
        return 1;
    for (i = 0; i < NI; i++)
        for (j = 0; j < NK; j++)
            A[i * NK + j] = (float)((i * 7 + j * 3) % 17) / 17.0f;
    for (i = 0; i < NK; i++)
        for (j = 0; j < NJ; j++)
            B[i * NJ + j] = (float)((i * 5 + j * 11) % 13) / 13.0f;
    for (i = 0; i < NJ; i++)
        for (j = 0; j < NL; j++)
            C[i * NL + j] = (float)((i * 2 + j * 9) % 11) / 11.0f;
    for (i = 0; i < NI; i++)
        for (j = 0; j < NL; j++)
            D[i * NL + j] = (float)((i * 3 + j * 2) % 7) / 7.0f;

    mm2(1.5f, 1.2f, A, B, C, D, tmp);

    for (i = 0; i < NI * NL; i++)
        sd += D[i];
    for (i = 0; i < NI * NJ; i++)
        st += tmp[i];
    printf("validation/2mm: D checksum = %.6f, tmp checksum = %.6f\n", sd, st);

    free(A); free(B); free(C); free(D); free(tmp);
    return 0;
}
