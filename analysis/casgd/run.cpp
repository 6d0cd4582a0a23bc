// CA-SGD outer iterations with nine precision slots (Devarakonda et al. 2026, Algorithm 1;
// run.hpp).
#include "analysis/casgd/run.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <span>
#include <thread>

#include "analysis/reference/gemm.hpp"
#include "analysis/reference/gemm_kernels.hpp"
#include "analysis/reference/parallel_rows.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/interrupt.hpp"
#include "fpemu/detail/bits.hpp"
#include "fpemu/random.hpp"
#include "fpemu/round_float.hpp"

namespace fpemu::casgd {

namespace {

constexpr std::uint32_t kSampleStream = 0x63617367;  // "casg": apart from every rounding stream

std::size_t idx(long v) { return static_cast<std::size_t>(v); }

// The exact value of a code; binary32 codes (the usual accumulator) without the core's decode.
double code_value(const format& f, std::uint32_t code) {
  if (f == formats::fp32) return std::bit_cast<float>(code);
  return to_double(f, code);
}

std::uint32_t to_code(const precision& p, double v) {
  if (p.is_host_fp32()) return std::bit_cast<std::uint32_t>(static_cast<float>(v));
  // Values that are floats (every stored value of a format up to binary32) take the core's
  // binary32 short path.
  if (const auto f = static_cast<float>(v); static_cast<double>(f) == v) return round_float(*p.fmt, f, p.r).code;
  return from(*p.fmt, v, p.r).code;
}

// The format a kernel's GEMM writes: the output's, or (binary64 output) the accumulator's own,
// which a double then holds exactly.
format gemm_output_format(const kernel_precision& k) {
  if (k.output.fmt) return *k.output.fmt;
  const accumulator_model& m = *k.acc;
  if (m.promote_every > 0) return m.promoted;
  switch (m.kind) {
    case accumulator_kind::format: return m.acc;
    case accumulator_kind::block_fma: return m.block.acc;
    case accumulator_kind::exact: return formats::fp32;
  }
  return formats::fp32;
}

// A kernel operand rounded into the kernel's input precision once: codes for an emulated
// accumulator, values for a binary64 one.
struct operand {
  std::vector<std::uint32_t> codes;
  std::vector<double> values;
};

operand prepare(const kernel_precision& k, const std::vector<double>& v) {
  operand o;
  if (k.acc) {
    o.codes.resize(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) o.codes[i] = to_code(k.input, v[i]);
  } else {
    o.values = v;
    if (k.input.fmt)
      for (double& x : o.values) x = round_to(k.input, x);
  }
  return o;
}

// The leading `cols` columns of a rows x width operand.
operand leading_columns(const operand& a, int rows, int width, int cols) {
  operand out;
  auto take = [&](const auto& from_v, auto& to_v) {
    if (from_v.empty()) return;
    to_v.resize(idx(rows) * idx(cols));
    for (int i = 0; i < rows; ++i)
      std::copy_n(from_v.begin() + static_cast<std::ptrdiff_t>(idx(i) * idx(width)), cols,
                  to_v.begin() + static_cast<std::ptrdiff_t>(idx(i) * idx(cols)));
  };
  take(a.codes, out.codes);
  take(a.values, out.values);
  return out;
}

// C (M x N) = A (M x K) B (K x N), all row-major, in the kernel's precision; A starts at row
// a_row of its operand.
std::vector<double> product(const kernel_precision& k, const operand& a, int a_row, const operand& b, int M, int N,
                            int K, int threads) {
  const std::size_t MN = idx(M) * idx(N), a0 = idx(a_row) * idx(K);
  std::vector<double> c(MN, 0.0);
  if (!k.acc) {
    // binary64 accumulation in natural K order.
    for (int i = 0; i < M; ++i) {
      double* row = c.data() + idx(i) * idx(N);
      for (int kk = 0; kk < K; ++kk) {
        const double x = a.values[a0 + idx(i) * idx(K) + idx(kk)];
        const double* bk = b.values.data() + idx(kk) * idx(N);
        for (int j = 0; j < N; ++j) row[j] += x * bk[j];
      }
    }
    if (k.output.fmt)
      for (double& v : c) v = round_to(k.output, v);
    return c;
  }
  const std::span<const std::uint32_t> ac(a.codes.data() + a0, idx(M) * idx(K));
  // gemm's own fast kernels give the accumulator codes; where the output holds the accumulator
  // exactly its epilogue (one rounding of 1 * acc + 0) is the identity, so it is skipped.
  if (auto fast = analysis::fast_accumulate(*k.input.fmt, ac, *k.input.fmt, b.codes, M, N, K, *k.acc, threads);
      fast && (k.output.is_binary64() || *k.output.fmt == fast->fmt)) {
    for (std::size_t i = 0; i < MN; ++i) c[i] = code_value(fast->fmt, fast->codes[i]);
    return c;
  }
  analysis::scaled_matrix am, bm;
  am.rows = M;
  am.cols = K;
  am.fmt = *k.input.fmt;
  am.codes.assign(ac.begin(), ac.end());
  bm.rows = K;
  bm.cols = N;
  bm.fmt = *k.input.fmt;
  bm.codes = b.codes;
  analysis::gemm_options opt;
  opt.acc = *k.acc;
  opt.out = gemm_output_format(k);
  opt.threads = threads;
  auto d = analysis::gemm(am, bm, {}, opt);
  // The shapes are consistent by construction and no group scaling is used.
  for (std::size_t i = 0; i < MN; ++i) c[i] = code_value(opt.out, d->at(i));
  return c;
}

std::vector<double> kernel_product(const kernel_precision& k, const std::vector<double>& a,
                                   const std::vector<double>& b, int M, int N, int K, int threads) {
  return product(k, prepare(k, a), 0, prepare(k, b), M, N, K, threads);
}

std::vector<double> transpose(const std::vector<double>& a, int rows, int cols) {
  std::vector<double> t(a.size());
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) t[idx(j) * idx(rows) + idx(i)] = a[idx(i) * idx(cols) + idx(j)];
  return t;
}

// Entries of the strict block-lower part of an sb x sb matrix, packed row by row: row
// (j, i) with j >= 1 holds columns 0..jb-1 and starts at b^2 j(j-1)/2 + i j b.
std::size_t lower_offset(int b, int j, int i) {
  return idx(b) * idx(b) * idx(j) * idx(j - 1) / 2 + idx(i) * idx(j) * idx(b);
}
std::size_t lower_size(int b, int s) { return lower_offset(b, s, 0); }

// The Gram's strict block-lower part of Y (sb x w), packed: block row j (rows jb..jb+b-1) is
// Y_j times Y_{<j}^T, b x jb, each entry its own dot product in natural order, so the entries
// are those a full Gram GEMM produces, at half its work.
std::vector<double> gram_lower(const kernel_precision& k, const std::vector<double>& Y, int b, int s, int w,
                               int threads) {
  std::vector<double> packed(lower_size(b, s));
  const operand rows = prepare(k, Y), cols = prepare(k, transpose(Y, s * b, w));
  for (int j = 1; j < s; ++j) {
    const std::vector<double> block = product(k, rows, j * b, leading_columns(cols, w, s * b, j * b), b, j * b, w, threads);
    std::copy(block.begin(), block.end(), packed.begin() + static_cast<std::ptrdiff_t>(lower_offset(b, j, 0)));
  }
  return packed;
}

}  // namespace

std::optional<std::string> check(const run_options& o, int m, int n) {
  if (m < 1 || n < 1) return "the data has no rows or no features";
  if (o.b < 1 || o.b > 65536) return "--b " + std::to_string(o.b) + " is out of range (1..65536)";
  if (o.s < 1 || o.s > 4096) return "--s " + std::to_string(o.s) + " is out of range (1..4096)";
  if (static_cast<long>(o.s) * o.b > 16384)
    return "s*b = " + std::to_string(static_cast<long>(o.s) * o.b) + " is too large (at most 16384 sampled rows per outer iteration)";
  if (o.P < 1 || o.P > n)
    return "--P " + std::to_string(o.P) + " is out of range (1..n = " + std::to_string(n) + ": every rank needs a column)";
  if (!std::isfinite(o.eta) || o.eta <= 0) {
    char eta[32];
    std::snprintf(eta, sizeof eta, "%.17g", o.eta);
    return "--eta " + std::string(eta) + " is out of range (finite, > 0)";
  }
  if (o.outer < 0 || o.outer > 100000000) return "--outer " + std::to_string(o.outer) + " is out of range (0..100000000)";
  if (o.threads < 0) return "--threads " + std::to_string(o.threads) + " is out of range (0 for all cores, or more)";
  for (const auto& [name, k] : {std::pair<slot, const kernel_precision*>{slot::G, &o.precision.G},
                                {slot::r, &o.precision.r},
                                {slot::g, &o.precision.g}}) {
    if (k->acc && !k->input.fmt)
      return std::string(to_string(name)) + ": an emulated accumulator (" + k->label +
             ") needs a format for its inputs, not fp64";
  }
  return std::nullopt;
}

column_blocks partition(const glm_data& d, int P, int first_local, int local_count) {
  column_blocks c;
  c.m = d.m;
  c.n = d.n;
  c.P = P;
  c.first_local = first_local;
  c.y = d.y;
  for (int p = 0; p <= P; ++p) c.lo.push_back(static_cast<int>(static_cast<long>(p) * d.n / P));
  for (int p = first_local; p < first_local + local_count; ++p) {
    const int w = c.width(p), lo = c.lo[idx(p)];
    std::vector<double> block(idx(d.m) * idx(w));
    for (int i = 0; i < d.m; ++i)
      std::copy_n(d.A.begin() + static_cast<std::ptrdiff_t>(idx(i) * idx(d.n) + idx(lo)), w,
                  block.begin() + static_cast<std::ptrdiff_t>(idx(i) * idx(w)));
    c.blocks.push_back(std::move(block));
  }
  return c;
}

rank_vectors zero_weights(const column_blocks& data) {
  rank_vectors x(data.blocks.size());
  for (std::size_t q = 0; q < x.size(); ++q) x[q].assign(idx(data.width(data.first_local + static_cast<int>(q))), 0.0);
  return x;
}

std::vector<std::int64_t> sample_rows(std::uint64_t seed, int m, std::int64_t first_draw, int count) {
  std::vector<std::int64_t> rows(idx(count));
  for (int k = 0; k < count; ++k) {
    const std::uint64_t bits = random_bits(seed, kSampleStream, static_cast<std::uint64_t>(first_draw + k));
    // floor(bits * m / 2^64): uniform up to a bias below m / 2^64.
    rows[idx(k)] = static_cast<std::int64_t>((static_cast<detail::u128>(bits) * static_cast<unsigned>(m)) >> 64);
  }
  return rows;
}

outer_result outer_iteration(const column_blocks& data, const run_options& o, const slots& sl, int h,
                             const rank_vectors& x, collective& comm) {
  const int b = o.b, s = o.s, sb = s * b;
  const double alpha = o.eta / b;
  outer_result out;
  out.rows = sample_rows(o.seed, data.m, static_cast<std::int64_t>(h) * sb, sb);

  const std::size_t local = data.blocks.size();
  // Simulated ranks run side by side, each kernel on one thread; a lone rank's kernels use the
  // threads. Either way every value is computed in one fixed order, whatever the thread count.
  const int hw = o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int rank_threads = local > 1 ? hw : 1, kernel_threads = local > 1 ? 1 : hw;
  std::vector<std::vector<double>> Y(local), r_loc(local), G_loc(local);
  analysis::parallel_rows(static_cast<int>(local), rank_threads, [&](int q0, int q1) {
  for (std::size_t q = idx(q0); q < idx(q1); ++q) {
    const int w = data.width(data.first_local + static_cast<int>(q));
    std::vector<double>& y = Y[q];
    y.resize(idx(sb) * idx(w));
    for (int k = 0; k < sb; ++k) {
      const double* src = data.blocks[q].data() + idx(out.rows[idx(k)]) * idx(w);
      for (int c = 0; c < w; ++c) y[idx(k) * idx(w) + idx(c)] = round_to(sl.A, src[c]);
    }
    r_loc[q] = kernel_product(sl.r, y, x[q], sb, 1, w, kernel_threads);
    if (s > 1) G_loc[q] = gram_lower(sl.G, y, b, s, w, kernel_threads);
  }
  });
  // A Ctrl-C skips the ranks not yet started (parallel_rows), whose vectors stay empty: the
  // iteration stops here with the weights unchanged, and run()'s loop ends.
  if (interrupted()) {
    out.x = x;
    return out;
  }
  const std::vector<double> r = comm.allreduce(r_loc, o.algorithm, sl.AR_r);
  const std::vector<double> G = s > 1 ? comm.allreduce(G_loc, o.algorithm, sl.AR_G) : std::vector<double>{};

  // The inner s-step loop runs redundantly on every rank, in u_c and u_sigma.
  std::vector<double>& delta = out.delta;
  delta.assign(idx(sb), 0.0);
  for (int j = 0; j < s; ++j)
    for (int i = 0; i < b; ++i) {
      const int row = j * b + i;
      double z = round_to(sl.c, r[idx(row)]);
      if (j > 0) {
        const double* g = G.data() + lower_offset(b, j, i);
        double t = 0;
        for (int c = 0; c < j * b; ++c) t = fma_in(sl.c, g[c], delta[idx(c)], t);
        z = fma_in(sl.c, alpha, t, z);
      }
      delta[idx(row)] = round_to(sl.sigma, residual(o.loss, z, data.y[idx(out.rows[idx(row)])]));
    }

  out.x.resize(local);
  analysis::parallel_rows(static_cast<int>(local), rank_threads, [&](int q0, int q1) {
    for (std::size_t q = idx(q0); q < idx(q1); ++q) {
      const int w = data.width(data.first_local + static_cast<int>(q));
      const std::vector<double> g = kernel_product(sl.g, transpose(Y[q], sb, w), delta, w, 1, sb, kernel_threads);
      out.x[q] = x[q];
      for (int c = 0; c < w; ++c) out.x[q][idx(c)] = fma_in(sl.x, alpha, g[idx(c)], x[q][idx(c)]);
    }
  });
  return out;
}

double loss_at(const column_blocks& data, loss_kind l, const rank_vectors& x, collective& comm) {
  rank_vectors partial(data.blocks.size());
  for (std::size_t q = 0; q < data.blocks.size(); ++q) {
    const int w = data.width(data.first_local + static_cast<int>(q));
    partial[q].assign(idx(data.m), 0.0);
    for (int i = 0; i < data.m; ++i) {
      const double* row = data.blocks[q].data() + idx(i) * idx(w);
      double sum = 0;
      for (int c = 0; c < w; ++c) sum += row[c] * x[q][idx(c)];
      partial[q][idx(i)] = sum;
    }
  }
  return mean_loss(l, comm.sum_in_rank_order(partial), data.y);
}

rank_vectors run(const column_blocks& data, const run_options& o, int eval_every, collective& comm,
                 const run_hooks& hooks) {
  rank_vectors x = zero_weights(data);
  auto evaluate = [&](int h) {
    const double loss = loss_at(data, o.loss, x, comm);
    if (hooks.evaluated) hooks.evaluated(h, loss);
  };
  evaluate(0);
  for (int h = 0; h < o.outer && !interrupted(); ++h) {
    if (hooks.before_outer) hooks.before_outer(h, x);
    x = outer_iteration(data, o, o.precision, h, x, comm).x;
    if ((h + 1) % eval_every == 0 || h + 1 == o.outer) evaluate(h + 1);
  }
  return x;
}

expected<local_error> local_error_at(const column_blocks& data, const run_options& o, int h, const rank_vectors& x,
                                     double C_P) {
  if (static_cast<int>(data.blocks.size()) != data.P)
    return error{"the error budget is computed in the simulated mode (all ranks in one process), not under mpirun"};
  const double L_sigma = lipschitz(o.loss);
  if (!std::isfinite(L_sigma))
    return error{"Theorem 5.7 covers residuals with a Lipschitz constant (logistic, linear); the " +
                 std::string(to_string(o.loss)) + " residual has none"};
  auto comm = simulated_collective(data.P);
  const outer_result exact = outer_iteration(data, o, all_binary64(), h, x, *comm);
  const outer_result hat = outer_iteration(data, o, o.precision, h, x, *comm);
  local_error e;
  e.h = h;
  e.C_P = C_P;
  double ss = 0;
  for (int p = 0; p < data.P; ++p)
    for (std::size_t c = 0; c < exact.x[idx(p)].size(); ++c) {
      const double diff = hat.x[idx(p)][c] - exact.x[idx(p)][c];
      ss += diff * diff;
    }
  e.measured = std::sqrt(ss);

  const int sb = o.s * o.b, n = data.n;
  std::vector<double> Y(idx(sb) * idx(n)), x0, x1;
  for (int p = 0; p < data.P; ++p) {
    const int w = data.width(p), lo = data.lo[idx(p)];
    for (int k = 0; k < sb; ++k)
      std::copy_n(data.blocks[idx(p)].begin() + static_cast<std::ptrdiff_t>(idx(exact.rows[idx(k)]) * idx(w)), w,
                  Y.begin() + static_cast<std::ptrdiff_t>(idx(k) * idx(n) + idx(lo)));
    x0.insert(x0.end(), x[idx(p)].begin(), x[idx(p)].end());
    x1.insert(x1.end(), exact.x[idx(p)].begin(), exact.x[idx(p)].end());
  }
  // D_delta bounds |delta| on the exact and the finite-precision margins of this comparison: 1
  // for logistic; for linear the largest residual either run met.
  double D = 1;
  if (o.loss != loss_kind::logistic) {
    D = 0;
    for (int k = 0; k < sb; ++k) D = std::max({D, std::abs(exact.delta[idx(k)]), std::abs(hat.delta[idx(k)])});
  }
  e.D_delta = D;
  const slots& sl = o.precision;
  int n_loc = 0;
  for (int p = 0; p < data.P; ++p) n_loc = std::max(n_loc, data.width(p));
  bound_inputs in;
  in.b = o.b;
  in.s = o.s;
  in.n = n;
  in.Y = Y;
  in.d = exact.delta;
  in.x_next = x1;
  in.x = x0;
  in.alpha = o.eta / o.b;
  in.L_sigma = L_sigma;
  in.D_delta = D;
  // The residual is evaluated in binary64 (a few ulps of error) and rounded once into u_sigma.
  in.C_delta = 1 + 16 * std::ldexp(1.0, -53) / sl.sigma.unit_roundoff();
  in.C_P = C_P;
  in.u_A = sl.A.unit_roundoff();
  in.u_c = sl.c.unit_roundoff();
  in.u_sigma = sl.sigma.unit_roundoff();
  in.u_AR_r = sl.AR_r.unit_roundoff();
  in.u_AR_G = sl.AR_G.unit_roundoff();
  in.u_x = sl.x.unit_roundoff();
  in.gamma_r = higham_factor(sl.r, n_loc);
  in.gamma_G = higham_factor(sl.G, n_loc);
  in.gamma_g = higham_factor(sl.g, sb);
  in.gamma_c = gamma(static_cast<long>(o.s - 1) * o.b, in.u_c);
  e.terms = theorem_5_7(in);
  return e;
}

}  // namespace fpemu::casgd
