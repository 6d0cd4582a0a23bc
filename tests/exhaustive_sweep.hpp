// What the exhaustive programs share: the environment knobs for timing runs and the sweep of an
// index range in chunks of 2^20 over a few threads.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace exhaustive {

// FPEMU_EXHAUSTIVE_SAMPLE=k runs every k-th chunk only (a sample spread over the range, for
// timing; case-count checks are then skipped), starting with chunk FPEMU_EXHAUSTIVE_FIRST;
// FPEMU_THREADS overrides the 2 threads. The default runs everything.
struct sweep {
  static constexpr std::uint64_t kChunk = 1 << 20;
  std::uint64_t stride = 1, first = 0;
  unsigned threads = 2;

  static sweep from_environment() {
    const auto env_or = [](const char* name, std::uint64_t fallback) {
      const char* env = std::getenv(name);
      return env != nullptr ? std::strtoull(env, nullptr, 0) : fallback;
    };
    sweep s;
    s.stride = std::max<std::uint64_t>(1, env_or("FPEMU_EXHAUSTIVE_SAMPLE", 1));
    s.first = env_or("FPEMU_EXHAUSTIVE_FIRST", 0);
    s.threads = static_cast<unsigned>(std::max<std::uint64_t>(1, env_or("FPEMU_THREADS", 2)));
    return s;
  }

  // body(begin, end) for the chunks of [0, limit) this sweep covers, on `threads` threads.
  template <class Body>
  void run(std::uint64_t limit, Body body) const {
    std::atomic<std::uint64_t> next{first % stride * kChunk};
    std::vector<std::thread> pool;
    for (unsigned i = 0; i < threads; ++i) {
      pool.emplace_back([&] {
        for (;;) {
          const std::uint64_t b = next.fetch_add(kChunk * stride);
          if (b >= limit) return;
          body(b, std::min(b + kChunk, limit));
        }
      });
    }
    for (auto& th : pool) th.join();
  }
};

// Cases checked and mismatches found by a sweep's threads; the first ten mismatches are printed.
struct tally {
  std::atomic<std::uint64_t> cases{0}, mismatches{0};
  std::mutex print;

  void report(const std::string& what) {
    if (mismatches.fetch_add(1) >= 10) return;
    const std::lock_guard<std::mutex> lock(print);
    std::printf("MISMATCH %s\n", what.c_str());
    std::fflush(stdout);
  }
};

}  // namespace exhaustive
