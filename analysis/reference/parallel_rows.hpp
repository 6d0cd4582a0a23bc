// Splits rows 0..M-1 into contiguous ranges, one per thread, and runs body(begin, end) on each;
// the calling thread takes the first range. Each output row is computed by exactly one thread,
// which is what makes the GEMM routines bit-identical for any thread count.
//
// A thread's range is handed to body in slices of `slice` rows (the last may be shorter), and an
// interrupt (fpemu/interrupt.hpp) skips the slices left: one slice is the longest a Ctrl-C waits.
// One row by default (a row of the exact reference takes tens of milliseconds); kernels that
// tile rows pass their tile height.
#pragma once

#include <algorithm>
#include <thread>
#include <vector>

#include "fpemu/interrupt.hpp"

namespace fpemu::analysis {

template <class Body>
void parallel_rows(int M, int threads, const Body& body, int slice = 1) {
  const int t_count = std::max(1, std::min(threads, M));
  const int per = (M + t_count - 1) / t_count;
  const auto sliced = [&body, slice](int begin, int end) {
    for (int r = begin; r < end && !interrupted(); r += slice) body(r, std::min(end, r + slice));
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < t_count; ++t)
    if (t * per < M) pool.emplace_back(sliced, t * per, std::min(M, (t + 1) * per));
  sliced(0, std::min(M, per));
  for (std::thread& t : pool) t.join();
}

}  // namespace fpemu::analysis
