// Warp-level primitives: shuffles (down/xor/idx/up, sub-warp width), ballot,
// any/all, partial masks, __reduce_add_sync, and a warp+block reduction.
#include <vector>
#include "check.cuh"

struct Out {
  int warp_sum, all_sum, bcast, scan, sub8, half16, any_neg, all_pos, red;
  unsigned ballot;
};

__global__ void warp_ops(const int* in, Out* out, int* block_sums) {
  __shared__ int warp_part[32];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x % 32, wid = threadIdx.x / 32;
  int v = in[i];
  Out o = {};

  int s = v;
  for (int off = 16; off > 0; off /= 2) s += __shfl_down_sync(0xffffffffu, s, off);
  o.warp_sum = s;  // meaningful in lane 0 only
  int a = v;
  for (int m = 16; m > 0; m /= 2) a += __shfl_xor_sync(0xffffffffu, a, m);
  o.all_sum = a;
  o.bcast = __shfl_sync(0xffffffffu, v, 3);
  int x = v;
  for (int d = 1; d < 32; d *= 2) {
    int y = __shfl_up_sync(0xffffffffu, x, d);
    if (lane >= d) x += y;
  }
  o.scan = x;
  int g = v;
  for (int m = 4; m > 0; m /= 2) g += __shfl_xor_sync(0xffffffffu, g, m, 8);
  o.sub8 = g;
  if (lane < 16) {  // only the lower half-warp participates
    int h = v;
    for (int off = 8; off > 0; off /= 2) h += __shfl_down_sync(0x0000ffffu, h, off, 16);
    o.half16 = h;
  }
  o.ballot = __ballot_sync(0xffffffffu, v & 1);
  o.any_neg = __any_sync(0xffffffffu, v < 0);
  o.all_pos = __all_sync(0xffffffffu, v > 0);
  o.red = __reduce_add_sync(0xffffffffu, v);
  out[i] = o;

  // block reduction: warp sums -> shared -> first warp
  if (lane == 0) warp_part[wid] = s;
  __syncthreads();
  if (wid == 0) {
    int t = lane < (int)(blockDim.x / 32) ? warp_part[lane] : 0;
    for (int off = 16; off > 0; off /= 2) t += __shfl_down_sync(0xffffffffu, t, off);
    if (lane == 0) block_sums[blockIdx.x] = t;
  }
}

int main() {
  const int bs = 128, blocks = 8, n = bs * blocks;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = (i * 37) % 23 - (i % 5 == 0 ? 30 : 0) + 1;
  int *din, *dbs;
  Out* dout;
  CHECK(cudaMalloc(&din, n * sizeof(int)));
  CHECK(cudaMalloc(&dout, n * sizeof(Out)));
  CHECK(cudaMalloc(&dbs, blocks * sizeof(int)));
  CHECK(cudaMemcpy(din, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  warp_ops<<<blocks, bs>>>(din, dout, dbs);
  CHECK(cudaGetLastError());
  std::vector<Out> out(n);
  std::vector<int> bsum(blocks);
  CHECK(cudaMemcpy(out.data(), dout, n * sizeof(Out), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(bsum.data(), dbs, blocks * sizeof(int), cudaMemcpyDeviceToHost));
  for (int w = 0; w < n / 32; ++w) {
    const int* v = &in[w * 32];
    int sum = 0, any_neg = 0, all_pos = 1;
    unsigned ballot = 0;
    for (int l = 0; l < 32; ++l) {
      sum += v[l];
      any_neg |= v[l] < 0;
      all_pos &= v[l] > 0;
      if (v[l] & 1) ballot |= 1u << l;
    }
    EXPECT(out[w * 32].warp_sum == sum);
    int run = 0;
    for (int l = 0; l < 32; ++l) {
      const Out& o = out[w * 32 + l];
      run += v[l];
      int sub8 = 0;
      for (int k = l / 8 * 8; k < l / 8 * 8 + 8; ++k) sub8 += v[k];
      EXPECT(o.all_sum == sum);
      EXPECT(o.bcast == v[3]);
      EXPECT(o.scan == run);
      EXPECT(o.sub8 == sub8);
      EXPECT(o.ballot == ballot);
      EXPECT(o.any_neg == any_neg);
      EXPECT(o.all_pos == all_pos);
      EXPECT(o.red == sum);
    }
    int half = 0;
    for (int l = 0; l < 16; ++l) half += v[l];
    EXPECT(out[w * 32].half16 == half);  // lane 0 of the half-warp tree
  }
  for (int b = 0; b < blocks; ++b) {
    int sum = 0;
    for (int i = b * bs; i < (b + 1) * bs; ++i) sum += in[i];
    EXPECT(bsum[b] == sum);
  }
  std::printf("OK\n");
  return 0;
}
