// Runtime-format functions over spans (see array.hpp).
//
// Every function validates before it writes: the format(s), the rounding against the target
// format, and every span size against the first input. Errors name both spans and their sizes.
// Then the work is split over the thread pool in chunks; each chunk goes through the vector
// kernels (array_simd.hpp) where they cover the format and mode, else one scalar core call per
// element (element-wise arithmetic on byte codes: a table of the core's results, see below).
// Stochastic rounding reads keystream_bits(seed, stream, first_index + i, width) for
// element i on every path, so neither the path nor the chunking changes a result.
#include "fpemu/array.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <deque>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "array_simd.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/interrupt.hpp"
#include "fpemu/ops.hpp"
#include "fpemu/random.hpp"
#include "fpemu/round_float.hpp"
#include "fpemu/spec.hpp"
#include "thread_pool.hpp"

namespace fpemu {
namespace {

struct sized {
  std::string_view name;
  std::size_t size;
};

std::string elements(std::size_t n) { return std::to_string(n) + (n == 1 ? " element" : " elements"); }

// "size mismatch: 'in' has 10 elements, 'out' has 9" for the first span that differs from the
// first one; `flags` is checked only when it is not empty.
std::optional<error> check_sizes(std::initializer_list<sized> spans, std::size_t flags_size) {
  const sized& first = *spans.begin();
  for (const sized& s : spans)
    if (s.size != first.size)
      return error{"size mismatch: '" + std::string(first.name) + "' has " + elements(first.size) + ", '" +
                   std::string(s.name) + "' has " + std::to_string(s.size)};
  if (flags_size != 0 && flags_size != first.size)
    return error{"size mismatch: '" + std::string(first.name) + "' has " + elements(first.size) +
                 ", 'flags' has " + std::to_string(flags_size)};
  return std::nullopt;
}

std::optional<error> check_format(const format& f, std::string_view role) {
  if (auto problem = check(f)) return error{std::string(role) + ": " + *problem};
  return std::nullopt;
}

std::optional<error> check_rounding(const format& f, const rounding& r) {
  if (auto problem = check(f, r)) return error{"rounding: " + *problem};
  return std::nullopt;
}

std::atomic<int> g_threads{0};

// Arrays shorter than this run on the calling thread: waking the pool costs more than it saves.
// Vector kernels: two threads first beat one at 2^18 elements (1.2x; 0.98x at 2^17), bf16
// encode on a 2-core Xeon (bench_round's encode_first). The scalar core, ten times slower per
// element, pays from fewer.
constexpr std::size_t kParallelFrom = std::size_t{1} << 18;
constexpr std::size_t kScalarParallelFrom = std::size_t{1} << 16;
// Outputs of at least this many floats (16 MiB, more than the caches of the CPUs measured) are
// written with non-temporal stores where a kernel can.
constexpr std::size_t kStreamFrom = std::size_t{1} << 22;
// Elements per piece of work inside a chunk.
constexpr std::size_t kPiece = 4096;

int threads_for(std::size_t n, std::size_t from = kParallelFrom) { return n < from ? 1 : array_threads(); }

// Runs piece(begin, end) over [0, n) on the pool, pieces of at most kPiece elements, and
// returns the union of the pieces' flags. A piece that takes a third argument gets the union of
// the flags of the pieces before it in its chunk (a kernel that stops at a flag not yet seen
// then stops once a chunk, not once a piece). An interrupt (interrupt.hpp) skips the pieces left.
template <class Piece>
std::uint8_t for_each_piece(std::size_t n, Piece piece, std::size_t parallel_from = kParallelFrom) {
  std::atomic<std::uint8_t> all{0};
  detail::parallel_chunks(n, threads_for(n, parallel_from), kPiece, [&](std::size_t begin, std::size_t end) {
    std::uint8_t flags = 0;
    for (std::size_t b = begin; b < end && !interrupted(); b += kPiece) {
      if constexpr (std::is_invocable_v<Piece&, std::size_t, std::size_t, std::uint8_t>) {
        flags |= piece(b, std::min(end, b + kPiece), flags);
      } else {
        flags |= piece(b, std::min(end, b + kPiece));
      }
    }
    all.fetch_or(flags);
  });
  return all.load();
}

// Where stochastic rounding's random bits come from: the keystream of `sr`, or, where `given` is
// set (round_array_given_bits), given[i] for element i.
struct random_source {
  sr_stream sr;
  const std::uint32_t* given = nullptr;
  random_source(sr_stream s) : sr(s) {}
  random_source(std::span<const std::uint32_t> bits) : given(bits.data()) {}
};

// Element i's random bits as the core reads them (0 outside the stochastic modes).
std::uint64_t core_random(const rounding& r, const sr_stream& sr, std::size_t i) {
  return is_stochastic(r.mode) ? keystream_bits(sr.seed, sr.stream, sr.first_index + i, array_random_width(r)) : 0;
}

simd::keystream keystream_at(const random_source& src, std::size_t i) {
  return {src.sr.seed, src.sr.stream, src.sr.first_index + i, src.given ? src.given + i : nullptr};
}

// Runs `one(i, random)` for every element through the scalar core, and returns the union of
// the flags; `flags`, when not empty, receives each element's.
template <class One>
std::uint8_t for_each_element(std::size_t n, const rounding& r, const random_source& src, std::span<std::uint8_t> flags,
                              One one) {
  const int width = array_random_width(r);
  const sr_stream& sr = src.sr;
  const bool buffered = r.mode == round_mode::stochastic && src.given == nullptr;
  return for_each_piece(n, [&](std::size_t b, std::size_t e) {
    std::vector<std::uint32_t> random(buffered ? e - b : 0);
    if (buffered) simd::fill_keystream(sr.seed, sr.stream, sr.first_index + b, e - b, width, random.data());
    std::uint8_t all = 0;
    for (std::size_t i = b; i < e; ++i) {
      std::uint64_t bits = 0;
      if (src.given) {
        bits = src.given[i];
      } else if (buffered) {
        bits = random[i - b];
      } else if (r.mode == round_mode::stochastic_exact) {
        bits = keystream_bits(sr.seed, sr.stream, sr.first_index + i, width);
      }
      const std::uint8_t f = one(i, bits);
      if (!flags.empty()) flags[i] = f;
      all |= f;
    }
    return all;
  }, kScalarParallelFrom);
}

// Storage-width codes, which f's codes must fit: `arrays_hold` names the arrays, as in "'out' holds".
template <class Code>
std::optional<error> check_code_width(const format& f, std::string_view arrays_hold) {
  if (width(f) <= static_cast<int>(8 * sizeof(Code))) return std::nullopt;
  return error{"format " + to_string(f) + " has " + std::to_string(width(f)) + "-bit codes; " +
               std::string(arrays_hold) + " " + std::to_string(8 * sizeof(Code)) + "-bit codes (use uint" +
               (width(f) <= 16 ? "16" : "32") + "_t codes, or uint32_t for any format)"};
}

template <class T, class Code>
expected<std::uint8_t> round_span(const format& f, std::span<const T> in, std::span<Code> out, const rounding& r,
                                  const random_source& sr, std::span<std::uint8_t> flags) {
  if (auto e = check_format(f, "format")) return *e;
  if (auto e = check_code_width<Code>(f, "'out' holds")) return *e;
  if (auto e = check_rounding(f, r)) return *e;
  if (auto e = check_sizes({{"in", in.size()}, {"out", out.size()}}, flags.size())) return *e;
  constexpr bool is_double = std::is_same_v<T, double>;
  if (simd::can_encode(f, r, is_double)) {
    return for_each_piece(in.size(), [&](std::size_t b, std::size_t e) {
      std::uint8_t* fl = flags.empty() ? nullptr : flags.data() + b;
      if constexpr (is_double) {
        return simd::encode_doubles(f, r, in.data() + b, e - b, keystream_at(sr, b), out.data() + b, fl);
      } else {
        return simd::encode_floats(f, r, in.data() + b, e - b, keystream_at(sr, b), out.data() + b, nullptr, fl);
      }
    });
  }
  return for_each_element(in.size(), r, sr, flags, [&](std::size_t i, std::uint64_t random) {
    const rounded res = from(f, in[i], r, random);
    out[i] = static_cast<Code>(res.code);
    return res.flags;
  });
}

template <class Code>
expected<std::uint8_t> round_given(const format& f, std::span<const float> in, std::span<Code> out, const rounding& r,
                                   std::span<const std::uint32_t> random, std::span<std::uint8_t> flags) {
  if (r.mode != round_mode::stochastic)
    return error{"round_array_given_bits: random bits are read by mode sr (1..32 bits) only, not by " +
                 std::string(to_string(r.mode))};
  if (auto e = check_sizes({{"in", in.size()}, {"random", random.size()}}, 0)) return *e;
  return round_span(f, in, out, r, random_source(random), flags);
}

// ---- Element-wise arithmetic ----
// `core(x, y, z, random)`: the core's result of the op on operand codes x, y, z (those it reads).

// A format of at most 8 bits has at most 2^8 codes (the core reads a code's low width(f) bits,
// unpack masks the others), so an op of one or two operands has at most 2^16 operand pairs, and the
// core's results for all of them fit a table (code | flags << 8 at x << 8 | y, or at x for sqrt;
// 128 KiB), indexed by the codes' low bytes whatever their storage width. An array then costs a
// load per element, on any data, and each result is the core's by construction, bits beyond the
// format's width included, in every mode that reads no random bits. Stochastic rounding with k <=
// 16 random bits reads them through a step: four entries per pair (512 KiB), the results at both
// ends of the random values and where each of code and flags steps (make_table), and element i
// takes the side its random value lies on.
// fma has 2^24 triples, but exact_fma reads x and y only through whether one of them is a NaN and
// their exact product (exact_mul's value and flags: a NaN operand's sign and signaling flag, 0 x
// inf, else the product, whose value normalise reads and not its representation). The pairs with
// one product share a row of results over z, the core's for one pair of them: the table holds a
// row per product (e4m3fn has 2011 finite ones, 1 MiB of rows; e5m2 1211) and the row of each
// pair, two dependent loads per element; in sr the four entries and the word of simd::look_up per
// triple of a row (6 MiB for e4m3fn, 3.7 MiB for e5m2): FP8 fma in sr16 ran 1.16-2.96x as fast as
// through the lanes and the encode pass on the Emerald Rapids Xeon, but for AVX-512 on N(0,1)
// e4m3fn data (0.82x, its words read at random; bench/results/elementwise-fp8-fma-sr16-2026-12-01-xeon.md).
// fp16's and bf16's one pass (simd::one_pass_op), made to serve e4m3fn and e5m2 byte codes by
// integer steps, beat the tables on a Zen 4 core only in fma on AVX-512 (1.12x in median; AVX2
// 0.78x), the other ops 0.23-0.97x (bench/results/elementwise-fp8-one-pass-2026-12-02-zen4-lib-ab.md).
// Formats with more than kRows products (e3m4, e2m5, e1m6) are not tabulated.
// A table is made once the elements asked of its op, format and rounding sum to kLanesPerCall
// times the core calls that make it (2^8 for sqrt, 2^16 for pairs, about 2^19 for fma: 2^11
// rows; k + 2 times that in stochastic rounding) where lanes cover the op (1 to 3 G elements/s on
// a Zen 5 core, the core 30 ns a call), or to those calls where the core does every element, so
// that making it costs about what the elements would; it is made on the thread pool (e4m3fn's fma
// in sr16: 0.27 s on two threads of that Xeon). It is kept for the process, within kTableBytes
// for all of them (at most 6 MiB each, e4m3fn's fma in sr): making one drops the oldest made ones
// until it fits (with 16 tables at most, an element-wise benchmark run over FP8 formats, ops and
// modes in random order made some twice and more, their elements through lanes again); the
// elements asked are counted for the last kRecords (op, format, rounding).
constexpr std::size_t kLanesPerCall = 32;
constexpr std::size_t kRows = std::size_t{1} << 11;
constexpr std::size_t kTableBytes = std::size_t{32} << 20;
constexpr std::size_t kRecords = 64;

struct result_table {
  int operands;
  int random_bits = 0;                 // stochastic rounding's k, else 0
  std::vector<std::uint16_t> entries;  // code | flags << 8 (four per index with random_bits)
  std::vector<std::uint16_t> rows;     // fma: the row of x << 8 | y
  std::vector<std::uint32_t> words;    // with random_bits: one per index
  simd::result_table_view view() const {
    return {operands, random_bits, entries.data(), rows.data(), words.data()};
  }
  std::size_t bytes() const {
    return (entries.size() + rows.size()) * sizeof(std::uint16_t) + words.size() * sizeof(std::uint32_t);
  }
};

struct tabulated {
  simd::lane_op op;
  format f;
  rounding r;
  std::size_t asked = 0;  // elements asked of it so far
  bool declined = false;  // fma with more than kRows products
  std::shared_ptr<const result_table> table;  // null until made
};

// The process's tables, one set for every op (table_for is a template per caller).
struct table_cache {
  std::mutex mutex;
  std::deque<tabulated> made;  // the oldest first
};
table_cache& tables() {
  static table_cache cache;
  return cache;
}

// What exact_fma reads of x and y (above), as one number: the products' values are those of codes
// of at most 8 bits, whose significands' product, without its trailing zeros, has at most 16 bits.
std::uint64_t product_key(const format& f, std::uint32_t x, std::uint32_t y) {
  const unpacked a = decode(f, x), b = decode(f, y);
  const exact_result p = exact_mul(a, b);
  std::uint64_t sig = 0;
  int exp = 0;
  if (p.value.cls == value_class::finite) {  // the value: the significand without trailing zeros
    const auto low = static_cast<std::uint64_t>(p.value.sig), high = static_cast<std::uint64_t>(p.value.sig >> 64);
    const int zeros = low != 0 ? detail::countr_zero(low) : 64 + detail::countr_zero(high);
    sig = static_cast<std::uint64_t>(p.value.sig >> zeros);
    exp = p.value.exp + zeros;
  }
  const bool nan_operand = a.cls == value_class::nan || b.cls == value_class::nan;
  return sig | static_cast<std::uint64_t>(static_cast<std::uint16_t>(exp)) << 32 |
         std::uint64_t{p.flags} << 48 | std::uint64_t{static_cast<std::uint8_t>(p.value.cls)} << 56 |
         std::uint64_t{p.value.negative} << 60 | std::uint64_t{nan_operand} << 61;
}

// The table of op, f and r (above): entries[i] is core(operands of index i); in stochastic
// rounding with k random bits, the four entries simd::result_table_view describes, found by the
// core: its results for random values 0 and 2^k - 1, and by bisection between them the last value
// whose result's code (flags) is the first one's. That is every result's where each of the two
// is a step function of the random value r, as in round_core.hpp: round_to_quantum carries where
// r plus the k bits below the quantum reach 2^k, at and above one r; the tininess of the result
// at p bits is such a carry's negation, read at another quantum (underflow goes off at one r);
// overflow comes with the carry; inexact does not depend on r. So the code changes at most once
// as r grows, and so do the flags (underflow and overflow never both: no result is near both ends
// of the range).
template <class Core>
std::shared_ptr<const result_table> make_table(simd::lane_op op, const format& f, const rounding& r,
                                               const Core& core) {
  auto table = std::make_shared<result_table>();
  auto entry = [](const rounded& res) { return static_cast<std::uint16_t>(res.code | res.flags << 8); };
  // The operands of index i: (i) for sqrt, (i >> 8, i & 0xff) for pairs; for fma (x, y, i & 0xff),
  // (x, y) the pair whose results fill row i >> 8.
  std::vector<std::uint32_t> pair_of_row;
  if (op == simd::lane_op::fma) {
    table->operands = 3;
    table->rows.resize((1u << 16) + 1);  // (a spare row index and entry: simd::look_up reads 32-bit words)
    std::unordered_map<std::uint64_t, std::uint16_t> row_of;
    for (std::uint32_t i = 0; i < 1u << 16; ++i) {
      const auto [it, added] = row_of.try_emplace(product_key(f, i >> 8, i & 0xff), pair_of_row.size());
      if (added) {
        if (pair_of_row.size() == kRows) return nullptr;
        pair_of_row.push_back(i);
      }
      table->rows[i] = it->second;
    }
  } else {
    table->operands = op == simd::lane_op::sqrt ? 1 : 2;
  }
  const std::uint32_t indices = table->operands == 1   ? 1u << 8
                                : table->operands == 2 ? 1u << 16
                                                       : static_cast<std::uint32_t>(pair_of_row.size() << 8);
  auto result = [&](std::uint32_t i, std::uint64_t random) {
    if (table->operands == 3) {
      const std::uint32_t pair = pair_of_row[i >> 8];
      return entry(core(pair >> 8, pair & 0xff, i & 0xff, random));
    }
    return entry(table->operands == 1 ? core(i, 0, 0, random) : core(i >> 8, i & 0xff, 0, random));
  };
  // Index by index on the pool (the core's results do not depend on the thread).
  auto each_index = [&](const auto& fill) {
    detail::parallel_chunks(indices, threads_for(indices, 1), 256, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) fill(static_cast<std::uint32_t>(i));
    });
  };
  if (r.mode != round_mode::stochastic) {
    table->entries.resize(indices + 1);  // (a spare entry: simd::look_up reads 32-bit words)
    each_index([&](std::uint32_t i) { table->entries[i] = result(i, 0); });
    return table;
  }
  table->random_bits = r.sr_bits;
  const std::uint32_t top = (std::uint32_t{1} << r.sr_bits) - 1;
  table->entries.resize(4 * std::size_t{indices});
  table->words.resize(indices);
  each_index([&](std::uint32_t i) {
    const std::uint16_t first = result(i, 0), last = result(i, top);
    // The last random value whose result has first's bits under mask (0xffff where last's has them too).
    auto last_as_first = [&](unsigned mask) -> std::uint16_t {
      if ((first & mask) == (last & mask)) return 0xffff;
      std::uint32_t as_first = 0, as_last = top;
      while (as_last - as_first > 1) {
        const std::uint32_t mid = as_first + (as_last - as_first) / 2;
        ((result(i, mid) & mask) == (first & mask) ? as_first : as_last) = mid;
      }
      return static_cast<std::uint16_t>(as_first);
    };
    std::uint16_t* e = &table->entries[4 * std::size_t{i}];
    e[0] = first;
    e[1] = last;
    e[2] = last_as_first(0xff);
    e[3] = last_as_first(0xff00);
    static_assert((flag::invalid | flag::divide_by_zero | flag::overflow | flag::underflow | flag::inexact) < 0x80,
                  "an entry's bit 15 is free");
    const bool by_one = e[3] == 0xffff && (e[2] == 0xffff || last == first + 1);
    table->words[i] = first | (by_one ? 0u : 0x8000u) | std::uint32_t{e[2]} << 16;
  });
  return table;
}

// The table of op, f and r, once made, counting n more elements asked of it; null where the op
// is not tabulated, or not yet. `lanes`: whether lanes cover the op (simd::op_lanes).
template <class Core>
std::shared_ptr<const result_table> table_for(simd::lane_op op, const format& f, const rounding& r, std::size_t n,
                                              bool lanes, const Core& core) {
  const bool random = is_stochastic(r.mode);
  if (width(f) > 8 || (random && (r.mode != round_mode::stochastic || r.sr_bits > 16)))
    return nullptr;
  table_cache& cache = tables();
  const std::lock_guard lock(cache.mutex);
  std::deque<tabulated>& made = cache.made;
  auto it =
      std::find_if(made.begin(), made.end(), [&](const tabulated& t) { return t.op == op && t.f == f && t.r == r; });
  if (it == made.end()) {
    if (made.size() == kRecords) made.pop_front();
    it = made.insert(made.end(), tabulated{op, f, r, 0, false, nullptr});
  }
  // (stochastically at most k + 2 calls an index: the bisection of the code's or the flags' step)
  const std::size_t calls = (op == simd::lane_op::sqrt  ? std::size_t{1} << 8
                             : op == simd::lane_op::fma ? std::size_t{1} << 19
                                                        : std::size_t{1} << 16) *
                            (random ? r.sr_bits + 2 : 1);
  if (it->table || it->declined || (it->asked += n) < calls * (lanes ? kLanesPerCall : 1)) return it->table;
  it->table = make_table(op, f, r, core);
  it->declined = it->table == nullptr;
  std::size_t kept = 0;
  for (const tabulated& t : made) kept += t.table ? t.table->bytes() : 0;
  for (tabulated& t : made) {  // the oldest first
    if (kept <= kTableBytes) break;
    if (!t.table || &t == &*it) continue;
    kept -= t.table->bytes();
    t.table = nullptr;
    t.asked = 0;
  }
  return it->table;
}

// The op by its table (see above), on codes of any width: the core reads only a code's low
// width(f) <= 8 bits, which the table's index holds.
template <class Code>
std::uint8_t apply_table(const result_table& table, const Code* a, const Code* b, const Code* c, std::span<Code> out,
                         const sr_stream& sr, std::span<std::uint8_t> flags) {
  return for_each_piece(out.size(), [&](std::size_t begin, std::size_t end) {
    std::uint32_t random[kPiece];  // element i's random bits, as everywhere (array_random_width: 16)
    if (table.random_bits) simd::fill_keystream(sr.seed, sr.stream, sr.first_index + begin, end - begin, 16, random);
    return simd::look_up(table.view(), a + begin, (b ? b : a) + begin, (c ? c : a) + begin, end - begin,
                         out.data() + begin, flags.empty() ? nullptr : flags.data() + begin,
                         table.random_bits ? random : nullptr);
  });
}

// Through the table where there is one (formats of at most 8 bits), else through the lane kernels
// where simd::op_lanes covers the op, block by block (the lanes' exact or rounded-to-odd results
// rounded once into f by the encode kernels, with element i's random bits as everywhere, and the
// flags the arithmetic raised or-ed in), and the elements they leave to the core (bf16 lanes beyond
// binary32's exact range, inexact sr-exact lanes and the like); every element through the core
// where neither covers the op.
template <class Code, class Core>
std::uint8_t apply_lanes(simd::lane_op op, const format& f, const Code* a, const Code* b, const Code* c,
                         std::span<Code> out, const rounding& r, const sr_stream& sr, std::span<std::uint8_t> flags,
                         const Core& core) {
  const simd::op_path path = simd::op_lanes(op, f, r);
  if (const auto table = table_for(op, f, r, out.size(), path != simd::op_path::core, core))
    return apply_table(*table, a, b, c, out, sr, flags);
  // Element j through the core: its result stored, its flags returned.
  auto one = [&](std::size_t j, std::uint64_t random) {
    const rounded res = core(a[j], b ? b[j] : 0, c ? c[j] : 0, random);
    out[j] = static_cast<Code>(res.code);
    return res.flags;
  };
  if (path == simd::op_path::core) return for_each_element(out.size(), r, sr, flags, one);
  rounded infinite_quotient[2] = {};  // by sign: the listed x / 0 (simd::kInfiniteQuotient)
  if (op == simd::lane_op::div)
    for (const bool negative : {false, true})
      infinite_quotient[negative] =
          round_exact(f, exact_result{unpacked{value_class::infinite, negative}, flag::divide_by_zero}, r);
  // fp16 and bf16 codes into two-byte codes without per-element flags in one pass
  // (simd::one_pass_op) where it serves, which stops at a vector that may raise a flag not seen yet
  // in its chunk or needs the core: that vector, one of 16 lanes or two of 8, goes through the two
  // passes, and the pass resumes.
  bool one_pass = false;
  if constexpr (std::is_same_v<Code, std::uint16_t>) one_pass = flags.empty() && simd::one_pass_ops(op, f, r);
  constexpr std::size_t kOnePassStop = 16;
  return for_each_piece(out.size(), [&](std::size_t begin, std::size_t end, std::uint8_t seen) {
    // The two passes a block at a time: its results and special indices stay in the caches
    // between them (blocks of 512 to 4096 elements ran alike).
    constexpr std::size_t kBlock = kPiece;
    union {
      float as_float[kBlock];
      double as_double[kBlock];
    } z;
    std::uint32_t special[kBlock];
    std::uint8_t all = 0;
    auto two_passes = [&](std::size_t i, std::size_t m) {
      const Code* bi = (b ? b : a) + i;  // (ops without b or c do not read them)
      const Code* ci = (c ? c : a) + i;
      std::uint8_t* fl = flags.empty() ? nullptr : flags.data() + i;
      std::size_t specials = 0;
      // Without per-element flags the lanes that only raised a flag are not listed: their union
      // is all that is kept.
      std::uint8_t* raised = fl ? nullptr : &all;
      if (path == simd::op_path::binary32) {
        specials = simd::op_floats(op, f, a + i, bi, ci, m, r, z.as_float, special, out.data() + i, raised);
        all |= simd::encode_floats(f, r, z.as_float, m, keystream_at(sr, i), out.data() + i, nullptr, fl);
      } else {
        specials = simd::op_doubles(op, f, a + i, bi, ci, m, r, z.as_double, special, out.data() + i, raised);
        all |= simd::encode_doubles(f, r, z.as_double, m, keystream_at(sr, i), out.data() + i, fl);
      }
      for (std::size_t k = 0; k < specials; ++k) {
        const std::size_t j = i + (special[k] & simd::kLaneIndexMask);
        const auto raised = static_cast<std::uint8_t>(special[k] >> simd::kLaneIndexBits);
        if (raised == simd::kInfiniteQuotient) {
          const rounded& q = infinite_quotient[((a[j] ^ b[j]) & sign_mask(f)) != 0];
          out[j] = static_cast<Code>(q.code);
          if (fl) flags[j] = q.flags;
          all |= q.flags;
          continue;
        }
        if (raised != 0) {
          if (fl) flags[j] |= raised;  // the arithmetic's flags beside the encoding's
          all |= raised;
          continue;
        }
        const std::uint8_t fj = one(j, core_random(r, sr, j));
        if (fl) flags[j] = fj;
        all |= fj;
      }
    };
    if constexpr (std::is_same_v<Code, std::uint16_t>) {
      if (one_pass) {
        for (std::size_t i = begin; i < end;) {
          i = simd::one_pass_op(op, f, r, sr, a, b ? b : a, c ? c : a, i, end, out.data(), seen | all);
          if (i == end) break;
          const std::size_t m = std::min(kOnePassStop, end - i);
          two_passes(i, m);
          i += m;
        }
        return all;
      }
    }
    for (std::size_t i = begin; i < end; i += kBlock) two_passes(i, std::min(kBlock, end - i));
    return all;
  });
}

std::optional<error> check_float_valued(const format& f, std::string_view what) {
  if (simd::values_are_floats(f)) return std::nullopt;
  return error{std::string(what) + ": format " + to_string(f) +
               " has values that are not binary32 values (it needs a signed format with zero, subnormals, "
               "1..22 fraction bits and normal exponents within binary32's normal range); use the codes instead"};
}

}  // namespace

expected<std::uint8_t> round_array(const format& f, std::span<const double> in, std::span<std::uint32_t> out,
                                   const rounding& r, sr_stream sr, std::span<std::uint8_t> flags) {
  return round_span(f, in, out, r, sr, flags);
}

expected<std::uint8_t> round_array(const format& f, std::span<const float> in, std::span<std::uint32_t> out,
                                   const rounding& r, sr_stream sr, std::span<std::uint8_t> flags) {
  return round_span(f, in, out, r, sr, flags);
}

expected<std::uint8_t> round_array(const format& f, std::span<const double> in, std::span<std::uint16_t> out,
                                   const rounding& r, sr_stream sr, std::span<std::uint8_t> flags) {
  return round_span(f, in, out, r, sr, flags);
}

expected<std::uint8_t> round_array(const format& f, std::span<const float> in, std::span<std::uint16_t> out,
                                   const rounding& r, sr_stream sr, std::span<std::uint8_t> flags) {
  return round_span(f, in, out, r, sr, flags);
}

expected<std::uint8_t> round_array(const format& f, std::span<const double> in, std::span<std::uint8_t> out,
                                   const rounding& r, sr_stream sr, std::span<std::uint8_t> flags) {
  return round_span(f, in, out, r, sr, flags);
}

expected<std::uint8_t> round_array(const format& f, std::span<const float> in, std::span<std::uint8_t> out,
                                   const rounding& r, sr_stream sr, std::span<std::uint8_t> flags) {
  return round_span(f, in, out, r, sr, flags);
}

expected<std::uint8_t> round_array_given_bits(const format& f, std::span<const float> in, std::span<std::uint32_t> out,
                                              const rounding& r, std::span<const std::uint32_t> random,
                                              std::span<std::uint8_t> flags) {
  return round_given(f, in, out, r, random, flags);
}

expected<std::uint8_t> round_array_given_bits(const format& f, std::span<const float> in, std::span<std::uint16_t> out,
                                              const rounding& r, std::span<const std::uint32_t> random,
                                              std::span<std::uint8_t> flags) {
  return round_given(f, in, out, r, random, flags);
}

expected<std::uint8_t> round_array_given_bits(const format& f, std::span<const float> in, std::span<std::uint8_t> out,
                                              const rounding& r, std::span<const std::uint32_t> random,
                                              std::span<std::uint8_t> flags) {
  return round_given(f, in, out, r, random, flags);
}

void set_array_threads(int n) { g_threads.store(std::max(n, 0)); }

int array_threads() {
  const int n = g_threads.load();
  if (n > 0) return n;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

expected<std::uint8_t> round_in_place(const format& f, std::span<float> x, const rounding& r, sr_stream sr,
                                      std::span<std::uint8_t> flags) {
  if (auto e = check_format(f, "format")) return *e;
  if (auto e = check_rounding(f, r)) return *e;
  if (auto e = check_float_valued(f, "round_in_place")) return *e;
  if (auto e = check_sizes({{"x", x.size()}}, flags.size())) return *e;
  if (simd::can_encode(f, r, false)) {
    return for_each_piece(x.size(), [&](std::size_t b, std::size_t e) {
      return simd::encode_floats(f, r, x.data() + b, e - b, keystream_at(sr, b), nullptr, x.data() + b,
                                 flags.empty() ? nullptr : flags.data() + b);
    });
  }
  return for_each_element(x.size(), r, sr, flags, [&](std::size_t i, std::uint64_t random) {
    const rounded res = from(f, x[i], r, random);
    x[i] = code_to_float(f, res.code);
    return res.flags;
  });
}

template <code_word In, code_word Out>
expected<std::uint8_t> convert_array(const format& to, const format& from_format, std::span<const In> in,
                                     std::span<Out> out, const rounding& r, sr_stream sr,
                                     std::span<std::uint8_t> flags) {
  if (auto e = check_format(to, "target format")) return *e;
  if (auto e = check_format(from_format, "source format")) return *e;
  if (auto e = check_code_width<In>(from_format, "'in' holds")) return *e;
  if (auto e = check_code_width<Out>(to, "'out' holds")) return *e;
  if (auto e = check_rounding(to, r)) return *e;
  if (auto e = check_sizes({{"in", in.size()}, {"out", out.size()}}, flags.size())) return *e;
  // Decoding is exact, so this is still one rounding per element. A binary32 NaN cannot carry a
  // signaling NaN's `invalid`, and binary32's infinity is not the target's under every policy
  // (saturate): the elements whose decoded value (`value_bits(i)`) is an infinity or a NaN take
  // the core's result.
  const auto core_where_non_finite = [&](std::size_t b, std::size_t e, auto value_bits) {
    std::uint8_t all = 0;
    for (std::size_t i = b; i < e; ++i) {
      if ((value_bits(i) & 0x7f800000u) != 0x7f800000u) continue;
      const rounded res = convert(to, from_format, in[i], r, core_random(r, sr, i));
      out[i] = static_cast<Out>(res.code);
      if (!flags.empty()) flags[i] = res.flags;
      all |= res.flags;
    }
    return all;
  };
  const bool floats = simd::values_are_floats(from_format);
  if constexpr (sizeof(Out) == 4) {  // binary32 codes take no fewer bytes (check_code_width)
    if (floats && to == formats::fp32) {
      // No rounding at all: the values are the codes, streamed straight into `out` by one call a
      // chunk, as decode_array's (pieces of 65536 elements, a store fence each, ran Python's
      // decode into float32 at 0.79 of decode_array's rate; bench/bench_python.py, Zen 5).
      if (!flags.empty()) std::fill(flags.begin(), flags.end(), std::uint8_t{0});
      std::atomic<std::uint8_t> all{0};
      const bool stream = in.size() >= kStreamFrom;
      detail::parallel_chunks(in.size(), threads_for(in.size()), kPiece, [&](std::size_t b, std::size_t e) {
        if (simd::decode_binary32(from_format, in.data() + b, e - b, out.data() + b, stream))
          all.fetch_or(core_where_non_finite(b, e, [&](std::size_t i) { return out[i]; }));
      });
      return all.load();
    }
  }
  if (floats && simd::can_encode(to, r, false)) {
    return for_each_piece(in.size(), [&](std::size_t b, std::size_t e) {
      std::vector<float> values(e - b);
      bool non_finite = false;
      simd::decode_floats(from_format, in.data() + b, e - b, values.data(), false, &non_finite);
      std::uint8_t all = simd::encode_floats(to, r, values.data(), e - b, keystream_at(sr, b), out.data() + b, nullptr,
                                             flags.empty() ? nullptr : flags.data() + b);
      if (non_finite)
        all |= core_where_non_finite(b, e, [&](std::size_t i) { return std::bit_cast<std::uint32_t>(values[i - b]); });
      return all;
    });
  }
  return for_each_element(in.size(), r, sr, flags, [&](std::size_t i, std::uint64_t random) {
    const rounded res = convert(to, from_format, in[i], r, random);
    out[i] = static_cast<Out>(res.code);
    return res.flags;
  });
}

#define FPEMU_CONVERT_ARRAY(In)                                                                              \
  template expected<std::uint8_t> convert_array(const format&, const format&, std::span<const In>,          \
                                                std::span<std::uint8_t>, const rounding&, sr_stream,        \
                                                std::span<std::uint8_t>);                                   \
  template expected<std::uint8_t> convert_array(const format&, const format&, std::span<const In>,          \
                                                std::span<std::uint16_t>, const rounding&, sr_stream,       \
                                                std::span<std::uint8_t>);                                   \
  template expected<std::uint8_t> convert_array(const format&, const format&, std::span<const In>,          \
                                                std::span<std::uint32_t>, const rounding&, sr_stream,       \
                                                std::span<std::uint8_t>);
FPEMU_CONVERT_ARRAY(std::uint8_t)
FPEMU_CONVERT_ARRAY(std::uint16_t)
FPEMU_CONVERT_ARRAY(std::uint32_t)
#undef FPEMU_CONVERT_ARRAY

expected<std::uint8_t> convert_array(const format& to, const format& from, std::span<const std::uint32_t> in,
                                     std::span<std::uint32_t> out, const rounding& r, sr_stream sr,
                                     std::span<std::uint8_t> flags) {
  return convert_array<std::uint32_t, std::uint32_t>(to, from, in, out, r, sr, flags);
}

namespace {

// Exact (every value of a validated format is a binary64 value), so no flags are raised.
template <class Code>
expected<std::uint8_t> decode_codes(const format& f, std::span<const Code> codes, std::span<double> out) {
  if (auto e = check_format(f, "format")) return *e;
  if (auto e = check_code_width<Code>(f, "'codes' holds")) return *e;
  if (auto e = check_sizes({{"codes", codes.size()}, {"out", out.size()}}, 0)) return *e;
  const bool vector = simd::values_are_floats(f);
  const bool stream = codes.size() >= kStreamFrom / 2;  // as many bytes out as decode_array(float)'s
  detail::parallel_chunks(codes.size(), threads_for(codes.size()), kPiece, [&](std::size_t b, std::size_t e) {
    if (vector) return simd::decode_doubles(f, codes.data() + b, e - b, out.data() + b, stream);
    for (std::size_t i = b; i < e; ++i) out[i] = to_double(f, codes[i]);
  });
  return std::uint8_t{0};
}

template <class Code>
expected<std::uint8_t> decode_codes(const format& f, std::span<const Code> codes, std::span<float> out) {
  if (auto e = check_format(f, "format")) return *e;
  if (auto e = check_code_width<Code>(f, "'codes' holds")) return *e;
  if (auto e = check_float_valued(f, "decode_array")) return *e;
  if (auto e = check_sizes({{"codes", codes.size()}, {"out", out.size()}}, 0)) return *e;
  const bool stream = codes.size() >= kStreamFrom;
  detail::parallel_chunks(codes.size(), threads_for(codes.size()), kPiece, [&](std::size_t b, std::size_t e) {
    simd::decode_floats(f, codes.data() + b, e - b, out.data() + b, stream);
  });
  return std::uint8_t{0};
}

}  // namespace

#define FPEMU_DECODE_ARRAY(Code, T)                                                                          \
  expected<std::uint8_t> decode_array(const format& f, std::span<const Code> codes, std::span<T> out) {        \
    return decode_codes(f, codes, out);                                                                        \
  }
FPEMU_DECODE_ARRAY(std::uint32_t, double)
FPEMU_DECODE_ARRAY(std::uint32_t, float)
FPEMU_DECODE_ARRAY(std::uint16_t, double)
FPEMU_DECODE_ARRAY(std::uint16_t, float)
FPEMU_DECODE_ARRAY(std::uint8_t, double)
FPEMU_DECODE_ARRAY(std::uint8_t, float)
#undef FPEMU_DECODE_ARRAY

namespace {

template <class Code>
expected<std::uint8_t> apply_codes(array_op op, const format& f, std::span<const Code> a, std::span<const Code> b,
                                   std::span<Code> out, const rounding& r, sr_stream sr,
                                   std::span<std::uint8_t> flags) {
  if (auto e = check_format(f, "format")) return *e;
  if (auto e = check_code_width<Code>(f, "the operands and 'out' hold")) return *e;
  if (auto e = check_rounding(f, r)) return *e;
  if (auto e = check_sizes({{"a", a.size()}, {"b", b.size()}, {"out", out.size()}}, flags.size())) return *e;
  const simd::lane_op lane = op == array_op::add   ? simd::lane_op::add
                             : op == array_op::sub ? simd::lane_op::sub
                             : op == array_op::mul ? simd::lane_op::mul
                                                   : simd::lane_op::div;
  return apply_lanes(lane, f, a.data(), b.data(), static_cast<const Code*>(nullptr), out, r, sr, flags,
                     [&](std::uint32_t x, std::uint32_t y, std::uint32_t, std::uint64_t random) {
                       switch (op) {
                         case array_op::add: return add(f, x, y, r, random);
                         case array_op::sub: return sub(f, x, y, r, random);
                         case array_op::mul: return mul(f, x, y, r, random);
                         case array_op::div: break;
                       }
                       return div(f, x, y, r, random);
                     });
}

template <class Code>
expected<std::uint8_t> apply_fma_codes(const format& f, std::span<const Code> a, std::span<const Code> b,
                                       std::span<const Code> c, std::span<Code> out, const rounding& r, sr_stream sr,
                                       std::span<std::uint8_t> flags) {
  if (auto e = check_format(f, "format")) return *e;
  if (auto e = check_code_width<Code>(f, "the operands and 'out' hold")) return *e;
  if (auto e = check_rounding(f, r)) return *e;
  if (auto e = check_sizes({{"a", a.size()}, {"b", b.size()}, {"c", c.size()}, {"out", out.size()}}, flags.size()))
    return *e;
  return apply_lanes(simd::lane_op::fma, f, a.data(), b.data(), c.data(), out, r, sr, flags,
                     [&](std::uint32_t x, std::uint32_t y, std::uint32_t z, std::uint64_t random) {
                       return fma(f, x, y, z, r, random);
                     });
}

template <class Code>
expected<std::uint8_t> apply_sqrt_codes(const format& f, std::span<const Code> a, std::span<Code> out,
                                        const rounding& r, sr_stream sr, std::span<std::uint8_t> flags) {
  if (auto e = check_format(f, "format")) return *e;
  if (auto e = check_code_width<Code>(f, "the operands and 'out' hold")) return *e;
  if (auto e = check_rounding(f, r)) return *e;
  if (auto e = check_sizes({{"a", a.size()}, {"out", out.size()}}, flags.size())) return *e;
  return apply_lanes(simd::lane_op::sqrt, f, a.data(), static_cast<const Code*>(nullptr),
                     static_cast<const Code*>(nullptr), out, r, sr, flags,
                     [&](std::uint32_t x, std::uint32_t, std::uint32_t, std::uint64_t random) {
                       return sqrt(f, x, r, random);
                     });
}

}  // namespace

expected<std::uint8_t> apply(array_op op, const format& f, std::span<const std::uint32_t> a,
                             std::span<const std::uint32_t> b, std::span<std::uint32_t> out, const rounding& r,
                             sr_stream sr, std::span<std::uint8_t> flags) {
  return apply_codes(op, f, a, b, out, r, sr, flags);
}

expected<std::uint8_t> apply_fma(const format& f, std::span<const std::uint32_t> a, std::span<const std::uint32_t> b,
                                 std::span<const std::uint32_t> c, std::span<std::uint32_t> out, const rounding& r,
                                 sr_stream sr, std::span<std::uint8_t> flags) {
  return apply_fma_codes(f, a, b, c, out, r, sr, flags);
}

expected<std::uint8_t> apply_sqrt(const format& f, std::span<const std::uint32_t> a, std::span<std::uint32_t> out,
                                  const rounding& r, sr_stream sr, std::span<std::uint8_t> flags) {
  return apply_sqrt_codes(f, a, out, r, sr, flags);
}

expected<std::uint8_t> apply(array_op op, const format& f, std::span<const std::uint16_t> a,
                             std::span<const std::uint16_t> b, std::span<std::uint16_t> out, const rounding& r,
                             sr_stream sr, std::span<std::uint8_t> flags) {
  return apply_codes(op, f, a, b, out, r, sr, flags);
}

expected<std::uint8_t> apply_fma(const format& f, std::span<const std::uint16_t> a, std::span<const std::uint16_t> b,
                                 std::span<const std::uint16_t> c, std::span<std::uint16_t> out, const rounding& r,
                                 sr_stream sr, std::span<std::uint8_t> flags) {
  return apply_fma_codes(f, a, b, c, out, r, sr, flags);
}

expected<std::uint8_t> apply_sqrt(const format& f, std::span<const std::uint16_t> a, std::span<std::uint16_t> out,
                                  const rounding& r, sr_stream sr, std::span<std::uint8_t> flags) {
  return apply_sqrt_codes(f, a, out, r, sr, flags);
}

expected<std::uint8_t> apply(array_op op, const format& f, std::span<const std::uint8_t> a,
                             std::span<const std::uint8_t> b, std::span<std::uint8_t> out, const rounding& r,
                             sr_stream sr, std::span<std::uint8_t> flags) {
  return apply_codes(op, f, a, b, out, r, sr, flags);
}

expected<std::uint8_t> apply_fma(const format& f, std::span<const std::uint8_t> a, std::span<const std::uint8_t> b,
                                 std::span<const std::uint8_t> c, std::span<std::uint8_t> out, const rounding& r,
                                 sr_stream sr, std::span<std::uint8_t> flags) {
  return apply_fma_codes(f, a, b, c, out, r, sr, flags);
}

expected<std::uint8_t> apply_sqrt(const format& f, std::span<const std::uint8_t> a, std::span<std::uint8_t> out,
                                  const rounding& r, sr_stream sr, std::span<std::uint8_t> flags) {
  return apply_sqrt_codes(f, a, out, r, sr, flags);
}

bool simd::has_table(lane_op op, const format& f, const rounding& r) {
  table_cache& cache = tables();
  const std::lock_guard lock(cache.mutex);
  return std::any_of(cache.made.begin(), cache.made.end(),
                     [&](const tabulated& t) { return t.op == op && t.f == f && t.r == r && t.table; });
}

}  // namespace fpemu
