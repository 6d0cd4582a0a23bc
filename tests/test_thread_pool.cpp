// The array functions' thread pool (src/thread_pool.cpp): every chunk of every job runs exactly
// once, with that job's body, also when jobs follow each other faster than the workers wake
// (more threads than cores, jobs of a few elements). A worker that woke after its job had
// ended once took a chunk number of the next job to the old job's body (the pool then lost
// count of its pending chunks and hung, or the chunk ran on a freed body and crashed).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "src/thread_pool.hpp"

using fpemu::detail::parallel_chunks;

TEST_CASE("parallel_chunks: each element of each job exactly once, back-to-back short jobs on 1 to 5 threads") {
  std::uint64_t jobs = 0, elements = 0, wrong = 0, too_many_threads = 0;
  for (int round = 0; round < 4000; ++round) {
    const int threads = 1 + round % 5;
    const std::size_t n = 1 + static_cast<std::size_t>(round * 7919) % 40, align = 1 + round % 3;
    // A fresh vector per job: a chunk run with a stale body writes into a freed one.
    std::vector<int> hits(n, 0);
    std::mutex m;
    std::set<std::thread::id> ran_on;  // a job takes several chunks a thread, but no more threads
    parallel_chunks(n, threads, align, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) ++hits[i];
      const std::lock_guard<std::mutex> lock(m);
      ran_on.insert(std::this_thread::get_id());
    });
    wrong += static_cast<std::uint64_t>(std::count_if(hits.begin(), hits.end(), [](int h) { return h != 1; }));
    too_many_threads += ran_on.size() > static_cast<std::size_t>(threads);
    ++jobs;
    elements += n;
  }
  MESSAGE(jobs << " jobs, " << elements << " elements, " << wrong << " run other than once, " << too_many_threads
                << " jobs on more threads than asked");
  CHECK(wrong == 0);
  CHECK(too_many_threads == 0);
}
