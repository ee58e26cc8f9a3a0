// (f) histograms with atomicAdd on unsigned (block-private __shared__ copy,
// then merged) and on int (directly in global memory), and the other atomics.
#include <cstdint>
#include <vector>
#include "check.cuh"

#define NBINS 64

__device__ __host__ unsigned bin_of(unsigned i) { return (i * 2654435761u) >> 26; }  // 0..63

__global__ void hist_shared(unsigned* hist, int n) {
  __shared__ unsigned local[NBINS];
  for (int b = threadIdx.x; b < NBINS; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    atomicAdd(&local[bin_of(i)], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < NBINS; b += blockDim.x) atomicAdd(&hist[b], local[b]);
}

__global__ void hist_global(int* hist, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&hist[bin_of(i)], 1);
}

struct Results {
  int imax, imin, exch_count;
  unsigned inc, sub;
  unsigned long long ull;
  double dsum;
  float fmax;
  int cas_count;
};

__device__ float atomic_max_float(float* addr, float v) {  // the classic CAS loop
  int* a = (int*)addr;
  int old = *a, assumed;
  do {
    assumed = old;
    if (__int_as_float(assumed) >= v) break;
    old = atomicCAS(a, assumed, __float_as_int(v));
  } while (old != assumed);
  return __int_as_float(old);
}

__global__ void other_atomics(Results* r, int* lock_owner, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = (int)((long long)i * 7919 % 10007) - 5000;
  atomicMax(&r->imax, v);
  atomicMin(&r->imin, v);
  atomicInc(&r->inc, 99u);  // wraps to 0 after 99
  atomicSub(&r->sub, 2u);
  atomicAdd(&r->ull, 1ull << 33);
  atomicAdd(&r->dsum, 0.5);
  atomic_max_float(&r->fmax, v * 0.25f);
  if (atomicCAS(lock_owner, -1, i) == -1) atomicAdd(&r->cas_count, 1);  // exactly one winner
  atomicExch(&r->exch_count, i);
}

int main() {
  const int n = 300007;
  std::vector<unsigned> ref(NBINS, 0);
  for (int i = 0; i < n; ++i) ref[bin_of(i)]++;

  unsigned* dh;
  int* dg;
  CHECK(cudaMalloc(&dh, NBINS * sizeof(unsigned)));
  CHECK(cudaMalloc(&dg, NBINS * sizeof(int)));
  CHECK(cudaMemset(dh, 0, NBINS * sizeof(unsigned)));
  CHECK(cudaMemset(dg, 0, NBINS * sizeof(int)));
  hist_shared<<<40, 128>>>(dh, n);
  CHECK(cudaGetLastError());
  hist_global<<<(n + 255) / 256, 256>>>(dg, n);
  CHECK(cudaGetLastError());
  std::vector<unsigned> hs(NBINS);
  std::vector<int> hg(NBINS);
  CHECK(cudaMemcpy(hs.data(), dh, NBINS * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(hg.data(), dg, NBINS * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < NBINS; ++b)
    if (hs[b] != ref[b] || (unsigned)hg[b] != ref[b]) {
      std::printf("FAIL: bin %d: shared %u global %d expected %u\n", b, hs[b], hg[b], ref[b]);
      return 1;
    }

  Results init = {INT32_MIN, INT32_MAX, 0, 0, 1000000000u, 5ull, 0.0, -1e30f, 0};
  int minus_one = -1;
  Results* dr;
  int* dlock;
  CHECK(cudaMalloc(&dr, sizeof(Results)));
  CHECK(cudaMalloc(&dlock, sizeof(int)));
  CHECK(cudaMemcpy(dr, &init, sizeof(Results), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dlock, &minus_one, sizeof(int), cudaMemcpyHostToDevice));
  other_atomics<<<(n + 255) / 256, 256>>>(dr, dlock, n);
  CHECK(cudaGetLastError());
  Results r;
  CHECK(cudaMemcpy(&r, dr, sizeof(Results), cudaMemcpyDeviceToHost));
  int emax = INT32_MIN, emin = INT32_MAX;
  for (int i = 0; i < n; ++i) {
    int v = (int)((long long)i * 7919 % 10007) - 5000;
    emax = v > emax ? v : emax;
    emin = v < emin ? v : emin;
  }
  EXPECT(r.imax == emax);
  EXPECT(r.imin == emin);
  EXPECT(r.inc == (unsigned)(n % 100));
  EXPECT(r.sub == 1000000000u - 2u * n);
  EXPECT(r.ull == 5ull + ((unsigned long long)n << 33));
  EXPECT(r.dsum == 0.5 * n);
  EXPECT(r.fmax == emax * 0.25f);
  EXPECT(r.cas_count == 1);
  EXPECT(r.exch_count >= 0 && r.exch_count < n);
  std::printf("OK\n");
  return 0;
}
