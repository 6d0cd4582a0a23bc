// See interrupt.hpp.
#include "fpemu/interrupt.hpp"

#include <atomic>

namespace fpemu {
namespace {
std::atomic<bool> g_interrupt{false};
static_assert(std::atomic<bool>::is_always_lock_free, "request_interrupt must be async-signal-safe");
}  // namespace

void request_interrupt() noexcept { g_interrupt.store(true, std::memory_order_relaxed); }
void clear_interrupt() noexcept { g_interrupt.store(false, std::memory_order_relaxed); }
bool interrupted() noexcept { return g_interrupt.load(std::memory_order_relaxed); }

}  // namespace fpemu
