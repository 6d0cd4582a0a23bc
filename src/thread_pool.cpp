// See thread_pool.hpp. Workers are started on first use, up to the largest count asked for.
// Between jobs a worker first spins for a while (about 0.1 ms) and then sleeps on a condition
// variable: waking a sleeping thread takes tens of microseconds (about 0.1 ms on the 2-core VM
// measured, encode_first in bench_round), longer than a whole job of 2^18 elements, while
// back-to-back calls, the common case in loops over tensors, find a spinning worker at once.
#include "thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace fpemu::detail {
namespace {

class pool {
 public:
  ~pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  // The job's chunks: chunk c covers [c * per, min(n, (c + 1) * per)).
  void run(std::size_t n, std::size_t chunks, std::size_t per, std::size_t threads,
           const std::function<void(std::size_t, std::size_t)>& body) {
    std::unique_lock<std::mutex> busy(job_mutex_, std::try_to_lock);
    if (!busy.owns_lock()) {  // another caller's job is running: do this one here
      body(0, n);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      while (workers_.size() + 1 < threads) workers_.emplace_back([this] { work(); });
      body_ = &body;
      n_ = n;
      per_ = per;
      chunks_ = chunks;
      next_ = 1;  // chunk 0 is the caller's
      pending_ = chunks - 1;
      helpers_left_ = threads - 1;
      ++generation_;
      published_.store(generation_, std::memory_order_release);
    }
    wake_.notify_all();
    body(0, std::min(n, per));
    std::unique_lock<std::mutex> lock(mutex_);
    claim_chunks(lock);  // those no worker has started yet
    done_.wait(lock, [this] { return pending_ == 0; });
    body_ = nullptr;
  }

 private:
  // Chunks are claimed under the lock, together with the job they belong to: a worker that
  // wakes late, after its job has ended and the next has begun, must not take a chunk number of
  // the new job to the old job's body (it once did, with a lock-free counter).
  void work() {
    std::uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      lock.unlock();
      for (int spin = 0; spin < kSpins && published_.load(std::memory_order_acquire) == seen; ++spin) pause();
      lock.lock();
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      if (helpers_left_ == 0) continue;  // the job has as many threads as it asked for
      --helpers_left_;
      claim_chunks(lock);
    }
  }

  // Runs the current job's unclaimed chunks; `lock` holds mutex_ on entry and on return.
  void claim_chunks(std::unique_lock<std::mutex>& lock) {
    while (next_ < chunks_) {
      const std::size_t c = next_++;
      const auto* body = body_;
      const std::size_t n = n_, per = per_;
      lock.unlock();
      (*body)(c * per, std::min(n, (c + 1) * per));
      lock.lock();
      if (--pending_ == 0) done_.notify_one();
    }
  }

  // About 0.1 ms of polling at tens of nanoseconds a pause.
  static constexpr int kSpins = 4096;
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    std::this_thread::yield();
#endif
  }

  std::mutex job_mutex_;  // one job at a time
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  const std::function<void(std::size_t, std::size_t)>* body_ = nullptr;
  std::size_t n_ = 0, per_ = 0, chunks_ = 0, pending_ = 0;
  std::size_t next_ = 0;
  std::size_t helpers_left_ = 0;  // workers that may still join the current job
  std::uint64_t generation_ = 0;
  std::atomic<std::uint64_t> published_{0};  // generation_, for spinning workers to poll without the lock
  bool stopping_ = false;
};

constexpr std::size_t kChunksPerThread = 8;

pool& the_pool() {
  static pool p;
  return p;
}

}  // namespace

void parallel_chunks(std::size_t n, int threads, std::size_t align,
                     const std::function<void(std::size_t, std::size_t)>& body) {
  const std::size_t units = (n + align - 1) / align;
  const auto t = static_cast<std::size_t>(std::max(threads, 1));
  // Several chunks a thread, claimed as threads get to them: a worker that wakes late finds the
  // caller has taken its share of the first chunks, not half the job.
  const std::size_t chunks = std::min<std::size_t>(t * kChunksPerThread, std::max<std::size_t>(units, 1));
  if (t <= 1 || chunks <= 1) {
    body(0, n);
    return;
  }
  const std::size_t per = (units + chunks - 1) / chunks * align;
  the_pool().run(n, (n + per - 1) / per, per, t, body);
}

}  // namespace fpemu::detail
