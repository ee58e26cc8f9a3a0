/* Shaped like c2gpu's own output (c2gpu/templates/prelude.cu.j2, kernel.cu.j2,
 * wrapper.cu.j2): C code compiled as C++ with the restrict/malloc shims, a
 * 2-D kernel, a reduction kernel (block tree + one atomic per block) and a
 * float max via the CAS-loop helper; no explicit #include <cuda_runtime.h>. */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <limits.h>

#define C2GPU_CHECK(call)                                                          \
  do {                                                                             \
    cudaError_t c2gpu_err = (call);                                                \
    if (c2gpu_err != cudaSuccess) {                                                \
      fprintf(stderr, "%s:%d: CUDA error in %s: %s\n", __FILE__, __LINE__, #call, \
              cudaGetErrorString(c2gpu_err));                                      \
      exit(EXIT_FAILURE);                                                          \
    }                                                                              \
  } while (0)

#ifndef restrict
#define restrict __restrict__
#endif
struct c2gpu_void_ptr {
  void *p;
  template <class T> operator T *() const { return static_cast<T *>(p); }
};
static inline c2gpu_void_ptr c2gpu_malloc(size_t n) { return {malloc(n)}; }
#define malloc(n) c2gpu_malloc(n)

__device__ static float c2gpu_atomic_max(float *a, float v) {
  int *p = (int *)a, old = *p, seen;
  do { seen = old; if (__int_as_float(seen) >= v) break; old = atomicCAS(p, seen, __float_as_int(v)); } while (old != seen);
  return __int_as_float(old);
}

/* c[i][j] = a[i][j] * 2 + b[j] */
__global__ void nest0_k0(const float *restrict a, const float *restrict b, float *restrict c, int n, int m)
{
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  const int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (!(i < n && j < m))
    return;
  c[i * m + j] = a[i * m + j] * 2.0f + b[j];
}

/* sum += c[i][j]; mx = max(mx, c[i][j]) */
__global__ void nest1_k0(const float *restrict c, double *sum, float *mx, int n, int m)
{
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  const int i = blockIdx.y * blockDim.y + threadIdx.y;
  double part_sum = 0.0;
  float part_mx = -INFINITY;
  if (i < n && j < m) {
    part_sum = c[i * m + j];
    part_mx = c[i * m + j];
  }
  /* block-level tree reduction, then one atomic per block */
  const int c2gpu_tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  __shared__ double c2gpu_red_sum[256];
  c2gpu_red_sum[c2gpu_tid] = part_sum;
  __shared__ float c2gpu_red_mx[256];
  c2gpu_red_mx[c2gpu_tid] = part_mx;
  __syncthreads();
  for (int c2gpu_s = 128; c2gpu_s > 0; c2gpu_s >>= 1) {
    if (c2gpu_tid < c2gpu_s) {
      c2gpu_red_sum[c2gpu_tid] = c2gpu_red_sum[c2gpu_tid] + c2gpu_red_sum[c2gpu_tid + c2gpu_s];
      c2gpu_red_mx[c2gpu_tid] = fmaxf(c2gpu_red_mx[c2gpu_tid], c2gpu_red_mx[c2gpu_tid + c2gpu_s]);
    }
    __syncthreads();
  }
  if (c2gpu_tid == 0) {
    atomicAdd(sum, c2gpu_red_sum[0]);
    c2gpu_atomic_max(mx, c2gpu_red_mx[0]);
  }
}

static void nest_wrapper(int n, int m, const float *restrict a, const float *restrict b, float *restrict c,
                         double *sum, float *mx)
{
  if (!(n > 0 && m > 0))
    return;
  float *d_a = NULL, *d_b = NULL, *d_c = NULL;
  C2GPU_CHECK(cudaMalloc((void **)&d_a, (size_t)(n * m) * sizeof(float)));
  C2GPU_CHECK(cudaMemcpy(d_a + 0, a + 0, (size_t)(n * m) * sizeof(float), cudaMemcpyHostToDevice));
  C2GPU_CHECK(cudaMalloc((void **)&d_b, (size_t)(m) * sizeof(float)));
  C2GPU_CHECK(cudaMemcpy(d_b + 0, b + 0, (size_t)(m) * sizeof(float), cudaMemcpyHostToDevice));
  C2GPU_CHECK(cudaMalloc((void **)&d_c, (size_t)(n * m) * sizeof(float)));
  double *d_sum = NULL;
  C2GPU_CHECK(cudaMalloc((void **)&d_sum, sizeof(double)));
  C2GPU_CHECK(cudaMemcpy(d_sum, sum, sizeof(double), cudaMemcpyHostToDevice));
  float *d_mx = NULL;
  C2GPU_CHECK(cudaMalloc((void **)&d_mx, sizeof(float)));
  C2GPU_CHECK(cudaMemcpy(d_mx, mx, sizeof(float), cudaMemcpyHostToDevice));
  if (1) {
    dim3 c2gpu_grid((m + 31) / 32, (n + 7) / 8, 1), c2gpu_block(32, 8, 1);
    nest0_k0<<<c2gpu_grid, c2gpu_block>>>(d_a, d_b, d_c, n, m);
    C2GPU_CHECK(cudaGetLastError());
  }
  if (1) {
    dim3 c2gpu_grid((m + 31) / 32, (n + 7) / 8, 1), c2gpu_block(32, 8, 1);
    nest1_k0<<<c2gpu_grid, c2gpu_block>>>(d_c, d_sum, d_mx, n, m);
    C2GPU_CHECK(cudaGetLastError());
  }
  C2GPU_CHECK(cudaDeviceSynchronize());
  C2GPU_CHECK(cudaMemcpy(c + 0, d_c + 0, (size_t)(n * m) * sizeof(float), cudaMemcpyDeviceToHost));
  C2GPU_CHECK(cudaMemcpy(sum, d_sum, sizeof(double), cudaMemcpyDeviceToHost));
  C2GPU_CHECK(cudaFree(d_sum));
  C2GPU_CHECK(cudaMemcpy(mx, d_mx, sizeof(float), cudaMemcpyDeviceToHost));
  C2GPU_CHECK(cudaFree(d_mx));
  C2GPU_CHECK(cudaFree(d_a));
  C2GPU_CHECK(cudaFree(d_b));
  C2GPU_CHECK(cudaFree(d_c));
}

int main(void)
{
  int n = 37, m = 70;
  float *a = malloc(sizeof(float) * n * m), *b = malloc(sizeof(float) * m), *c = malloc(sizeof(float) * n * m);
  for (int i = 0; i < n * m; i++) a[i] = (float)(i % 11) - 5.0f;
  for (int j = 0; j < m; j++) b[j] = (float)(j % 3);
  double sum = 0.0;
  float mx = -INFINITY;
  nest_wrapper(n, m, a, b, c, &sum, &mx);
  double ref_sum = 0.0;
  float ref_mx = -INFINITY;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      float v = a[i * m + j] * 2.0f + b[j];
      if (c[i * m + j] != v) {
        printf("FAIL: c[%d][%d] = %f, expected %f\n", i, j, c[i * m + j], v);
        return 1;
      }
      ref_sum += v;
      ref_mx = fmaxf(ref_mx, v);
    }
  if (sum != ref_sum || mx != ref_mx) {
    printf("FAIL: sum %f max %f, expected %f %f\n", sum, mx, ref_sum, ref_mx);
    return 1;
  }
  free(a);
  free(b);
  free(c);
  printf("OK\n");
  return 0;
}
