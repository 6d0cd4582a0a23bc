// The block premise check's inner loop (dot_analysis.cpp, rows_premise), in vector lanes of the
// best SIMD target the CPU has (Highway, chosen at run time): analysis/ is otherwise compiled for
// the baseline, where this loop took a fifth of an error report's time.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fpemu::analysis {

// For columns j in [0, columns) (a multiple of 32), over the positions q in [lo, hi):
//   all[j]    = max(floor, max_q a_lead[q] + b_lead[q ldb + j])
//   normal[j] = max(floor, max_q a_normal[q] + b_normal[q ldb + j])
// in int16 with wrapping addition (the caller's leads keep every sum in range).
void lead_pair_maxima(const std::int16_t* a_lead, const std::int16_t* a_normal, const std::int16_t* b_lead,
                      const std::int16_t* b_normal, std::size_t ldb, std::size_t lo, std::size_t hi,
                      std::size_t columns, std::int16_t floor, std::int16_t* all, std::int16_t* normal);

}  // namespace fpemu::analysis
