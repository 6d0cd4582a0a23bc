// Everything of fpemu's core library: the header-only core (core.hpp) and what libfpemu defines
// (link -lfpemu, or pkg-config fpemu, or CMake's fpemu::fpemu). The analysis library's headers
// are included by their room, "analysis/reference/gemm.hpp" (fpemu-analysis, fpemu::analysis).
#pragma once

#include "fpemu/array.hpp"
#include "fpemu/core.hpp"
#include "fpemu/interrupt.hpp"
#include "fpemu/presets.hpp"
#include "fpemu/spec.hpp"
#include "fpemu/text.hpp"
#include "fpemu/version.hpp"
