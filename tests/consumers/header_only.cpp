// The header-only core with nothing but -I (tests/consumers/run.py): a value of fp<F>, printed.
#include <fpemu/core.hpp>
#include <iostream>

int main() {
  std::cout << "x " << fpemu::bf16_t(0.1) << " " << std::hexfloat << fpemu::bf16_t(0.1) << "\n";
}
