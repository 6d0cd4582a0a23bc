// Splits rows 0..M-1 into contiguous ranges, one per thread, and runs body(begin, end) on each;
// the calling thread takes the first range. Each output row is computed by exactly one thread,
// which is what makes the GEMM routines bit-identical for any thread count.
#pragma once

#include <algorithm>
#include <thread>
#include <vector>

namespace fpemu::analysis {

template <class Body>
void parallel_rows(int M, int threads, const Body& body) {
  const int t_count = std::max(1, std::min(threads, M));
  const int per = (M + t_count - 1) / t_count;
  std::vector<std::thread> pool;
  for (int t = 1; t < t_count; ++t)
    if (t * per < M) pool.emplace_back(body, t * per, std::min(M, (t + 1) * per));
  body(0, std::min(M, per));
  for (std::thread& t : pool) t.join();
}

}  // namespace fpemu::analysis
