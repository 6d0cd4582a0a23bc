// The header-only core: formats, the rounding core, arithmetic on codes, fp<F> values, the
// accumulator and tensor-core block models, conversions, comparisons and limits. It needs no
// library: compile with -I<include directory> (C++20) and nothing else, on the host or, for the
// FPEMU_HD functions, in CUDA device code.
//
// What needs libfpemu (fpemu/fpemu.hpp includes it all): format specs and names (spec.hpp),
// decimal text (text.hpp), runtime array functions (array.hpp), tensor-core presets
// (presets.hpp) and cooperative interruption (interrupt.hpp).
#pragma once

#include "fpemu/accumulator.hpp"
#include "fpemu/block_fma.hpp"
#include "fpemu/compare.hpp"
#include "fpemu/config.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/exact_accumulator.hpp"
#include "fpemu/expected.hpp"
#include "fpemu/format.hpp"
#include "fpemu/io.hpp"
#include "fpemu/limits.hpp"
#include "fpemu/ops.hpp"
#include "fpemu/random.hpp"
#include "fpemu/round_core.hpp"
#include "fpemu/round_float.hpp"
#include "fpemu/rounding.hpp"
#include "fpemu/status.hpp"
#include "fpemu/unpacked.hpp"
#include "fpemu/value.hpp"
