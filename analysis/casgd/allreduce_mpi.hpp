// The AllReduce of allreduce.hpp on real MPI ranks: each process holds one rank; every algorithm
// is carried out with point-to-point messages in exactly the grouping the simulation uses, so the
// reduced vectors are bit-identical to simulated_collective(P). Built only with MPI
// (FPEMU_HAVE_MPI); launched_by_mpirun() is always available.
#pragma once

#include <cstdlib>
#include <memory>

#include "analysis/casgd/allreduce.hpp"
#include "fpemu/expected.hpp"

namespace fpemu::casgd {

// True when the environment says mpirun/mpiexec started this process (OpenMPI's
// OMPI_COMM_WORLD_SIZE, or PMI_SIZE / PMIX_RANK of other launchers).
inline bool launched_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
         std::getenv("PMIX_RANK") != nullptr;
}

#ifdef FPEMU_HAVE_MPI
// Initialises MPI on first use and returns the collective over MPI_COMM_WORLD (one local rank).
// MPI is finalised at exit.
expected<std::unique_ptr<collective>> mpi_collective();
#endif

}  // namespace fpemu::casgd
