"""
fpemu: bit-exact software emulation of floating-point formats (FP8, FP6, FP4, bf16, fp16, tf32,
fp32, eXmY). Formats are spec strings ('e4m3fn', 'bf16', 'e5m3:fn'), fpemu.format objects, or
dtypes that store one (ml_dtypes.float8_e4m3fn, numpy.float16, 'bfloat16'); rounding modes are
rne rna rz ru rd rto sr sr-exact; overflow policies ieee saturate nan.
Where a function takes codes of a format, an integer array holds codes, a typed array of that
format (float16, ml_dtypes' types) holds them in its bits, and any other float array holds
values, each of which must be one of the format's. Results follow the same rule, read from the
dtype= asked for or the out= array given: codes (integer dtypes; by default the storage width),
a typed array of the format, or values (float64, another format's dtype). Arguments are
array_like and broadcast as NumPy's; torch CPU tensors go in and come back without a copy.
Long calls release the GIL and stop on Ctrl-C; set_num_threads sets their threads.
Every rounding is the C++ core's; bad arguments raise ValueError with the library's message.
"""
from __future__ import annotations
import numpy
import numpy as _numpy
import typing
from . import bounds
__all__: list[str] = ['DIVIDE_BY_ZERO', 'INEXACT', 'INVALID', 'OVERFLOW', 'UNDERFLOW', 'accumulation_experiment', 'add', 'allreduce_cp', 'bounds', 'bytes_per_parameter', 'casgd', 'casgd_cost', 'casgd_radius', 'casgd_recipes', 'convert', 'decode', 'dequantise', 'div', 'dot', 'effective_unit_roundoff', 'fma', 'format', 'formats', 'gemm', 'gemm_recipes', 'get_num_threads', 'load_fashion_mnist', 'load_libsvm', 'mma', 'mul', 'optimizer', 'policy', 'presets', 'quantise', 'round', 'scaling_table', 'set_num_threads', 'sqrt', 'sub', 'sum', 'theorem1_floor', 'train']
class format:
    """
    A floating-point format: exponent and fraction widths, bias and encoding.
    """
    def __eq__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __hash__(self) -> int:
        ...
    def __init__(self, spec: typing.Any) -> None:
        """
        A format from its spec: a name (e4m3fn, bf16, ...) or eXmY[:bias=B][:nosub][:fn|fnuz|finite][:unsigned];
        or from a dtype that stores one (numpy.float16, ml_dtypes.float8_e4m3fn, 'bfloat16').
        """
    def __repr__(self) -> str:
        ...
    @property
    def bias(self) -> int:
        ...
    @property
    def emax(self) -> int:
        """
        Exponent of the largest finite.
        """
    @property
    def emin(self) -> int:
        """
        Exponent of the smallest normal.
        """
    @property
    def encoding(self) -> str:
        """
        ieee (inf, NaN), fn (NaN only), fnuz (NaN = 0x80, no -0) or finite
        """
    @property
    def exp_bits(self) -> int:
        ...
    @property
    def frac_bits(self) -> int:
        ...
    @property
    def has_inf(self) -> bool:
        ...
    @property
    def has_nan(self) -> bool:
        ...
    @property
    def is_signed(self) -> bool:
        ...
    @property
    def machine_epsilon(self) -> float:
        """
        2^(1-p).
        """
    @property
    def max_finite(self) -> float:
        ...
    @property
    def min_normal(self) -> float:
        ...
    @property
    def min_positive(self) -> float:
        """
        The smallest positive value (subnormal where the format has them).
        """
    @property
    def name(self) -> str:
        """
        The canonical spec.
        """
    @property
    def precision(self) -> int:
        """
        Significant bits p.
        """
    @property
    def subnormals(self) -> bool:
        ...
    @property
    def unit_roundoff(self) -> float:
        """
        u = 2^-p.
        """
    @property
    def width(self) -> int:
        """
        Bits per code.
        """
class optimizer:
    """
    An optimizer (sgd, adam, adamw, lion) under a precision policy, over numpy tensors.
    Follows torch.optim's single-tensor implementations operation by operation in binary32,
    so the fp32 policy reproduces PyTorch's trajectories bit for bit.
    """
    def __init__(self, kind: str, params: list[numpy.ndarray], policy: str = 'fp32', *, lr: float = 0.001, momentum: float = 0.0, dampening: float = 0.0, nesterov: bool = False, weight_decay: float = 0.0, beta1: float = 0.9, beta2: float | None = None, eps: float = 1e-08, seed: int = 0) -> None:
        """
        params: the initial tensors (float arrays, any shapes), rounded into the policy's storage
        with nearest-even. seed keys stochastic rounding.
        Hyper-parameters as in torch.optim: lr, momentum, dampening, nesterov (sgd), weight_decay (L2 for
        sgd and adam, decoupled for adamw and lion), beta1, beta2 (default 0.999, lion 0.99), eps.
        Policies: fp32 | mixed | mixed-fp16 | FMT[-kahan|-zamirai|-sr[K]][-ops], e.g. bf16, bf16-kahan,
        bf16-sr, bf16-sr8-ops (FMT a format whose values are binary32 values: bf16, fp16, tf32, ...).
        """
    def compensation(self, i: int) -> typing.Any:
        """
        The Kahan compensation of tensor i (kahan, kahan_zamirai policies), or None.
        """
    def state(self, i: int, k: int) -> typing.Any:
        """
        State k of tensor i (sgd: 0 momentum; adam/adamw: 0 exp_avg, 1 exp_avg_sq; lion: 0 m), or None.
        """
    def step(self, grads: list[numpy.ndarray]) -> None:
        """
        One step with one gradient per tensor (same shapes), rounded into the policy's gradient format.
        """
    def updated_weights(self, i: int) -> numpy.ndarray:
        """
        Tensor i as the update acts on it (the fp32 master under mixed), float32.
        """
    def weights(self, i: int) -> numpy.ndarray:
        """
        Tensor i as the model computes with it (the low-precision copy under mixed), float32.
        """
    @property
    def bytes(self) -> int:
        """
        Bytes held by weights, master copy, states and compensation.
        """
    @property
    def lr(self) -> float:
        """
        The learning rate (settable, for schedules).
        """
    @lr.setter
    def lr(self, arg1: float) -> None:
        ...
    @property
    def policy(self) -> policy:
        ...
    @property
    def steps(self) -> int:
        ...
    @property
    def tensors(self) -> int:
        ...
class policy:
    """
    A precision policy: where weights, states and gradients live and how updates are stored.
    """
    def __init__(self, name: str) -> None:
        """
        fp32 | mixed | mixed-fp16 | FMT[-kahan|-zamirai|-sr[K]][-ops].
        """
    def __repr__(self) -> str:
        ...
    @property
    def grads(self) -> format:
        ...
    @property
    def master(self) -> bool:
        ...
    @property
    def math(self) -> str:
        """
        fused: binary32 math, one rounding per stored tensor; per_op: every tensor operation rounded.
        """
    @property
    def name(self) -> str:
        ...
    @property
    def rule(self) -> str:
        """
        How the weight update is stored: nearest, kahan, kahan_zamirai or stochastic.
        """
    @property
    def sr_bits(self) -> int:
        ...
    @property
    def states(self) -> format:
        ...
    @property
    def weights(self) -> format:
        ...
def _check_numpy(version, supported):
    ...
def _numpy_release(text):
    """
    (major, minor) of a NumPy version string such as '2.4.6' or '2.5.0rc1'.
    """
def accumulation_experiment(ks: list[int], samples: int = 100, seed: int = 2025) -> list:
    """
    The FP8 accumulation table (DeepSeek-V3 2024) with the faithful models: dot products of K e4m3fn inputs from
    N(0, 0.5^2) accumulated in e4m3fn, on the H100 tensor core without promotion, with DeepSeek-V3
    promotion every 128 (before and after its bf16 epilogue) and in fp32; one dict per method and K
    with the mean and max relative error, the max error over sum |a_i b_i| and the bounds. The default
    seed is that of `fpemu demo` and the table of docs/accumulation.md.
    """
def add(a: typing.Any, b: typing.Any, fmt: typing.Any, *, mode: str = 'rne', overflow: str = 'ieee', sr_bits: int = 16, seed: int = 0, stream: int = 0, flags: bool = False, out: typing.Any = None, dtype: typing.Any = None) -> typing.Any:
    """
    add(a, b, fmt): a + b.
    
    Operands follow the module's one convention (integer arrays: codes; a dtype that stores fmt:
    its codes; other floats: values, each exactly one of fmt's) and broadcast as NumPy's do; each
    result is rounded once by the core in `mode` (stochastic: bits of element i from (seed, stream,
    i)). The result is written into `out` when given, else a new array of `dtype` (default: the
    first operand's dtype where it stores fmt, else codes at storage width); flags=True returns
    (result, per-element IEEE flags as uint8: fpemu.INVALID | DIVIDE_BY_ZERO | OVERFLOW |
    UNDERFLOW | INEXACT).
    """
def allreduce_cp(P: int, algorithm: str = 'ring', datatype: str = 'fp32', length: int = 4096, trials: int = 4, seed: int = 1) -> dict:
    """
    The AllReduce constant C(P) (Devarakonda et al. 2026, Figure 2): the largest |computed - exact| / (u sum |v_p|) over
    `trials` sets of P random N(0,1) rank vectors of `length` elements in datatype, for ring, rd
    (recursive doubling), tree or seq; worst_case is the paper's 2.4 P.
    """
def bytes_per_parameter(optimizer: str, policy: str, *, lr: float = 0.001, momentum: float = 0.0, dampening: float = 0.0, nesterov: bool = False, weight_decay: float = 0.0, beta1: float = 0.9, beta2: float | None = None, eps: float = 1e-08) -> dict:
    """
    Bytes per parameter as optimi's table (Warner 2023) counts them: dict with components [(name, bytes,
    optional)], min (required buffers) and max (with the optional ones).
    Hyper-parameters as in torch.optim: lr, momentum, dampening, nesterov (sgd), weight_decay (L2 for
    sgd and adam, decoupled for adamw and lion), beta1, beta2 (default 0.999, lion 0.99), eps.
    Policies: fp32 | mixed | mixed-fp16 | FMT[-kahan|-zamirai|-sr[K]][-ops], e.g. bf16, bf16-kahan,
    bf16-sr, bf16-sr8-ops (FMT a format whose values are binary32 values: bf16, fp16, tf32, ...).
    """
def casgd(data: str = 'synth:4096,256', *, loss: str = 'logistic', recipe: str = 'C', slots: list[str] = [], b: int = 32, s: int = 16, P: int = 1, eta: float = 0.5, outer: int = 200, seed: int = 42, data_seed: int = 1, allreduce: str = 'ring', eval_every: int | None = None, threads: int = 0, budget_at: int | None = None, cp: typing.Any = 'worst', mu_F: float | None = None, L_F: float | None = None, sigma_g2: float | None = None) -> dict:
    """
    CA-SGD (Devarakonda et al. 2026, Algorithm 1) on P simulated ranks with a Table 3 recipe (A..I) and slot overrides
    ('u_c=fp32', 'u_G=bf16,fp32', 'u_G=e4m3fn,h100-e4m3', ...). data: 'synth:M,N', 'heart_scale' or a
    LIBSVM/CSV file; rows are l2-normalised. s=1 is mini-batch SGD. Returns a dict: outer and sgd_steps
    of each evaluation (every eval_every outer iterations, default outer/20), loss F(x) there, the final
    weights x, slots, m, n, and with budget_at=h Theorem 5.7's budget at outer iteration h (E per slot,
    K_s, T_*, omega, tau_G, Omega, sum, bound, valid) next to the measured local error against a
    binary64 run from the same x and samples; cp: C(P) for it, 'worst' (2.4 P), 'nccl-fit' (4.62 P^0.56) or a number.
    budget['convergence'] is Theorem 5.9 with that budget as rho: R, mu_F, L_F, sigma_g2 (computed for the GLM
    on the data, or given as mu_F=, L_F=, sigma_g2=), a, nu_s, chi, q, radius, radius_exact (rho = 0), the
    square root of Equation 9's right side at M = outer (rhs_at_M) and the run's final ||x - x*|| (measured).
    """
def casgd_cost(b: int, s: int, P: int, n_loc: int, *, recipe: str = 'C', slots: list[str] = [], alpha: float = 7e-06, beta: float = 4e-11, gamma: float = 5.1282051282051285e-14, gram_speedup: float | None = None) -> dict:
    """
    Table 2 of Devarakonda et al. 2026: the alpha-beta-gamma costs of s mini-batch SGD steps ('sgd') and of one outer
    CA-SGD iteration ('ca') under 1D block-column partitioning (flops, words, messages and their times), and the
    crossover s_star (the smallest s >= 2 where CA-SGD is cheaper; None if none) with s_max (the largest).
    alpha: s per message, beta: s per byte, gamma: s per fp32 flop (defaults: A100/Perlmutter, see
    analysis/casgd/cost_model.hpp); the recipe's u_AR_r/u_AR_G set the word sizes and u_G the Gram GEMM's
    throughput over fp32 (gram_speedup overrides it).
    """
def casgd_radius(eta: float, b: int, s: int, mu_F: float, L_F: float, sigma_g2: float, rho: float, *, chi: float | None = None, M: int = 0, dist0: float | None = None) -> dict:
    """
    Theorem 5.9 of Devarakonda et al. 2026: a = (1 - mu_F eta)^s, nu_s = eta sigma_g2 (1 - a) / (mu_F b), chi (the
    minimiser of the radius unless given), q = (1 + chi) a, N = (1 + chi) nu_s + (1 + 1/chi) rho^2, radius =
    sqrt(N / (1 - q)), radius_exact (rho = 0), step_ok (eta L_F <= 1), valid; with dist0 = ||x_0 - x*||, rhs_at_M is
    the square root of Equation 9's right side after M outer iterations.
    """
def casgd_recipes() -> dict:
    """
    Table 3's recipes A..I: letter -> the nine slots, e.g. 'u_A=bf16 u_G=b u_r=b ...'.
    """
def convert(codes: typing.Any, src: typing.Any, dst: typing.Any, *, mode: str = 'rne', overflow: str = 'ieee', sr_bits: int = 16, seed: int = 0, stream: int = 0, flags: bool = False, out: typing.Any = None, dtype: typing.Any = None) -> typing.Any:
    """
    Codes of format src (by the module's convention) rounded once into format dst, with no detour
    through a binary float; the result goes to `out` or a new array of `dtype` as in round().
    """
def decode(codes: typing.Any, fmt: typing.Any, *, out: typing.Any = None, dtype: typing.Any = None) -> typing.Any:
    """
    The exact values of codes of fmt (NaN codes give NaN), as float64 unless `dtype` or `out` asks
    for another (float32, float16... where every value is exact there; a typed array of fmt).
    """
def dequantise(codes: typing.Any, scales: typing.Any, fmt: typing.Any, *, scaling: str = 'mx32', k_axis: int = 1, tensor_scale: float = 1.0) -> numpy.ndarray:
    """
    The values of block-scaled codes (quantise's result): each code's value times its group's scale
    (and nvfp4's tensor_scale), exact in float64.
    """
def div(a: typing.Any, b: typing.Any, fmt: typing.Any, *, mode: str = 'rne', overflow: str = 'ieee', sr_bits: int = 16, seed: int = 0, stream: int = 0, flags: bool = False, out: typing.Any = None, dtype: typing.Any = None) -> typing.Any:
    """
    div(a, b, fmt): a / b.
    
    Operands follow the module's one convention (integer arrays: codes; a dtype that stores fmt:
    its codes; other floats: values, each exactly one of fmt's) and broadcast as NumPy's do; each
    result is rounded once by the core in `mode` (stochastic: bits of element i from (seed, stream,
    i)). The result is written into `out` when given, else a new array of `dtype` (default: the
    first operand's dtype where it stores fmt, else codes at storage width); flags=True returns
    (result, per-element IEEE flags as uint8: fpemu.INVALID | DIVIDE_BY_ZERO | OVERFLOW |
    UNDERFLOW | INEXACT).
    """
def dot(a: typing.Any, b: typing.Any, *, a_fmt: typing.Any = 'fp32', b_fmt: typing.Any = None, acc: str = 'fp32', acc_mode: str = 'rne', sr_bits: int = 16, promote: int = 0, out_fmt: typing.Any = 'fp32', out_mode: str = 'rne', seed: int = 0, a_original: typing.Any = None, b_original: typing.Any = None) -> dict:
    """
    The dot product of code vectors a and b (a 1 x K by K x 1 gemm), rounded into out_fmt, with its
    analysis as fpemu dot prints it: a dict as sum's: value, code and format of the result,
    the exact dot product, error, relative_error, abs_sum = sum |a_i b_i|, IEEE flags, and
    bounds (the accumulation bound of the accumulator model, with its validity). With a_original
    and b_original, the float32 vectors a and b were quantised from (length K), it adds, as fpemu
    dot prints them: exact_original (their exact dot product), error_original,
    relative_error_original, abs_sum_original, bounds_original (the bound against them), and
    underflowed and saturated, the fractions of their non-zero values that quantised to 0 or lay
    beyond the format's largest value.
    acc: a format spec ('fp32', 'bf16', 'e4m3fn', ...) rounded after every product in acc_mode
    (sr_bits random bits for 'sr'), 'exact', or a tensor-core preset (fpemu.presets(): a block-FMA
    model of the hardware, e.g. 'h100-e4m3-fastaccum'); promote=Nc folds every Nc products into an
    fp32 register (DeepSeek-V3), 0 keeps the preset's interval or never promotes.
    """
def effective_unit_roundoff(fmt: typing.Any, mode: str = 'rne') -> float:
    """
    The u to put into the bounds for one rounding of fmt in mode: 2^-p for nearest, 2^(1-p) for directed,
    odd and stochastic rounding.
    """
def fma(a: typing.Any, b: typing.Any, c: typing.Any, fmt: typing.Any, *, mode: str = 'rne', overflow: str = 'ieee', sr_bits: int = 16, seed: int = 0, stream: int = 0, flags: bool = False, out: typing.Any = None, dtype: typing.Any = None) -> typing.Any:
    """
    fma(a, b, c, fmt): a * b + c with one rounding.
    
    Operands follow the module's one convention (integer arrays: codes; a dtype that stores fmt:
    its codes; other floats: values, each exactly one of fmt's) and broadcast as NumPy's do; each
    result is rounded once by the core in `mode` (stochastic: bits of element i from (seed, stream,
    i)). The result is written into `out` when given, else a new array of `dtype` (default: the
    first operand's dtype where it stores fmt, else codes at storage width); flags=True returns
    (result, per-element IEEE flags as uint8: fpemu.INVALID | DIVIDE_BY_ZERO | OVERFLOW |
    UNDERFLOW | INEXACT).
    """
def formats() -> list[str]:
    """
    The names of the named formats, in display order.
    """
def gemm(A: typing.Any, B: typing.Any, C: typing.Any = None, *, a_fmt: typing.Any = 'fp32', b_fmt: typing.Any = None, acc: str = 'fp32', acc_mode: str = 'rne', sr_bits: int = 16, promote: int = 0, out_fmt: typing.Any = 'fp32', out_mode: str = 'rne', alpha: float = 1.0, beta: float = 0.0, k_order: list[int] | None = None, threads: int = 0, seed: int = 0, scaling: str = 'none', scale_a: typing.Any = None, scale_b: typing.Any = None, tensor_scale_a: float = 1.0, tensor_scale_b: float = 1.0, report: bool = False, a_original: typing.Any = None, b_original: typing.Any = None, out: typing.Any = None, dtype: typing.Any = None) -> typing.Any:
    """
    D = alpha * A B + beta * C on codes: A (M x K) of a_fmt, B (K x N) of b_fmt (default a_fmt),
    C (M x N) of out_fmt. Each output accumulates its products in k_order (default 0..K-1) under
    the accumulator, then alpha*acc + beta*c is rounded once into out_fmt. Returns D (M x N) by
    the module's convention: codes of out_fmt by default, or into `out`, or as `dtype` asks;
    bit-identical for any thread count. report=True returns a dict instead, as fpemu gemm reports:
    result (D), relative_error per output against the exact product, normwise_error, error_norm
    and exact_norm (Frobenius), and bounds (the componentwise bound's normwise form, a dict as
    sum's) with normwise_bound, its value relative to exact_norm; with scales, against the exact
    product of the scaled values. With a_original and b_original, the float32 data A and B were
    quantised from (fpemu.quantise's x; each in its operand's shape), the report adds D against
    the exact GEMM of those data, as fpemu gemm reports it (quantisation and accumulation
    together): relative_error_original per output, max_rel_error_original,
    normwise_error_original, error_norm_original and exact_norm_original, and underflowed and
    saturated, the fractions of the non-zero inputs of A and B that quantised to 0 or lay beyond
    the format's largest value times their scale.
    Block-scaled codes, as fpemu.quantise returns them for A (k_axis=1) and B (k_axis=0), multiply
    with their scales: scaling names how they were made ('tensor', 'tile128', 'block128', 'mx32',
    'nvfp4'; 'none', the default, takes no scales), scale_a and scale_b are quantise's 1-D arrays
    of scale codes, tensor_scale_a and tensor_scale_b nvfp4's tensor scales. A block-scaled preset
    applies its own scaling inside its blocks ('mx32' for b200-mxf8f6f4, 'nvfp4' for
    b200-mxf4nvf4; 'none': scales of 1), nvfp4's tensor scales multiplying alpha in the epilogue.
    Any other accumulator folds each group of a group scaling (tile128, block128: 128; mx32: 32),
    times its two scales, into the fp32 register, so the promotion interval must be 0 or the group
    size (h100-e4m3-deepseek with 'tile128': DeepSeek-V3's GEMM); 'tensor' multiplies alpha;
    'nvfp4' needs a preset that applies it.
    acc: a format spec ('fp32', 'bf16', 'e4m3fn', ...) rounded after every product in acc_mode
    (sr_bits random bits for 'sr'), 'exact', or a tensor-core preset (fpemu.presets(): a block-FMA
    model of the hardware, e.g. 'h100-e4m3-fastaccum'); promote=Nc folds every Nc products into an
    fp32 register (DeepSeek-V3), 0 keeps the preset's interval or never promotes.
    """
def gemm_recipes() -> dict:
    """
    The named GEMM recipes of train(gemm=...): name -> FORMAT/SCALING/ACCUMULATOR.
    """
def get_num_threads() -> int:
    """
    The thread count set_num_threads set (every hardware thread by default).
    """
def load_fashion_mnist(train: bool = True, dir: str | None = None) -> tuple:
    """
    Fashion-MNIST as (x, y): x float32 (rows, 784) with pixels in [0, 1], y the class indices as float32.
    dir defaults to $FPEMU_FASHION_MNIST_DIR, else where Debian's dataset-fashion-mnist installs it.
    """
def load_libsvm(path: str | None = None, min_cols: int = 0) -> tuple:
    """
    A LIBSVM file as (x, y) float32 arrays; path defaults to heart_scale from Debian's liblinear-tools.
    """
def mma(A: typing.Any, B: typing.Any, C: typing.Any = None, *, preset: str, out_fmt: str = 'fp32', a_fmt: typing.Any = None, b_fmt: typing.Any = None, scale_a: typing.Any = None, scale_b: typing.Any = None, out: typing.Any = None, dtype: typing.Any = None) -> typing.Any:
    """
    D = C + A B as a GPU tensor core computes it (the preset's bit-exact model): A (M x K) and B (K x N)
    hold the preset's input formats by the module's convention (integer arrays: codes; typed arrays;
    float32 arrays: values, each one of the format's, except that tf32 presets ignore the low 13
    bits as the hardware does), C (M x N, default zeros) and D are fp32 or, with out_fmt='fp16'
    where the preset has one, fp16. Each D[i, j] is one chain of the preset's instructions over K in
    order. a_fmt/b_fmt choose each operand's format from the preset's inputs (fpemu.presets()).
    Block-scaled presets (presets()' scale and scale_block = n, e.g. 'b200-mxf8f6f4': e8m0fnu, 32)
    need scale_a (M x K/n) and scale_b (K/n x N), K a multiple of n: product k of D[i, j] is
    multiplied by scale_a[i, k // n] * scale_b[k // n, j]. Scales follow the same convention for
    the scale format (float arrays and tensors: values, each one of its, such as powers of two for
    e8m0fnu and non-negative e4m3fn values for UE4M3; integer arrays: codes); other presets refuse
    them. Returns D as float32 (float16 for fp16), or into `out`, or as `dtype` asks.
    """
def mul(a: typing.Any, b: typing.Any, fmt: typing.Any, *, mode: str = 'rne', overflow: str = 'ieee', sr_bits: int = 16, seed: int = 0, stream: int = 0, flags: bool = False, out: typing.Any = None, dtype: typing.Any = None) -> typing.Any:
    """
    mul(a, b, fmt): a * b.
    
    Operands follow the module's one convention (integer arrays: codes; a dtype that stores fmt:
    its codes; other floats: values, each exactly one of fmt's) and broadcast as NumPy's do; each
    result is rounded once by the core in `mode` (stochastic: bits of element i from (seed, stream,
    i)). The result is written into `out` when given, else a new array of `dtype` (default: the
    first operand's dtype where it stores fmt, else codes at storage width); flags=True returns
    (result, per-element IEEE flags as uint8: fpemu.INVALID | DIVIDE_BY_ZERO | OVERFLOW |
    UNDERFLOW | INEXACT).
    """
def presets() -> list:
    """
    The tensor-core presets as dicts: name, summary, instruction (the instruction modelled, as PTX or
    the CDNA ISA spells it), source (who published the parameters), default input formats a and b,
    inputs (the format names A and B may each take, for a_fmt/b_fmt), instruction_k, the block-FMA
    block_size, sum ('aligned'; 'exact': each block summed exactly; 'pairwise': rounded products
    and additions), frac_bits (F, of an aligned sum) and second_frac_bits (F2 of a two-stage sum,
    0 for one stage), scale (the block scales' format name: 'e8m0fnu', or 'e4m3fn' read as
    unsigned UE4M3; None when unscaled) and scale_block (products per scale, 0 when unscaled),
    promote_every, whether an fp16 accumulator exists, and whether the preset reproduces recorded
    hardware outputs bit for bit (validated).
    """
def quantise(x: typing.Any, fmt: typing.Any, *, scaling: str = 'mx32', k_axis: int = 1, mode: str = 'rne') -> tuple:
    """
    Block-scaled quantisation of a 2-D float32 array (values exact in float32) into codes of fmt, as
    fpemu gemm scales its inputs: scaling 'mx32' (OCP MX v1.0: one e8m0fnu scale per 32 elements
    along K, X = 2^(floor(log2(amax)) - emax(fmt)), 2^0 for an all-zero block), 'nvfp4' (NVIDIA's
    NVFP4 with fmt e2m1fn: an fp32 tensor scale s_t = amax / (448 max_finite(fmt)) rounded up, and
    per 16 elements along K an e4m3fn scale amax_16 / (max_finite(fmt) s_t), nearest-even),
    'tile128' (one fp32 scale per row per 128 along K for A, per 128 x 128 block for B;
    DeepSeek-V3), 'block128', 'tensor' or 'none'; fp32 scales are amax / max_finite(fmt) rounded
    up. Each element x / scale is rounded once into fmt in `mode`, saturating. k_axis: 1 when K
    runs along columns (A), 0 along rows (B). Returns (codes, scale codes, tensor_scale): codes in
    x's shape, scales as e8m0fnu (mx32), e4m3fn (nvfp4) or fp32 codes, and nvfp4's tensor scale
    (1.0 for the others).
    """
def round(x: typing.Any, fmt: typing.Any, *, mode: str = 'rne', overflow: str = 'ieee', sr_bits: int = 16, seed: int = 0, stream: int = 0, flags: bool = False, out: typing.Any = None, dtype: typing.Any = None) -> typing.Any:
    """
    Rounds values (any array_like: float32 or float64 arrays, read in place where C-contiguous;
    typed arrays such as ml_dtypes' or float16 give their values; torch CPU tensors) into fmt,
    once, by the core.
    
    The result goes where the module's convention says: into `out` (a preallocated array or
    tensor of x's shape, written in place and returned), or a new array of `dtype`. Integer dtypes
    take codes, the dtype that stores fmt (ml_dtypes.bfloat16 for bf16) its codes as a typed
    array, float64 or another format's dtype the rounded values. Default: codes at storage width
    (uint8 up to 8 bits, uint16 up to 16, else uint32); for a torch tensor, a tensor of fmt's
    torch dtype where there is one. Stochastic rounding (mode 'sr', sr_bits random bits) takes
    element i's bits from Philox keyed by (seed, stream, i): the same seed gives the same result
    on every run, thread count and device. flags=True returns (result, per-element IEEE flags).
    """
def scaling_table(*, ks: list[int] = [128, 4096], sigmas: list[float] = [1e-06, 0.0001, 0.01, 1.0, 100.0, 10000.0], m: int = 8, n: int = 8, seed: int = 0, threads: int = 0) -> list:
    """
    What block scaling buys, the table of docs/accumulation.md: for each of five scalings (name: e4m3fn
    inputs unscaled 'none', per 'tensor', 'tile128' (DeepSeek-V3's 1x128 A / 128x128 B), 'mx32', all
    accumulated in fp32, and NVFP4's e2m1fn inputs on b200-mxf4nvf4), each K in ks and each sigma in
    sigmas, one dict: an M x K by K x N GEMM of N(0, sigma^2) data drawn as `fpemu gemm --m M --n N --k
    K --sigma SIGMA --seed SEED` draws it, so that each number equals that command's (one build):
    normwise_error_original and max_rel_error_original against the exact GEMM of the data,
    normwise_error and max_rel_error against the quantised inputs, underflowed and saturated (the
    fractions of the non-zero inputs quantise lost), with name (the table's row label), scaling,
    a_format, b_format, accumulator, m, n, k, sigma and seed. Rows in the table's order: scaling,
    then K, then sigma.
    """
def set_num_threads(n: int) -> None:
    """
    Threads for long arrays (65536 elements or more) and the default of every `threads=0` argument
    (gemm, train, casgd); 0: every hardware thread. $FPEMU_NUM_THREADS sets it at import. Results never
    depend on it.
    """
def sqrt(a: typing.Any, fmt: typing.Any, *, mode: str = 'rne', overflow: str = 'ieee', sr_bits: int = 16, seed: int = 0, stream: int = 0, flags: bool = False, out: typing.Any = None, dtype: typing.Any = None) -> typing.Any:
    """
    sqrt(a, fmt): the square root.
    
    Operands follow the module's one convention (integer arrays: codes; a dtype that stores fmt:
    its codes; other floats: values, each exactly one of fmt's) and broadcast as NumPy's do; each
    result is rounded once by the core in `mode` (stochastic: bits of element i from (seed, stream,
    i)). The result is written into `out` when given, else a new array of `dtype` (default: the
    first operand's dtype where it stores fmt, else codes at storage width); flags=True returns
    (result, per-element IEEE flags as uint8: fpemu.INVALID | DIVIDE_BY_ZERO | OVERFLOW |
    UNDERFLOW | INEXACT).
    """
def sub(a: typing.Any, b: typing.Any, fmt: typing.Any, *, mode: str = 'rne', overflow: str = 'ieee', sr_bits: int = 16, seed: int = 0, stream: int = 0, flags: bool = False, out: typing.Any = None, dtype: typing.Any = None) -> typing.Any:
    """
    sub(a, b, fmt): a - b.
    
    Operands follow the module's one convention (integer arrays: codes; a dtype that stores fmt:
    its codes; other floats: values, each exactly one of fmt's) and broadcast as NumPy's do; each
    result is rounded once by the core in `mode` (stochastic: bits of element i from (seed, stream,
    i)). The result is written into `out` when given, else a new array of `dtype` (default: the
    first operand's dtype where it stores fmt, else codes at storage width); flags=True returns
    (result, per-element IEEE flags as uint8: fpemu.INVALID | DIVIDE_BY_ZERO | OVERFLOW |
    UNDERFLOW | INEXACT).
    """
def sum(x: numpy.ndarray, fmt: typing.Any = 'fp32', *, method: str = 'recursive', acc: str = 'fp32', acc_mode: str = 'rne', sr_bits: int = 16, promote: int = 0, block: int = 32, high: typing.Any = 'fp32', seed: int = 0, stream: int = 0, lam: float = 3.0) -> dict:
    """
    Sums codes x of format fmt by a reference method (recursive pairwise blocked kahan neumaier
    promoted stochastic) and returns a dict: value, code and format of the result, the exact sum,
    error (computed - exact), relative_error, abs_sum = sum |x_i|, IEEE flags, and bounds: the
    method's deterministic bound first, then probabilistic ones (lam = lambda), each a dict with
    name, coefficient, absolute = coefficient * abs_sum, valid, condition, probability.
    block: b of blocked, Nc of promoted (whose high register is `high`).
    acc: a format spec ('fp32', 'bf16', 'e4m3fn', ...) rounded after every product in acc_mode
    (sr_bits random bits for 'sr'), 'exact', or a tensor-core preset (fpemu.presets(): a block-FMA
    model of the hardware, e.g. 'h100-e4m3-fastaccum'); promote=Nc folds every Nc products into an
    fp32 register (DeepSeek-V3), 0 keeps the preset's interval or never promotes.
    """
def theorem1_floor(fmt: typing.Any = 'bf16', lrs: list[float] = [0.1, 0.01, 0.001], dim: int = 64, seed: int = 1) -> list:
    """
    Theorem 1 of Zamirai et al. 2020 on f(w) = 1/2 sum_j lambda_j (w_j - w*_j)^2, lambda_j in [1/2, 1] (L = 1), w*_j in
    [1, 2] on fmt's grid, dim weights, gradient descent from w = 0 for ceil(80/lr) steps. Nearest rounding
    stalls at a distance of at least predicted = min(u (1 - lr) / (lr + u) min|w*|, ||w*||), u = 2^-p of
    fmt, growing as lr shrinks; Kahan and stochastic rounding keep converging. One dict per lr with the
    distances ||w - w*|| reached by nearest, kahan, stochastic (16 bits) and fp32.
    """
def train(x_train: numpy.ndarray, y_train: numpy.ndarray, x_test: numpy.ndarray, y_test: numpy.ndarray, *, model: str = 'mlp', hidden: int = 256, classes: int = 10, optimizer: str = 'sgd', policy: str = 'fp32', lr: float = 0.001, momentum: float = 0.0, dampening: float = 0.0, nesterov: bool = False, weight_decay: float = 0.0, beta1: float = 0.9, beta2: float | None = None, eps: float = 1e-08, epochs: int = 1, batch: int = 128, grad_accum: int = 1, clip_norm: float = 0.0, seed: int = 1, threads: int = 0, gemm: str = 'weights', gemm_error_every: int = 0, gemm_error_rows: int = 8, progress: typing.Any = None) -> dict:
    """
    Mini-batch training of a model (mlp: inputs -> hidden ReLU -> classes; logreg; linreg) under a
    precision policy, with grad_accum micro-batches per step and optional global-norm clipping.
    Labels: class indices (mlp), -1/+1 (logreg), any finite value (linreg). Returns a dict: epochs
    (train_loss, test_loss, test_accuracy, steps, seconds per epoch), step_losses, memory and
    optimizer_bytes. progress(epoch_dict) is called after every epoch. Deterministic in seed.
    gemm: how the model's GEMMs compute, as fpemu train --gemm: 'FORMAT/SCALING/ACCUMULATOR'
    (FORMAT 'weights': the policy's weight format) or a name: weights, bf16, fp8-fastaccum,
    fp8-deepseek (e4m3fn/tile128/h100-e4m3-deepseek), fp8-tensor, fp8-unscaled (gemm_recipes()).
    gemm_error_every = N > 0 measures every GEMM of the first micro-batch of steps 1, N + 1, ...
    on the first gemm_error_rows rows of its output: gemm_errors, a list of dicts with step, layer
    (fprop1 fprop2 wgrad2 dgrad2 wgrad1), M, N, K, rows, error_original (normwise, against the
    product of the operands before rounding) and error_quantised (against the exact product of
    the rounded operands).
    Hyper-parameters as in torch.optim: lr, momentum, dampening, nesterov (sgd), weight_decay (L2 for
    sgd and adam, decoupled for adamw and lion), beta1, beta2 (default 0.999, lion 0.99), eps.
    Policies: fp32 | mixed | mixed-fp16 | FMT[-kahan|-zamirai|-sr[K]][-ops], e.g. bf16, bf16-kahan,
    bf16-sr, bf16-sr8-ops (FMT a format whose values are binary32 values: bf16, fp16, tf32, ...).
    """
DIVIDE_BY_ZERO: int = 2
INEXACT: int = 16
INVALID: int = 1
OVERFLOW: int = 4
UNDERFLOW: int = 8
__version__: str = '0.1.0'
_fpemu = 
