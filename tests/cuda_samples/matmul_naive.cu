// (b) naive matmul with 2-D dim3(32, 8) blocks and partial blocks at the edges.
#include <vector>
#include "check.cuh"

__global__ void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
  }
}

int main() {
  const int M = 70, N = 45, K = 33;
  std::vector<float> A(M * K), B(K * N), C(M * N), ref(M * N);
  // small integers: every partial sum is exact, so results must match exactly
  for (int i = 0; i < M * K; ++i) A[i] = float(i * 7 % 5 - 2);
  for (int i = 0; i < K * N; ++i) B[i] = float(i * 3 % 7 - 3);
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
  dim3 block(32, 8);
  dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul<<<grid, block>>>(dA, dB, dC, M, N, K);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(C.data(), dC, C.size() * sizeof(float), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < M * N; ++i) bad += C[i] != ref[i];
  if (bad) {
    std::printf("FAIL: %d of %d entries differ\n", bad, M * N);
    return 1;
  }
  std::printf("OK\n");
  return 0;
}
