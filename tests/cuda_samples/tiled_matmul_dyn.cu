// (e) dynamic `extern __shared__` memory sized at launch: 16x16 tiled matmul
// with partial tiles, and a per-block reverse through a file-scope
// extern __shared__ array with a block size that is not a power of two.
#include <vector>
#include "check.cuh"

#define TILE 16

extern __shared__ int rev_buf[];

__global__ void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  extern __shared__ float smem[];
  float* As = smem;                // TILE x TILE
  float* Bs = smem + TILE * TILE;  // TILE x TILE
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    As[ty * TILE + tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
    Bs[ty * TILE + tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += As[ty * TILE + k] * Bs[k * TILE + tx];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

__global__ void reverse_blocks(const int* in, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  rev_buf[threadIdx.x] = i < n ? in[i] : -1;
  __syncthreads();
  if (i < n) out[i] = rev_buf[blockDim.x - 1 - threadIdx.x];
}

int main() {
  const int M = 50, N = 37, K = 29;
  std::vector<float> A(M * K), B(K * N), C(M * N), ref(M * N);
  for (int i = 0; i < M * K; ++i) A[i] = float(i % 9 - 4);
  for (int i = 0; i < K * N; ++i) B[i] = float(i % 5 - 2);
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c) {
      float acc = 0.0f;
      for (int k = 0; k < K; ++k) acc += A[r * K + k] * B[k * N + c];
      ref[r * N + c] = acc;
    }
  float *dA, *dB, *dC;
  CHECK(cudaMalloc(&dA, A.size() * sizeof(float)));
  CHECK(cudaMalloc(&dB, B.size() * sizeof(float)));
  CHECK(cudaMalloc(&dC, C.size() * sizeof(float)));
  CHECK(cudaMemcpy(dA, A.data(), A.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dB, B.data(), B.size() * sizeof(float), cudaMemcpyHostToDevice));
  dim3 block(TILE, TILE), grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
  size_t shmem = 2 * TILE * TILE * sizeof(float);
  matmul_tiled<<<grid, block, shmem>>>(dA, dB, dC, M, N, K);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(C.data(), dC, C.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < M * N; ++i)
    if (C[i] != ref[i]) {
      std::printf("FAIL: C[%d] = %f, expected %f\n", i, C[i], ref[i]);
      return 1;
    }

  const int n = 1000, bs = 200;
  std::vector<int> in(n), out(n);
  for (int i = 0; i < n; ++i) in[i] = i * 3 + 1;
  int *din, *dout;
  CHECK(cudaMalloc(&din, n * sizeof(int)));
  CHECK(cudaMalloc(&dout, n * sizeof(int)));
  CHECK(cudaMemcpy(din, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  reverse_blocks<<<n / bs, bs, bs * sizeof(int)>>>(din, dout, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(out.data(), dout, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    int expect = in[i / bs * bs + bs - 1 - i % bs];
    if (out[i] != expect) {
      std::printf("FAIL: reverse out[%d] = %d, expected %d\n", i, out[i], expect);
      return 1;
    }
  }

  // far more dynamic shared memory than any GPU has: the launch must fail
  reverse_blocks<<<1, bs, 16u << 20>>>(din, dout, n);
  EXPECT(cudaGetLastError() != cudaSuccess);
  std::printf("OK\n");
  return 0;
}
