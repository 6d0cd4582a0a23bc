#include "native_gemm.hpp"

#include <Eigen/Dense>

namespace fpemu::bench {

void native_sgemm(const float* a, const float* b, float* c, int m, int n, int k) {
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::setNbThreads(1);
  const Eigen::Map<const RowMajor> A(a, m, k), B(b, k, n);
  Eigen::Map<Eigen::MatrixXf> C(c, m, n);
  C.noalias() = A * B;
}

}  // namespace fpemu::bench
