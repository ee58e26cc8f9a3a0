// (d) tail threads of the last block (and all threads of a surplus block)
// return BEFORE __syncthreads(); the remaining threads must neither deadlock
// nor wait for them, including barriers inside a loop.
#include <algorithm>
#include <vector>
#include "check.cuh"

#define BS 256

// out[i] = in[i] + in[next element of the same block]
__global__ void neighbor(const int* in, int* out, int n) {
  __shared__ int s[BS];
  int gid = blockIdx.x * blockDim.x + threadIdx.x;
  if (gid >= n) return;
  s[threadIdx.x] = in[gid];
  __syncthreads();
  int active = min((int)blockDim.x, n - (int)(blockIdx.x * blockDim.x));
  out[gid] = s[threadIdx.x] + s[(threadIdx.x + 1) % active];
}

// Hillis-Steele inclusive scan inside each block, two barriers per step.
__global__ void block_scan(const int* in, int* out, int n) {
  __shared__ int s[BS];
  int t = threadIdx.x;
  int gid = blockIdx.x * blockDim.x + t;
  if (gid >= n) return;
  s[t] = in[gid];
  __syncthreads();
  for (int off = 1; off < (int)blockDim.x; off <<= 1) {
    int v = t >= off ? s[t - off] : 0;
    __syncthreads();
    s[t] += v;
    __syncthreads();
  }
  out[gid] = s[t];
}

int main() {
  const int n = 1000;     // last used block has 232 threads, block 4 is unused
  const int blocks = 5;
  std::vector<int> in(n), out(n);
  for (int i = 0; i < n; ++i) in[i] = (i * 37) % 101;
  int *din, *dout;
  CHECK(cudaMalloc(&din, n * sizeof(int)));
  CHECK(cudaMalloc(&dout, n * sizeof(int)));
  CHECK(cudaMemcpy(din, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));

  neighbor<<<blocks, BS>>>(din, dout, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(out.data(), dout, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    int base = i / BS * BS, active = std::min(BS, n - base);
    int expect = in[i] + in[base + (i - base + 1) % active];
    if (out[i] != expect) {
      std::printf("FAIL: neighbor out[%d] = %d, expected %d\n", i, out[i], expect);
      return 1;
    }
  }

  block_scan<<<blocks, BS>>>(din, dout, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(out.data(), dout, n * sizeof(int), cudaMemcpyDeviceToHost));
  int run = 0;
  for (int i = 0; i < n; ++i) {
    run = (i % BS == 0 ? 0 : run) + in[i];
    if (out[i] != run) {
      std::printf("FAIL: scan out[%d] = %d, expected %d\n", i, out[i], run);
      return 1;
    }
  }
  std::printf("OK\n");
  return 0;
}
