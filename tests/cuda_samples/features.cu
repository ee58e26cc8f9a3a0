// Assorted things emitted code uses: 3-D grids/blocks, template kernels with
// explicit arguments, NULL/int->size_t argument conversions, qualifiers,
// __device__ globals, vector types, CUDA's min/max and math intrinsics,
// device printf.
#include <cstring>
#include <vector>
#include "check.cuh"

__device__ unsigned long long d_visits;

__device__ __forceinline__ int clamp_add(int a, int b) { return min(a + b, 100); }

// Every thread of a 3-D grid of 3-D blocks records its linear id exactly once.
__global__ void __launch_bounds__(256) cover(int* hits, size_t total, const int* unused) {
  size_t bid = blockIdx.x + (size_t)gridDim.x * (blockIdx.y + (size_t)gridDim.y * blockIdx.z);
  size_t tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  size_t g = bid * (blockDim.x * blockDim.y * blockDim.z) + tid;
  if (unused == NULL && g < total) atomicAdd(&hits[g], 1);
  atomicAdd(&d_visits, 1ull);
}

#define LAUNCH_COVER(g, b, ...) \
  cover<<<g,                    \
          b>>>(__VA_ARGS__)

template <typename T, int SCALE>
__global__ void scale_vec4(const T* __restrict__ in, T* __restrict__ out, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) {
    float4 v = reinterpret_cast<const float4*>(in)[i];
    v.x *= SCALE; v.y *= SCALE; v.z *= SCALE; v.w *= SCALE;
    reinterpret_cast<float4*>(out)[i] = v;
  }
}

__global__ void intrinsics(float* f, int* k) {
  if (threadIdx.x != 0) return;
  f[0] = rsqrtf(16.0f);
  f[1] = __saturatef(1.7f);
  f[2] = __saturatef(-0.3f);
  f[3] = __fdividef(1.0f, 4.0f);
  f[4] = fmaxf(2.0f, max(1.5f, 3.0));  // CUDA's max(float, double) -> double
  f[5] = __ldg(&f[0]) + __expf(0.0f) + __fmaf_rn(2.0f, 3.0f, 1.0f);
  f[6] = sqrtf(2.25f) + powf(2.0f, 3.0f) + fabsf(-1.0f);
  k[0] = __float2int_rn(2.5f);   // round half to even -> 2
  k[1] = __float2int_rn(3.5f);   // -> 4
  k[2] = __popc(0xF0F0u) + 100 * __clz(1) + 10000 * __ffs(8);
  k[3] = (int)(__brev(1u) >> 28);  // 0x80000000 >> 28 = 8
  k[4] = clamp_add(60, 70) + (int)(min(-3, 2u) - 2u);  // 100 + 0: min(int, unsigned) is unsigned
  k[5] = warpSize;
  k[6] = (int)max(7ll, 3ll);
  printf("hello from block %d thread %d\n", (int)blockIdx.x, (int)threadIdx.x);
}

int main() {
  dim3 grid(2, 3, 4), block(4, 2, 2);
  const size_t total = 2 * 3 * 4 * 4 * 2 * 2;
  int* dhits;
  CHECK(cudaMalloc(&dhits, total * sizeof(int)));
  CHECK(cudaMemset(dhits, 0, total * sizeof(int)));
  unsigned long long zero = 0, visits = 0;
  CHECK(cudaMemcpyToSymbol(d_visits, &zero, sizeof(zero)));
  LAUNCH_COVER(grid, block, dhits, (int)total, NULL);  // launch inside a macro
  CHECK(cudaGetLastError());
  std::vector<int> hits(total);
  CHECK(cudaMemcpy(hits.data(), dhits, total * sizeof(int), cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < total; ++i) EXPECT(hits[i] == 1);
  CHECK(cudaMemcpyFromSymbol(&visits, d_visits, sizeof(visits)));
  EXPECT(visits == total);

  const int n = 1000;  // multiple of 4
  std::vector<float> in(n), out(n);
  for (int i = 0; i < n; ++i) in[i] = i - 300.0f;
  float *din, *dout;
  CHECK(cudaMalloc(&din, n * sizeof(float)));
  CHECK(cudaMalloc(&dout, n * sizeof(float)));
  CHECK(cudaMemcpy(din, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  scale_vec4<float, 3><<<(n / 4 + 63) / 64, 64>>>(din, dout, n / 4);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(out.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) EXPECT(out[i] == 3.0f * in[i]);

  float* df;
  int* dk;
  CHECK(cudaMalloc(&df, 8 * sizeof(float)));
  CHECK(cudaMalloc(&dk, 8 * sizeof(int)));
  intrinsics<<<1, 32>>>(df, dk);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  float f[8];
  int k[8];
  CHECK(cudaMemcpy(f, df, 7 * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(k, dk, 7 * sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT(f[0] == 0.25f);
  EXPECT(f[1] == 1.0f && f[2] == 0.0f);
  EXPECT(f[3] == 0.25f);
  EXPECT(f[4] == 3.0f);
  EXPECT(f[5] == 0.25f + 1.0f + 7.0f);
  EXPECT(f[6] == 1.5f + 8.0f + 1.0f);
  EXPECT(k[0] == 2 && k[1] == 4);
  EXPECT(k[2] == 8 + 100 * 31 + 10000 * 4);
  EXPECT(k[3] == 8);
  EXPECT(k[4] == 100);
  EXPECT(k[5] == 32);
  EXPECT(k[6] == 7);
  std::printf("OK\n");
  return 0;
}
