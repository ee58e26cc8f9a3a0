// (c) block tree reduction in static __shared__ memory, one atomicAdd(float)
// per block, plus __syncthreads_count/and/or.  With argument "racy" the
// reduction runs WITHOUT barriers and the program prints the (wrong) sum.
#include <cstring>
#include <vector>
#include "check.cuh"

#define BS 256

__global__ void block_sum(const float* in, float* total, int n) {
  __shared__ float s[BS];
  unsigned t = threadIdx.x;
  int i = blockIdx.x * BS * 2 + t;
  float v = 0.0f;
  if (i < n) v += in[i];
  if (i + BS < n) v += in[i + BS];
  s[t] = v;
  __syncthreads();
  for (unsigned st = BS / 2; st > 0; st >>= 1) {
    if (t < st) s[t] += s[t + st];
    __syncthreads();
  }
  if (t == 0) atomicAdd(total, s[0]);
}

__global__ void block_sum_racy(const float* in, float* total, int n) {
  __shared__ float s[BS];
  unsigned t = threadIdx.x;
  int i = blockIdx.x * BS * 2 + t;
  float v = 0.0f;
  if (i < n) v += in[i];
  if (i + BS < n) v += in[i + BS];
  s[t] = v;
  for (unsigned st = BS / 2; st > 0; st >>= 1)
    if (t < st) s[t] += s[t + st];
  if (t == 0) atomicAdd(total, s[0]);
}

// Per block b: pred = all in-range threads (b%3==0), nonzero inputs (b%3==1)
// or nobody (b%3==2); counts[b] = #pred, flags[b] = and | (or << 1).
__device__ __host__ int pred_of(const float* in, int i, int n, int b) {
  if (i >= n) return 0;
  return b % 3 == 0 ? 1 : b % 3 == 1 ? in[i] != 0.0f : 0;
}
__global__ void block_count(const float* in, int* counts, int* flags, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int nz = pred_of(in, i, n, blockIdx.x);
  int c = __syncthreads_count(nz);
  int all = __syncthreads_and(nz);
  int any = __syncthreads_or(nz);
  if (threadIdx.x == 0) {
    counts[blockIdx.x] = c;
    flags[blockIdx.x] = all | (any << 1);
  }
}

int main(int argc, char** argv) {
  const bool racy = argc > 1 && std::strcmp(argv[1], "racy") == 0;
  const int n = 1000001;
  std::vector<float> h(n);
  long long expect = 0;
  for (int i = 0; i < n; ++i) {
    h[i] = float(i % 7);  // integer partial sums < 2^24: exact in any order
    expect += i % 7;
  }
  float *din, *dtotal;
  CHECK(cudaMalloc(&din, n * sizeof(float)));
  CHECK(cudaMalloc(&dtotal, sizeof(float)));
  CHECK(cudaMemcpy(din, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(dtotal, 0, sizeof(float)));
  int blocks = (n + 2 * BS - 1) / (2 * BS);
  if (racy) block_sum_racy<<<blocks, BS>>>(din, dtotal, n);
  else block_sum<<<blocks, BS>>>(din, dtotal, n);
  CHECK(cudaGetLastError());
  float total = 0.0f;
  CHECK(cudaMemcpy(&total, dtotal, sizeof(float), cudaMemcpyDeviceToHost));
  if (racy) {
    std::printf("%.1f %lld\n", total, expect);
    return 0;
  }
  if ((long long)total != expect) {
    std::printf("FAIL: sum %.1f, expected %lld\n", total, expect);
    return 1;
  }

  // __syncthreads_count/and/or on 128-thread blocks
  const int nb = (n + 127) / 128;
  int *dcounts, *dflags;
  CHECK(cudaMalloc(&dcounts, nb * sizeof(int)));
  CHECK(cudaMalloc(&dflags, nb * sizeof(int)));
  block_count<<<nb, 128>>>(din, dcounts, dflags, n);
  CHECK(cudaGetLastError());
  std::vector<int> counts(nb), flags(nb);
  CHECK(cudaMemcpy(counts.data(), dcounts, nb * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(flags.data(), dflags, nb * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < nb; ++b) {
    int c = 0;
    for (int i = b * 128; i < (b + 1) * 128; ++i) c += pred_of(h.data(), i, n, b);
    int all = c == 128, any = c > 0;
    if (counts[b] != c || flags[b] != (all | (any << 1))) {
      std::printf("FAIL: block %d count %d flags %d, expected %d %d\n", b, counts[b], flags[b], c,
                  all | (any << 1));
      return 1;
    }
  }
  std::printf("OK\n");
  return 0;
}
