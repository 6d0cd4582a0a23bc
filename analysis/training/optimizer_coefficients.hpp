// The binary32 scalars of one optimizer step, cast from the double hyper-parameters as PyTorch
// casts its Python floats (analysis/training/optimizer.cpp defines coefficients_for).
//
// A header of its own so that the CUDA fused optimizer (cuda/fused_optimizer.hpp) takes the very
// same floats as the emulator: the kernels receive this struct as it is, so that any change to a
// cast here changes both sides. Plain data only (no member functions, no std:: types), so device
// code can read it; the declarations it needs from optimizer.hpp are forward declared.
#pragma once

#include <cstdint>

namespace fpemu::training {

enum class optimizer_kind : std::uint8_t;
struct hyperparameters;

struct coefficients {
  float lr_neg = 0;       // -lr (sgd, lion)
  float l2 = 0;           // coupled weight decay (sgd, adam)
  float decay = 1;        // 1 - lr*wd (decoupled; nearest)
  float lr_wd = 0;        // lr*wd    (decoupled; kahan, stochastic)
  float momentum = 0, one_minus_dampening = 1;
  float beta1 = 0, one_minus_beta1 = 0, beta2 = 0, one_minus_beta2 = 0;
  float step_neg = 0, bias2_sqrt = 1, eps = 0;
  bool first_step = false, nesterov = false, has_decay = false;
};

// The scalars of step t (1-based): Adam's bias corrections are computed in double from t.
coefficients coefficients_for(optimizer_kind k, const hyperparameters& h, long t);

}  // namespace fpemu::training
