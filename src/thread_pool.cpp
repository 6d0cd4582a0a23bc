// See thread_pool.hpp. Workers are started on first use, up to the largest count asked for,
// and sleep on a condition variable between jobs.
#include "thread_pool.hpp"

#include <algorithm>
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
  void run(std::size_t n, std::size_t chunks, std::size_t per,
           const std::function<void(std::size_t, std::size_t)>& body) {
    std::unique_lock<std::mutex> busy(job_mutex_, std::try_to_lock);
    if (!busy.owns_lock()) {  // another caller's job is running: do this one here
      body(0, n);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      while (workers_.size() + 1 < chunks) workers_.emplace_back([this] { work(); });
      body_ = &body;
      n_ = n;
      per_ = per;
      chunks_ = chunks;
      next_ = 1;  // chunk 0 is the caller's
      pending_ = chunks - 1;
      ++generation_;
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
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
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

  std::mutex job_mutex_;  // one job at a time
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  const std::function<void(std::size_t, std::size_t)>* body_ = nullptr;
  std::size_t n_ = 0, per_ = 0, chunks_ = 0, pending_ = 0;
  std::size_t next_ = 0;
  std::uint64_t generation_ = 0;
  bool stopping_ = false;
};

pool& the_pool() {
  static pool p;
  return p;
}

}  // namespace

void parallel_chunks(std::size_t n, int threads, std::size_t align,
                     const std::function<void(std::size_t, std::size_t)>& body) {
  const std::size_t units = (n + align - 1) / align;
  const std::size_t chunks = std::min<std::size_t>(std::max(threads, 1), std::max<std::size_t>(units, 1));
  if (chunks <= 1) {
    body(0, n);
    return;
  }
  const std::size_t per = (units + chunks - 1) / chunks * align;
  the_pool().run(n, (n + per - 1) / per, per, body);
}

}  // namespace fpemu::detail
