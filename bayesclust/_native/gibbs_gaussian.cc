// The point moves of one collapsed Gibbs sweep of the DP mixture of Gaussians
// with per-cluster full or diagonal covariances, every chain, then optionally
// its sequentially-allocated split-merge moves (GaussGroup::SplitMerge), as an
// XLA:CPU FFI custom call.
//
// The same Markov kernel as bayesclust.inference.mixtures.gibbs_gaussian._point_step
// (the XLA scan, the reference these kernels are tested against): in the
// prior-whitened frame (m0 = 0, S0 = I), for every point i < n_valid in order and
// in every chain, remove x from its slot, weigh the slots
//
//   log w_c = G(n_c) - 1/2 log det S_c - 1/2 (nu0 + n_c + 1) log(1 + k_c/(k_c + 1) q_c)
//
// (full: q_c = (x - m_c)^T P_c (x - m_c), P_c = S_c^{-1}, k_c = kappa0 + n_c and
// G(n) = log n + lgamma((nu0 + n + 1)/2) - lgamma((nu0 + n - d + 1)/2)
//        - d/2 log pi - d/2 log(1 + 1/k_n);
// diag: log det S_c -> sum_t log beta_ct and the log term a sum over the
// features of log(1 + k_c/(k_c + 1) (x_t - m_ct)^2 / (2 beta_ct)), G with the
// one-dimensional Student-t constants), the new cluster by log_new[c, i] (the
// caller's log alpha + log p(x)), draw one by inverse CDF from u[c, i] (slots
// in order, the new cluster last), and add the point back.  A new cluster
// takes the first empty slot; when every slot is taken the chain's overflow
// flag is set and slot 0 is used (the caller grows the buffer and redoes the
// sweep).  The caller draws the uniforms, so both paths make the same draws
// from the same numbers, and recomputes the exact statistics from the labels.
//
// Chains sit on the lanes of an AVX register (8 float / 4 double chains per
// group, groups shared out to XLA's intra-op thread pool), as in gibbs.cc: a
// step is a few vector instructions per slot and feature pair for all lanes.
// A step writes nothing unless some chain moves the point: the slot it
// leaves is weighed with one member fewer in closed form from the quadratic
// form already computed (full: with s = k_1/k_0 and a = q_old, Sherman-Morrison
// gives g = 1 - s a, log det S' = log det S + log g and the whole log term
// (nu0 + n_old) / 2 log g; diag: the d per-feature terms recomputed), and only
// the lanes that move update their two slots (Sherman-Morrison on P and the
// matrix determinant lemma on log det, in double).  P is kept packed (upper
// triangle, off-diagonal entries doubled) so the quadratic form is
// d (d + 1) / 2 fused multiply-adds per slot.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "parallel.h"
#include "simd.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

using bayesclust::AnyTrue;
using bayesclust::ExpNonPositive;
using bayesclust::LogAtLeastOne;
using bayesclust::Simd;
using bayesclust::SplitMix64;
using bayesclust::Unit;

constexpr double kPi = 3.141592653589793;

template <typename T>
struct GaussSweep {
  const T* Z;  // (n, d), whitened
  int64_t n, d, K, C, n_valid;
  bool full;
  const int32_t* labels_in;  // (C, n)
  const T* counts;           // (C, K)
  const T* means;            // (C, K, d)
  const T* factor;           // (C, K, d, d) full, (C, K, d) diag
  const T* logdet;           // (C, K)
  const T* u;                // (C, n)
  const T* log_new;          // (C, n)
  const T* log_alpha;        // (C,)
  const uint32_t* seeds;     // (C, 2): the split-merge moves' streams
  int64_t split_merge;       // moves per chain after the point moves
  bool point_moves;          // false: the split-merge moves alone (tests)
  double kappa0, nu0;
  std::vector<double> G;  // (n + 1): the count's constant of a slot's log weight
  int32_t* labels_out;    // (C, n)
  int32_t* overflow_out;  // (C,)
  int32_t* accepted_out;  // (C,)
};

// One side of a split-merge proposal (one lane, double): count, mean, the
// inverse P of S_n (full, d x d) or the Gamma rates (diag), log det S_n.
struct Side {
  double n = 0.0, logdet = 0.0;
  std::vector<double> m, F;
};

template <typename T, int Lanes>
struct GaussGroup {
  using V = typename Simd<T, Lanes>::V;
  static constexpr int W = Lanes;
  static constexpr T kInf = std::numeric_limits<T>::infinity();

  const GaussSweep<T>* s;
  int64_t first, lanes, K, d, n, np, kmax;
  bool full;
  // Per slot: count, cst = G(n) - 1/2 log det (-inf when empty), coef =
  // k/(k + 1), expo = -(nu0 + n + 1)/2, logdet (full) and, feature-major
  // within the slot, the mean (k * d + t), packed P (k * np + p, full) or beta
  // and 1 / (2 beta) (k * d + t, diag).
  std::vector<V> cnt, cst, coef, expo, logdet, mean, P, beta, inv2b;
  std::vector<V> label, lw, qk;
  int64_t chain[W];
  int32_t overflow[W];
  int32_t accepted[W];
  V lane_ids;
  std::vector<double> work;  // d * d + 2 d: one lane's unpacked P, r, w

  __attribute__((always_inline)) inline void Set(std::vector<V>& v, int64_t k, int l, T value) {
    v[k] = lane_ids == static_cast<T>(l) ? V{} + value : v[k];
  }
  static T& At(std::vector<V>& v, int64_t k, int l) {
    return reinterpret_cast<T*>(v.data() + k)[l];
  }

  // cst, coef, expo of slot k in lane l from its count and log det / betas.
  void Terms(int64_t k, int l) {
    const int64_t c = static_cast<int64_t>(At(cnt, k, l));
    if (c == 0) {
      Set(cst, k, l, -kInf);
      Set(coef, k, l, T(0));
      Set(expo, k, l, T(0));
      return;
    }
    double ld = 0.0;
    if (full) {
      ld = At(logdet, k, l);
    } else {
      for (int64_t t = 0; t < d; ++t) ld += std::log(static_cast<double>(At(beta, k * d + t, l)));
    }
    const double kn = s->kappa0 + c;
    Set(cst, k, l, static_cast<T>(s->G[c] - 0.5 * ld));
    Set(coef, k, l, static_cast<T>(kn / (kn + 1.0)));
    Set(expo, k, l, static_cast<T>(-0.5 * (s->nu0 + c + 1.0)));
  }

  // Slot k of lane l holds the prior's statistics (no members).
  void Clear(int64_t k, int l) {
    Set(cnt, k, l, T(0));
    for (int64_t t = 0; t < d; ++t) Set(mean, k * d + t, l, T(0));
    if (full) {
      Set(logdet, k, l, T(0));
      for (int64_t i = 0, p = 0; i < d; ++i)
        for (int64_t j = i; j < d; ++j, ++p) Set(P, k * np + p, l, i == j ? T(1) : T(0));
    } else {
      for (int64_t t = 0; t < d; ++t) {
        Set(beta, k * d + t, l, T(0.5));
        Set(inv2b, k * d + t, l, T(1));
      }
    }
    Terms(k, l);
  }

  void Init(const GaussSweep<T>* sweep, int64_t first_chain, int64_t count) {
    s = sweep;
    first = first_chain;
    lanes = count;
    K = s->K;
    d = s->d;
    n = s->n;
    full = s->full;
    np = full ? d * (d + 1) / 2 : 0;
    for (int l = 0; l < W; ++l) lane_ids[l] = static_cast<T>(l);
    cnt.assign(K, V{});
    cst.assign(K, V{} - kInf);
    coef.assign(K, V{});
    expo.assign(K, V{});
    logdet.assign(K, V{});
    mean.assign(K * d, V{});
    P.assign(K * np, V{});
    beta.assign(full ? 0 : K * d, V{});
    inv2b.assign(full ? 0 : K * d, V{});
    label.resize(n);
    lw.resize(K);
    qk.resize(K);
    work.resize(d * d + 2 * d);
    kmax = 0;
    for (int l = 0; l < W; ++l) {
      const int64_t c = first + std::min<int64_t>(l, lanes - 1);
      chain[l] = c;
      overflow[l] = 0;
      accepted[l] = 0;
      for (int64_t k = 0; k < K; ++k) {
        const T ck = s->counts[c * K + k];
        At(cnt, k, l) = ck;
        if (ck > T(0)) kmax = std::max(kmax, k + 1);
        for (int64_t t = 0; t < d; ++t) At(mean, k * d + t, l) = s->means[(c * K + k) * d + t];
        if (full) {
          const T* F = s->factor + (c * K + k) * d * d;
          At(logdet, k, l) = s->logdet[c * K + k];
          for (int64_t i = 0, p = 0; i < d; ++i)
            for (int64_t j = i; j < d; ++j, ++p)
              At(P, k * np + p, l) = i == j ? F[i * d + i] : F[i * d + j] + F[j * d + i];
        } else {
          for (int64_t t = 0; t < d; ++t) {
            const T b = s->factor[(c * K + k) * d + t];
            At(beta, k * d + t, l) = b;
            At(inv2b, k * d + t, l) = T(0.5) / b;
          }
        }
        Terms(k, l);
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      V li;
      for (int l = 0; l < W; ++l) li[l] = static_cast<T>(s->labels_in[chain[l] * n + i]);
      label[i] = li;
    }
  }

  // Lane l's P of slot k unpacked into work (d x d, double).
  double* Unpack(int64_t k, int l) {
    double* A = work.data();
    for (int64_t i = 0, p = 0; i < d; ++i)
      for (int64_t j = i; j < d; ++j, ++p) {
        const double v = At(P, k * np + p, l);
        A[i * d + j] = A[j * d + i] = i == j ? v : 0.5 * v;
      }
    return A;
  }

  // w = root A r and v^T w with v = root r (A d x d): the vectors of a rank-one update
  // of A = S^{-1} by v v^T (Sherman-Morrison) and log(1 + v^T w) of its determinant.
  double ScaledProduct(const double* A, const double* r, double root, double* w) const {
    double vw = 0.0;
    for (int64_t i = 0; i < d; ++i) {
      double acc = 0.0;
      for (int64_t j = 0; j < d; ++j) acc += A[i * d + j] * r[j];
      w[i] = root * acc;
      vw += root * r[i] * w[i];
    }
    return vw;
  }

  // P += c w w^T (packed, off-diagonal doubled) of slot k in lane l.
  void RankOne(int64_t k, int l, const double* w, double c) {
    const double* A = work.data();
    for (int64_t i = 0, p = 0; i < d; ++i)
      for (int64_t j = i; j < d; ++j, ++p) {
        const double v = A[i * d + j] + c * w[i] * w[j];
        Set(P, k * np + p, l, static_cast<T>(i == j ? v : 2.0 * v));
      }
  }

  // x leaves slot k of lane l (n -> n - 1; gibbs_gaussian._point_step).
  void Remove(int64_t k, int l, const T* x) {
    const double n1 = At(cnt, k, l);
    if (n1 <= 1.0) {
      Clear(k, l);
      return;
    }
    const double k1 = s->kappa0 + n1, k0 = k1 - 1.0, sc = k1 / k0;
    double* r = work.data() + d * d;
    for (int64_t t = 0; t < d; ++t) r[t] = x[t] - static_cast<double>(At(mean, k * d + t, l));
    if (full) {
      double* w = r + d;
      const double uw = ScaledProduct(Unpack(k, l), r, std::sqrt(sc), w);
      const double g = std::max(1.0 - uw, static_cast<double>(std::numeric_limits<T>::min()));
      RankOne(k, l, w, 1.0 / g);
      Set(logdet, k, l, static_cast<T>(At(logdet, k, l) + std::log(g)));
    } else {
      for (int64_t t = 0; t < d; ++t) {
        const double b = std::max(At(beta, k * d + t, l) - 0.5 * sc * r[t] * r[t], 0.5);
        Set(beta, k * d + t, l, static_cast<T>(b));
        Set(inv2b, k * d + t, l, static_cast<T>(0.5 / b));
      }
    }
    for (int64_t t = 0; t < d; ++t)
      Set(mean, k * d + t, l, static_cast<T>((k1 * At(mean, k * d + t, l) - x[t]) / k0));
    Set(cnt, k, l, static_cast<T>(n1 - 1.0));
    Terms(k, l);
  }

  // x joins slot k of lane l (n -> n + 1; gibbs_gaussian._add_point).
  void Add(int64_t k, int l, const T* x) {
    const double n2 = At(cnt, k, l), kn = s->kappa0 + n2, sc = kn / (kn + 1.0);
    double* r = work.data() + d * d;
    for (int64_t t = 0; t < d; ++t) r[t] = x[t] - static_cast<double>(At(mean, k * d + t, l));
    if (full) {
      double* w = r + d;
      const double tv = ScaledProduct(Unpack(k, l), r, std::sqrt(sc), w);
      RankOne(k, l, w, -1.0 / (1.0 + tv));
      Set(logdet, k, l, static_cast<T>(At(logdet, k, l) + std::log1p(tv)));
    } else {
      for (int64_t t = 0; t < d; ++t) {
        const double b = At(beta, k * d + t, l) + 0.5 * sc * r[t] * r[t];
        Set(beta, k * d + t, l, static_cast<T>(b));
        Set(inv2b, k * d + t, l, static_cast<T>(0.5 / b));
      }
    }
    for (int64_t t = 0; t < d; ++t)
      Set(mean, k * d + t, l, static_cast<T>((kn * At(mean, k * d + t, l) + x[t]) / (kn + 1.0)));
    Set(cnt, k, l, static_cast<T>(n2 + 1.0));
    Terms(k, l);
    kmax = std::max(kmax, k + 1);
  }

  // Lane l's log weight of slot o with x removed, from a = q_o (full) or the
  // per-feature terms (diag); -inf when x is its only member.
  double LeaveOut(int64_t o, int l, const T* x) {
    const double n1 = At(cnt, o, l);
    if (n1 <= 1.0) return -std::numeric_limits<double>::infinity();
    const double k1 = s->kappa0 + n1, sc = k1 / (k1 - 1.0);
    const double g0 = s->G[static_cast<int64_t>(n1) - 1];
    if (full) {
      const double a = At(qk, o, l);
      const double g = std::max(1.0 - sc * a, static_cast<double>(std::numeric_limits<T>::min()));
      return g0 - 0.5 * At(logdet, o, l) + 0.5 * (s->nu0 + n1 - 1.0) * std::log(g);
    }
    double sum_log_b = 0.0, ker = 0.0;
    for (int64_t t = 0; t < d; ++t) {
      const double r = x[t] - static_cast<double>(At(mean, o * d + t, l));
      const double b = std::max(At(beta, o * d + t, l) - 0.5 * sc * r * r, 0.5);
      sum_log_b += std::log(b);
      ker += std::log1p(sc * r * r / (2.0 * b));
    }
    return g0 - 0.5 * sum_log_b - 0.5 * (s->nu0 + n1) * ker;
  }

  // Point i in every lane, D features (0: d at run time).
  template <bool Full, int D>
  __attribute__((always_inline)) inline void Step(int64_t i) {
    const int64_t dim = D > 0 ? D : d;
    const T* x = s->Z + i * dim;
    const V old = label[i];
    const int64_t kk = kmax;
    constexpr int kFixed = D > 0 ? D : 1;
    V xv[kFixed], yv[kFixed];
    if constexpr (D > 0)
      for (int t = 0; t < D; ++t) xv[t] = V{} + x[t];
    const V one = V{} + T(1);
    for (int64_t k = 0; k < kk; ++k) {
      if constexpr (Full) {
        const V* Pk = P.data() + k * (D > 0 ? D * (D + 1) / 2 : np);
        V q{};
        if constexpr (D > 0) {
          for (int t = 0; t < D; ++t) yv[t] = xv[t] - mean[k * D + t];
          int p = 0;
          for (int a = 0; a < D; ++a) {
            V row{};
            for (int b = a; b < D; ++b) row += Pk[p++] * yv[b];
            q += yv[a] * row;
          }
        } else {
          std::vector<V>& yy = yscratch;
          for (int64_t t = 0; t < dim; ++t) yy[t] = (V{} + x[t]) - mean[k * dim + t];
          int64_t p = 0;
          for (int64_t a = 0; a < dim; ++a) {
            V row{};
            for (int64_t b = a; b < dim; ++b) row += Pk[p++] * yy[b];
            q += yy[a] * row;
          }
        }
        q = q > V{} ? q : V{};
        qk[k] = q;
        lw[k] = cst[k] + expo[k] * LogAtLeastOne<T, W>(one + coef[k] * q);
      } else {
        V acc{};
        for (int64_t t = 0; t < dim; ++t) {
          const V xt = D > 0 ? xv[D > 0 ? t : 0] : V{} + x[t];
          const V y = xt - mean[k * dim + t];
          acc += LogAtLeastOne<T, W>(one + coef[k] * (y * y) * inv2b[k * dim + t]);
        }
        lw[k] = cst[k] + expo[k] * acc;
      }
    }
    // The slot each lane's point leaves, with one member fewer.
    for (int l = 0; l < W; ++l) {
      const int64_t o = static_cast<int64_t>(old[l]);
      At(lw, o, l) = static_cast<T>(LeaveOut(o, l, x));
    }
    V lw_new;
    for (int l = 0; l < W; ++l) lw_new[l] = s->log_new[chain[l] * n + i];
    V top = lw_new;
    for (int64_t k = 0; k < kk; ++k) top = top > lw[k] ? top : lw[k];
    V cdf{};
    for (int64_t k = 0; k < kk; ++k) {
      cdf += ExpNonPositive<T, W>(lw[k] - top);
      lw[k] = cdf;
    }
    V ui;
    for (int l = 0; l < W; ++l) ui[l] = s->u[chain[l] * n + i];
    const V target = (cdf + ExpNonPositive<T, W>(lw_new - top)) * ui;
    V choice{};
    for (int64_t k = 0; k < kk; ++k) choice += lw[k] < target ? one : V{};
    if (AnyTrue(choice != old)) Move(i, x, old, choice, kk);
  }

  std::vector<V> yscratch;

  // The lanes whose point leaves its slot: remove, find a slot for a new
  // cluster (choice == kk: the first empty slot after the removal), add.
  __attribute__((noinline)) void Move(int64_t i, const T* x, const V& old, const V& choice,
                                      int64_t kk) {
    for (int l = 0; l < W; ++l) {
      if (choice[l] == old[l]) continue;
      const int64_t o = static_cast<int64_t>(old[l]);
      Remove(o, l, x);
      int64_t slot = static_cast<int64_t>(choice[l]);
      if (slot >= kk) {
        slot = -1;
        for (int64_t k = 0; k < K && slot < 0; ++k)
          if (At(cnt, k, l) == T(0)) slot = k;
        if (slot < 0) {
          overflow[l] = 1;
          slot = 0;
        }
      }
      Add(slot, l, x);
      Set(label, i, l, static_cast<T>(slot));
    }
  }


  // ---- Split-merge moves (one lane at a time, double) ----

  void SideClear(Side& sd) const {
    sd.n = 0.0;
    sd.logdet = 0.0;
    sd.m.assign(d, 0.0);
    if (full) {
      sd.F.assign(d * d, 0.0);
      for (int64_t t = 0; t < d; ++t) sd.F[t * d + t] = 1.0;
    } else {
      sd.F.assign(d, 0.5);
    }
  }

  // x joins the side (the rank-one updates of Add).
  void SideAdd(Side& sd, const T* x) {
    const double kn = s->kappa0 + sd.n, sc = kn / (kn + 1.0);
    double* r = work.data() + d * d;
    for (int64_t t = 0; t < d; ++t) r[t] = x[t] - sd.m[t];
    if (full) {
      double* w = r + d;
      const double tv = ScaledProduct(sd.F.data(), r, std::sqrt(sc), w);
      const double c = 1.0 / (1.0 + tv);
      for (int64_t i = 0; i < d; ++i)
        for (int64_t j = 0; j < d; ++j) sd.F[i * d + j] -= c * w[i] * w[j];
      sd.logdet += std::log1p(tv);
    } else {
      for (int64_t t = 0; t < d; ++t) sd.F[t] += 0.5 * sc * r[t] * r[t];
    }
    for (int64_t t = 0; t < d; ++t) sd.m[t] = (kn * sd.m[t] + x[t]) / (kn + 1.0);
    sd.n += 1.0;
  }

  // log n_s + log p(x | side): the slots' log weight.
  double SideWeight(const Side& sd, const T* x) const {
    const int64_t c = static_cast<int64_t>(sd.n);
    const double kn = s->kappa0 + sd.n, coef_s = kn / (kn + 1.0);
    const double ex = -0.5 * (s->nu0 + sd.n + 1.0);
    if (full) {
      double q = 0.0;
      for (int64_t i = 0; i < d; ++i) {
        const double yi = x[i] - sd.m[i];
        double row = 0.0;
        for (int64_t j = 0; j < d; ++j) row += sd.F[i * d + j] * (x[j] - sd.m[j]);
        q += yi * row;
      }
      return s->G[c] - 0.5 * sd.logdet + ex * std::log1p(coef_s * std::max(q, 0.0));
    }
    double lb = 0.0, ker = 0.0;
    for (int64_t t = 0; t < d; ++t) {
      const double y = x[t] - sd.m[t];
      lb += std::log(sd.F[t]);
      ker += std::log1p(coef_s * y * y / (2.0 * sd.F[t]));
    }
    return s->G[c] - 0.5 * lb + ex * ker;
  }

  // log p(X_side) (gibbs_gaussian.log_marginal_whitened of one cluster).
  double SideMarginal(const Side& sd) const {
    const double kn = s->kappa0 + sd.n, dd = static_cast<double>(d);
    if (full) {
      double lg = 0.0;
      for (int64_t j = 0; j < d; ++j)
        lg += std::lgamma(0.5 * (s->nu0 + sd.n) - 0.5 * j) - std::lgamma(0.5 * s->nu0 - 0.5 * j);
      return -0.5 * sd.n * dd * std::log(kPi) + lg - 0.5 * (s->nu0 + sd.n) * sd.logdet +
             0.5 * dd * std::log(s->kappa0 / kn);
    }
    const double a0 = 0.5 * s->nu0, an = a0 + 0.5 * sd.n;
    double lb = 0.0;
    for (int64_t t = 0; t < d; ++t) lb += std::log(sd.F[t]);
    return dd * (std::lgamma(an) - std::lgamma(a0)) + dd * a0 * std::log(0.5) - an * lb +
           0.5 * dd * std::log(s->kappa0 / kn) - 0.5 * sd.n * dd * std::log(2.0 * kPi);
  }

  // Slot k of lane l takes the side's statistics.
  void WriteSlot(int64_t k, int l, const Side& sd) {
    Set(cnt, k, l, static_cast<T>(sd.n));
    for (int64_t t = 0; t < d; ++t) Set(mean, k * d + t, l, static_cast<T>(sd.m[t]));
    if (full) {
      Set(logdet, k, l, static_cast<T>(sd.logdet));
      for (int64_t i = 0, p = 0; i < d; ++i)
        for (int64_t j = i; j < d; ++j, ++p)
          Set(P, k * np + p, l, static_cast<T>(i == j ? sd.F[i * d + i] : 2.0 * sd.F[i * d + j]));
    } else {
      for (int64_t t = 0; t < d; ++t) {
        Set(beta, k * d + t, l, static_cast<T>(sd.F[t]));
        Set(inv2b, k * d + t, l, static_cast<T>(0.5 / sd.F[t]));
      }
    }
    Terms(k, l);
    kmax = std::max(kmax, k + 1);
  }

  // One sequentially-allocated split-merge move of lane l (Dahl 2003; Jain &
  // Neal 2004; gibbs_gaussian.split_merge_move on the XLA path): points i != j
  // drawn uniformly; the other members of their clusters, in index order (a
  // visiting order that does not depend on the state, shared by the move and
  // its reverse), go to A = {i} or B = {j} with probability proportional to
  // n_s p(x | s) -- drawn for a split (z_i = z_j), forced to the current
  // clusters for a merge -- q the product of the probabilities; the split is
  // accepted with probability min(1, r / q), the merge with min(1, q / r),
  // r = p(z_split | X) / p(z_merge | X) from the conjugate marginals.
  void SplitMerge(int l, int64_t move, Side& A, Side& B, Side& AB, std::vector<uint8_t>& alloc) {
    const int64_t nv = s->n_valid;
    const uint64_t seed =
        (static_cast<uint64_t>(s->seeds[2 * chain[l]]) << 32) | s->seeds[2 * chain[l] + 1];
    const uint64_t base = static_cast<uint64_t>(move) * (nv + 3);
    auto unit = [&](uint64_t j) { return Unit<double>(SplitMix64(seed, base + j)); };
    const int64_t pi = std::min<int64_t>(static_cast<int64_t>(unit(0) * nv), nv - 1);
    const int64_t jj = std::min<int64_t>(static_cast<int64_t>(unit(1) * (nv - 1)), nv - 2);
    const int64_t pj = jj + (jj >= pi);
    const T ci = label[pi][l], cj = label[pj][l];
    const bool split = ci == cj;
    SideClear(A);
    SideClear(B);
    SideClear(AB);
    SideAdd(A, s->Z + pi * d);
    SideAdd(B, s->Z + pj * d);
    SideAdd(AB, s->Z + pi * d);
    SideAdd(AB, s->Z + pj * d);
    double log_q = 0.0;
    for (int64_t p = 0; p < nv; ++p) {
      const T lab = label[p][l];
      alloc[p] = 0;
      if ((lab != ci && lab != cj) || p == pi || p == pj) continue;
      const T* x = s->Z + p * d;
      const double diff = SideWeight(B, x) - SideWeight(A, x);  // log P(B) - log P(A)
      // log P(B) = -log(1 + e^-diff), log P(A) = log P(B) - diff, computed stably.
      const double log_pb = diff > 0 ? -std::log1p(std::exp(-diff)) : diff - std::log1p(std::exp(diff));
      const double log_pa = log_pb - diff;
      const bool to_b = split ? std::log(unit(3 + p)) < log_pb : lab == cj;
      log_q += to_b ? log_pb : log_pa;
      alloc[p] = to_b;
      SideAdd(to_b ? B : A, x);
      SideAdd(AB, x);
    }
    const double log_alpha = s->log_alpha[chain[l]];
    const double log_ratio = log_alpha + std::lgamma(A.n) + std::lgamma(B.n) -
                             std::lgamma(A.n + B.n) + SideMarginal(A) + SideMarginal(B) -
                             SideMarginal(AB);
    const double log_acc = split ? log_ratio - log_q : log_q - log_ratio;
    if (!(std::log(unit(2)) < log_acc)) return;
    const int64_t keep = static_cast<int64_t>(ci);
    if (split) {
      int64_t other = -1;
      for (int64_t k = 0; k < K && other < 0; ++k)
        if (At(cnt, k, l) == T(0)) other = k;
      if (other < 0) {  // no slot for B: the caller grows the buffer and redoes the sweep
        overflow[l] = 1;
        return;
      }
      const T to = static_cast<T>(other);
      Set(label, pj, l, to);
      for (int64_t p = 0; p < nv; ++p)
        if (alloc[p] && label[p][l] == ci) Set(label, p, l, to);
      WriteSlot(keep, l, A);
      WriteSlot(other, l, B);
    } else {
      const int64_t gone = static_cast<int64_t>(cj);
      for (int64_t p = 0; p < nv; ++p)
        if (label[p][l] == cj) Set(label, p, l, ci);
      WriteSlot(keep, l, AB);
      Clear(gone, l);
    }
    ++accepted[l];
  }

  void SplitMerges() {
    if (s->split_merge <= 0 || s->n_valid < 2) return;
    Side A, B, AB;
    std::vector<uint8_t> alloc(s->n_valid);
    for (int l = 0; l < lanes; ++l)
      for (int64_t move = 0; move < s->split_merge; ++move) SplitMerge(l, move, A, B, AB, alloc);
  }

  template <bool Full, int D>
  void PointsFor() {
    for (int64_t i = 0; i < s->n_valid; ++i) Step<Full, D>(i);
  }
  template <bool Full>
  void PointsFull() {
    switch (d) {
      case 1: PointsFor<Full, 1>(); break;
      case 2: PointsFor<Full, 2>(); break;
      case 3: PointsFor<Full, 3>(); break;
      case 4: PointsFor<Full, 4>(); break;
      case 5: PointsFor<Full, 5>(); break;
      case 6: PointsFor<Full, 6>(); break;
      case 7: PointsFor<Full, 7>(); break;
      case 8: PointsFor<Full, 8>(); break;
      case 9: PointsFor<Full, 9>(); break;
      case 10: PointsFor<Full, 10>(); break;
      default: PointsFor<Full, 0>();
    }
  }
  void Points() {
    yscratch.assign(d, V{});
    if (full) {
      PointsFull<true>();
    } else {
      PointsFull<false>();
    }
  }

  void Finish() {
    for (int l = 0; l < lanes; ++l) {
      const int64_t c = first + l;
      s->overflow_out[c] = overflow[l];
      s->accepted_out[c] = accepted[l];
      int32_t* out = s->labels_out + c * n;
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<int32_t>(label[i][l]);
    }
  }
};

template <typename T>
ffi::Error GaussImpl(ffi::ThreadPool pool, ffi::AnyBuffer Z, ffi::Buffer<ffi::S32> labels,
                     ffi::AnyBuffer counts, ffi::AnyBuffer means, ffi::AnyBuffer factor,
                     ffi::AnyBuffer logdet, ffi::AnyBuffer u, ffi::AnyBuffer log_new,
                     ffi::AnyBuffer kappa0, ffi::AnyBuffer nu0, ffi::Buffer<ffi::S32> n_valid,
                     ffi::AnyBuffer log_alpha, ffi::Buffer<ffi::U32> seeds,
                     ffi::Result<ffi::Buffer<ffi::S32>> labels_out,
                     ffi::Result<ffi::Buffer<ffi::S32>> overflow_out,
                     ffi::Result<ffi::Buffer<ffi::S32>> accepted_out, int32_t full,
                     int64_t split_merge, int32_t point_moves) {
  auto zd = Z.dimensions();
  auto ld = labels.dimensions();
  auto md = means.dimensions();
  auto fd = factor.dimensions();
  if (zd.size() != 2 || ld.size() != 2 || md.size() != 3 || ld[1] != zd[0] || md[0] != ld[0] ||
      md[2] != zd[1] || fd.size() != (full ? 4u : 3u))
    return ffi::Error::InvalidArgument(
        "gibbs_gaussian: Z must be (n, d), labels (C, n), means (C, K, d), factor (C, K, d, d) "
        "or (C, K, d)");
  auto sweep = std::make_shared<GaussSweep<T>>();
  GaussSweep<T>& s = *sweep;
  s.Z = static_cast<const T*>(Z.untyped_data());
  s.n = zd[0];
  s.d = zd[1];
  s.C = ld[0];
  s.K = md[1];
  s.full = full != 0;
  s.n_valid = std::clamp<int64_t>(n_valid.typed_data()[0], 0, s.n);
  s.labels_in = labels.typed_data();
  s.counts = static_cast<const T*>(counts.untyped_data());
  s.means = static_cast<const T*>(means.untyped_data());
  s.factor = static_cast<const T*>(factor.untyped_data());
  s.logdet = static_cast<const T*>(logdet.untyped_data());
  s.u = static_cast<const T*>(u.untyped_data());
  s.log_new = static_cast<const T*>(log_new.untyped_data());
  s.kappa0 = static_cast<const T*>(kappa0.untyped_data())[0];
  s.nu0 = static_cast<const T*>(nu0.untyped_data())[0];
  s.log_alpha = static_cast<const T*>(log_alpha.untyped_data());
  s.seeds = seeds.typed_data();
  s.split_merge = split_merge;
  s.point_moves = point_moves != 0;
  s.labels_out = labels_out->typed_data();
  s.overflow_out = overflow_out->typed_data();
  s.accepted_out = accepted_out->typed_data();
  if (split_merge < 0) return ffi::Error::InvalidArgument("gibbs_gaussian: split_merge must be >= 0");
  if (s.C == 0) return ffi::Error::Success();
  // G(c) for every count (gibbs_gaussian._weight_const without the log det).
  const double d = static_cast<double>(s.d);
  s.G.assign(s.n + 1, 0.0);
  for (int64_t c = 1; c <= s.n; ++c) {
    const double kn = s.kappa0 + c;
    if (s.full) {
      const double nn = s.nu0 + c;
      s.G[c] = std::log(static_cast<double>(c)) + std::lgamma(0.5 * (nn + 1.0)) -
               std::lgamma(0.5 * (nn - d + 1.0)) - 0.5 * d * std::log(kPi) -
               0.5 * d * std::log1p(1.0 / kn);
    } else {
      const double a = 0.5 * (s.nu0 + c);
      s.G[c] = std::log(static_cast<double>(c)) + d * (std::lgamma(a + 0.5) - std::lgamma(a)) -
               0.5 * d * std::log(2.0 * kPi * (1.0 + 1.0 / kn));
    }
  }
  constexpr int kLanes = 32 / sizeof(T);
  bayesclust::ForChainGroups(pool, s.C, kLanes, [sweep](int64_t first, int64_t count) {
    GaussGroup<T, kLanes> group;
    group.Init(sweep.get(), first, count);
    if (sweep->point_moves) group.Points();
    group.SplitMerges();
    group.Finish();
  });
  return ffi::Error::Success();
}

}  // namespace

#define BAYESCLUST_BIND_GIBBS_GAUSSIAN                              \
  ffi::Ffi::Bind()                                                  \
      .Ctx<ffi::ThreadPool>()                                       \
      .Arg<ffi::AnyBuffer>()        /* Z (n, d) */                  \
      .Arg<ffi::Buffer<ffi::S32>>() /* labels (C, n) */             \
      .Arg<ffi::AnyBuffer>()        /* counts (C, K) */             \
      .Arg<ffi::AnyBuffer>()        /* means (C, K, d) */           \
      .Arg<ffi::AnyBuffer>()        /* factor (C, K, d[, d]) */     \
      .Arg<ffi::AnyBuffer>()        /* logdet (C, K) */             \
      .Arg<ffi::AnyBuffer>()        /* u (C, n) */                  \
      .Arg<ffi::AnyBuffer>()        /* log_new (C, n) */            \
      .Arg<ffi::AnyBuffer>()        /* kappa0 () */                 \
      .Arg<ffi::AnyBuffer>()        /* nu0 () */                    \
      .Arg<ffi::Buffer<ffi::S32>>() /* n_valid () */                \
      .Arg<ffi::AnyBuffer>()        /* log_alpha (C,) */            \
      .Arg<ffi::Buffer<ffi::U32>>() /* seeds (C, 2) */              \
      .Ret<ffi::Buffer<ffi::S32>>() /* labels (C, n) */             \
      .Ret<ffi::Buffer<ffi::S32>>() /* overflow (C,) */             \
      .Ret<ffi::Buffer<ffi::S32>>() /* accepted (C,) */             \
      .Attr<int32_t>("full")                                        \
      .Attr<int64_t>("split_merge")                                 \
      .Attr<int32_t>("point_moves")

XLA_FFI_DEFINE_HANDLER_SYMBOL(BayesclustGibbsGaussianF32, GaussImpl<float>,
                              BAYESCLUST_BIND_GIBBS_GAUSSIAN);
XLA_FFI_DEFINE_HANDLER_SYMBOL(BayesclustGibbsGaussianF64, GaussImpl<double>,
                              BAYESCLUST_BIND_GIBBS_GAUSSIAN);
