// Cooperative interruption of long calls, for front ends that let a user stop one (Ctrl-C in the
// Python module). request_interrupt() may be called from a signal handler: it only stores to a
// lock-free atomic. The library's long loops (array pieces, matrix rows, training steps, CA-SGD
// iterations) poll interrupted() between slices of a few milliseconds and skip the rest of their
// work. A call that was running when the request came returns early with unspecified results,
// so the front end that asked for the interrupt discards them; clear_interrupt() re-arms the
// library. A call that runs to its end is never affected: polling changes no result.
#pragma once

namespace fpemu {

void request_interrupt() noexcept;
void clear_interrupt() noexcept;
bool interrupted() noexcept;

}  // namespace fpemu
