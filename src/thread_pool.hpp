// A process-wide pool of worker threads for the array functions: parallel_chunks() splits
// [0, n) into contiguous chunks and runs them on the pool and the calling thread. Which thread
// runs a chunk never changes a result (every element's result, random bits included, is a
// function of its index alone), so the pool only decides speed.
#pragma once

#include <cstddef>
#include <functional>

namespace fpemu::detail {

// Runs body(begin, end) over [0, n) on at most `threads` threads (the caller's included), in
// chunks each a multiple of `align` elements long except the last, several per thread. Returns
// when every chunk is done. If the pool is busy with another caller's work, the calling thread
// does all chunks itself.
void parallel_chunks(std::size_t n, int threads, std::size_t align,
                     const std::function<void(std::size_t, std::size_t)>& body);

}  // namespace fpemu::detail
