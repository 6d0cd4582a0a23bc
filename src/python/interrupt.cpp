// Ctrl-C during long calls (bindings.hpp: sigint_scope, without_gil).
#include <atomic>
#include <csignal>
#include <mutex>

#include "bindings.hpp"
#include "fpemu/interrupt.hpp"

namespace fpemu::python {
namespace {

std::mutex g_mutex;        // guards the three below
int g_scopes = 0;          // scopes alive, in any thread
bool g_installed = false;  // on_sigint is SIGINT's handler
struct sigaction g_python;  // the handler it replaced and calls
std::atomic<unsigned> g_signals{0};

void on_sigint(int signal) {
  request_interrupt();
  g_signals.fetch_add(1, std::memory_order_relaxed);
  g_python.sa_handler(signal);  // Python's: it raises KeyboardInterrupt once the GIL is back
}

}  // namespace

sigint_scope::sigint_scope() : start_(g_signals.load(std::memory_order_relaxed)) {
  // A Ctrl-C that came while the arguments were read, before this scope: raised before the work.
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  const std::lock_guard<std::mutex> lock(g_mutex);
  if (g_scopes++ > 0) return;
  clear_interrupt();
  struct sigaction current {};
  if (sigaction(SIGINT, nullptr, &current) != 0) return;
  if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler == SIG_DFL || current.sa_handler == SIG_IGN) return;
  g_python = current;
  struct sigaction mine = current;
  mine.sa_handler = on_sigint;
  g_installed = sigaction(SIGINT, &mine, nullptr) == 0;
}

sigint_scope::~sigint_scope() {
  const std::lock_guard<std::mutex> lock(g_mutex);
  if (--g_scopes > 0) return;
  if (g_installed) sigaction(SIGINT, &g_python, nullptr);
  g_installed = false;
  clear_interrupt();
}

void sigint_scope::raise_if_interrupted() const {
  if (g_signals.load(std::memory_order_relaxed) == start_) return;
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  // Python's handler did not raise (a user's handler, or a thread other than the main one):
  // the call stopped early all the same, and its results must not be returned.
  PyErr_SetString(PyExc_KeyboardInterrupt, "the call was interrupted by SIGINT");
  throw py::error_already_set();
}

}  // namespace fpemu::python
