"""
A-priori rounding error bounds (Higham; Higham & Mary; Connolly, Higham & Mary; Blanchard et al.).
Each returns a coefficient c with |computed - exact| <= c * S, S = sum |x_i| (sums) or sum |a_i b_i|
(dot products), rounded outward so that it bounds the exact expression. u is the bound on one
operation's relative error: 2^-p for nearest, 2^(1-p) for directed and stochastic rounding
(fpemu.effective_unit_roundoff), except stochastic_sum_*, which take 2^-p and double it.
A bound whose hypothesis fails is returned with valid=False, value=inf and the reason.
"""
from __future__ import annotations
__all__: list[str] = ['block_fma_dot', 'blocked_sum', 'coefficient', 'dot', 'dot_lowprec_inputs', 'dot_probabilistic', 'gamma', 'gamma_probabilistic', 'kahan_sum', 'neumaier_sum', 'pairwise_sum', 'probabilistic', 'promoted_sum', 'recursive_sum', 'recursive_sum_probabilistic', 'stochastic_sum_deterministic', 'stochastic_sum_probabilistic', 'truncating_block_dot']
class coefficient:
    """
    A bound's coefficient, its validity and the condition evaluated.
    """
    def __float__(self) -> float:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def condition(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def valid(self) -> bool:
        ...
    @property
    def value(self) -> float:
        ...
class probabilistic:
    """
    A bound that holds with at least `probability`.
    """
    def __float__(self) -> float:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def coefficient(self) -> coefficient:
        ...
    @property
    def lam(self) -> float:
        ...
    @property
    def probability(self) -> float:
        ...
    @property
    def valid(self) -> bool:
        ...
    @property
    def value(self) -> float:
        ...
def block_fma_dot(n: int, b: int, u_int: float, u_acc: float) -> coefficient:
    """
    (1 + gamma_n(u_int)) (1 + gamma_{ceil(n/b)}(u_acc)) - 1: a chain of mixed-precision block FMAs.
    """
def blocked_sum(n: int, b: int, u: float) -> coefficient:
    """
    gamma_{b-1 + ceil(n/b)-1}(u) (Blanchard, Higham & Mary 2020).
    """
def dot(n: int, u: float) -> coefficient:
    """
    gamma_n(u) (Higham, eq. (3.5)).
    """
def dot_lowprec_inputs(n: int, u_in: float, u_acc: float) -> coefficient:
    """
    2 u_in + u_in^2 + gamma_n(u_acc) (1 + u_in)^2: inputs rounded to u_in, accumulated with u_acc.
    """
def dot_probabilistic(n: int, u: float, lam: float) -> probabilistic:
    """
    gamma~_n(lam) (Higham & Mary 2019, Theorem 3.1).
    """
def gamma(n: int, u: float) -> coefficient:
    """
    gamma_n(u) = n u / (1 - n u), valid iff n u < 1 (Higham, Lemma 3.1).
    """
def gamma_probabilistic(n: int, u: float, lam: float) -> probabilistic:
    """
    gamma~_n(lam) = exp(lam sqrt(n) u + n u^2/(1-u)) - 1 with probability 1 - 2 exp(-lam^2 (1-u)^2 / 2)
    (Higham & Mary 2019, Theorem 2.4).
    """
def kahan_sum(n: int, u: float) -> coefficient:
    """
    Compensated summation: 3u + 6 n u^2 + O(u^2), from the standard model alone.
    """
def neumaier_sum(n: int, u: float) -> coefficient:
    """
    u + gamma_{n-1}(u)^2 (Ogita, Rump & Oishi 2005), round to nearest.
    """
def pairwise_sum(n: int, u: float) -> coefficient:
    """
    gamma_{ceil(log2 n)}(u).
    """
def promoted_sum(n: int, nc: int, u_low: float, u_high: float) -> coefficient:
    """
    (1 + gamma_{nc-1}(u_low)) (1 + gamma_{ceil(n/nc)}(u_high)) - 1: chunks of nc promoted to a high register.
    """
def recursive_sum(n: int, u: float) -> coefficient:
    """
    gamma_{n-1}(u).
    """
def recursive_sum_probabilistic(n: int, u: float, lam: float) -> probabilistic:
    """
    gamma~_{n-1}(lam) with probability 1 - (n-1)(1 - P(lam)) (Higham & Mary 2019).
    """
def stochastic_sum_deterministic(n: int, u: float) -> coefficient:
    """
    gamma_{n-1}(2u), u = 2^-p.
    """
def stochastic_sum_probabilistic(n: int, u: float, lam: float) -> probabilistic:
    """
    lam sqrt(v gamma_{2n}(v)), v = 2u, with probability 1 - 2 exp(-lam^2/2) (Connolly, Higham & Mary 2021).
    """
def truncating_block_dot(n: int, b: int, frac_bits: int, u_acc: float) -> coefficient:
    """
    The tensor-core model with alignment by truncation to frac_bits below the block's largest exponent.
    """
