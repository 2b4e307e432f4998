// CEC-IB (Smieja & Geiger 2017): Hartigan passes with full covariances, in one host call.
//
// The same visits, in the same order, with the same formulas as the NumPy loop of
// bayesclust/inference/information/cecib.py (_visit, _ClusterStats.add_candidates /
// remove_candidate / commit_add / commit_remove / assign_greedy) and its compiled JAX scan
// (_cecib_scan.py): every point in index order is removed from its cluster and added to
// the cluster of largest cost decrease when that exceeds tol, the two clusters updated by
// rank-one formulas (matrix determinant lemma for the log-determinants, Sherman--Morrison
// for the inverses), a cluster that falls below n_min points is deleted and its members
// reassigned one by one in index order to the cluster of smallest cost increase.  After a
// pass every statistic is recomputed from the member points (the NumPy recompute), the
// log-determinant and inverse by Cholesky instead of eigvalsh / inv.
//
// Two cases go back to the host, which handles them exactly as the NumPy loop does:
// a visit whose downdate factor 1 - q / (n - 1) is at or below 1e-6 (the host checks the
// covariance of the remaining member points; status 1, *pos at that point), and an
// end-of-pass recompute with a covariance that may be singular by NumPy's rule (smallest
// eigenvalue <= 1e-12 x largest): since cond(C) <= tr(C) tr(C^-1), a covariance with
// tr(C) tr(C^-1) below 1e10 is certainly regular; any other, or a failed Cholesky, returns
// status 2 and the host recomputes from the labels.  Results agree with the NumPy loop
// up to round-off in the last bits: only a gain that ties tol to ~1e-13 could move
// differently.
//
// Called through ctypes (bayesclust._native.cecib_passes); host code, not an XLA custom call:
// the number of visits and moves is data dependent.

#pragma GCC optimize("fp-contract=off")

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <utility>
#include <vector>

namespace {

using i64 = int64_t;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSuspectTol = 1e-6;   // _SUSPECT_TOL of _cecib_scan.py
constexpr double kCondBound = 1e10;    // tr(C) tr(C^-1) at or above this: the host decides

inline double xlogx(double c) { return c > 0 ? c * std::log(c) : 0.0; }

// w = A v for a symmetric d x d A, as w += v_c A[c, :] over c in order, and returns
// q = v'w.  The fixed-size versions keep w in registers (the runtime-d loop stores and
// reloads it for every c) and take q from the registers too (reading w back as a vector
// right after storing it stalls on store forwarding).
template <int D>
double matvec_fixed(const double* A, const double* v, double* w, i64) {
  double acc[D] = {};
  for (int c = 0; c < D; ++c) {
    const double vc = v[c];
    for (int r = 0; r < D; ++r) acc[r] += vc * A[c * D + r];
  }
  double q = 0.0;
  for (int r = 0; r < D; ++r) {
    w[r] = acc[r];
    q += v[r] * acc[r];
  }
  return q;
}

double matvec_any(const double* A, const double* v, double* w, i64 d) {
  for (i64 r = 0; r < d; ++r) w[r] = 0.0;
  for (i64 c = 0; c < d; ++c) {
    const double vc = v[c];
    const double* row = A + c * d;
    for (i64 r = 0; r < d; ++r) w[r] += vc * row[r];
  }
  double q = 0.0;
  for (i64 r = 0; r < d; ++r) q += v[r] * w[r];
  return q;
}

using Matvec = double (*)(const double*, const double*, double*, i64);

template <int... Ds>
Matvec pick_matvec(i64 d, std::integer_sequence<int, Ds...>) {
  Matvec out = matvec_any;
  ((d == Ds + 1 ? (out = matvec_fixed<Ds + 1>, 0) : 0), ...);
  return out;
}

struct Run {
  const double* X;
  const i64* z;
  i64 n, d, K, M;  // points, dimension, slots, label columns of counts
  i64* labels;
  uint8_t* active;
  uint8_t* deleted;
  double *mu, *cov, *inv, *logdet, *cnt, *counts, *L, *S, *H, *E;
  double n_min, tol, beta, c0, n_total;
  std::vector<double> v, w, q, E_add, ld_add, S_add, H_add, chol;
  std::vector<i64> members;
  std::vector<uint8_t> rejected;
  Matvec matvec = matvec_any;

  // v = x - mu_j, w = inv_j v, q = v'w of slot j.
  void project(const double* x, i64 j) {
    double* vj = &v[j * d];
    const double* m = &mu[j * d];
    for (i64 c = 0; c < d; ++c) vj[c] = x[c] - m[c];
    q[j] = matvec(&inv[j * d * d], vj, &w[j * d], d);
  }

  // True when slot j's gain E_j + keep - E_add_j is certainly at most tol for a point with
  // q >= q_low: ln(1 + y) is at least (e + m - 1) ln 2 for 1 + y = m 2^e, m in [1, 2) (the
  // chord of the concave ln m; error < 0.06), and the label entropy at least 0.
  bool reject(i64 j, double q_low, i64 zi, double keep) const {
    const double y = q_low * inv_n1[j];
    if (!(y >= 0 && y < 1e300)) return false;
    uint64_t bits;
    const double y1 = 1.0 + y;
    std::memcpy(&bits, &y1, sizeof bits);
    const double e = static_cast<double>(static_cast<int64_t>(bits >> 52) - 1023);
    bits = (bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
    double m;
    std::memcpy(&m, &bits, sizeof m);
    const double lb = (e + (m - 1.0)) * 0.6931471805599453 - 1e-12;
    const double low = (zi >= 0 ? base1[j] : base1_h[j]) + half_p1[j] * (ldr[j] + lb);
    const double ub = E[j] + keep - low;
    const double slack = 1e-12 * (1.0 + std::fabs(E[j]) + std::fabs(keep) + std::fabs(low));
    return ub + slack <= tol;
  }

  // add_candidates of x (label zi) for every active slot but `skip`: v, w, q, and the slot's
  // log-determinant, label sums and cost with x added.  With skip >= 0 (a visit of a point
  // of slot skip whose removal leaves the other slots a gain E_j + keep - E_add_j), a slot
  // whose gain is certainly at most tol is only marked rejected and its cost not computed:
  // it cannot be the move (whose gain exceeds tol), and the log1p it saves is most of a
  // visit's cost.
  void candidates(const double* x, i64 zi, i64 skip = -1, double keep = 0.0) {
    for (i64 j = 0; j < K; ++j) {
      if (!active[j] || j == skip) continue;
      rejected[j] = 0;
      project(x, j);
      const double qq = q[j];
      const double y = qq * inv_n1[j];
      if (skip >= 0 && reject(j, qq, zi, keep)) {
        rejected[j] = 1;
        continue;
      }
      const double ld = ldr[j] + std::log1p(y);
      double Sj = S[j], Hj = H[j];
      if (zi >= 0) {
        const double c = counts[j * M + zi];
        Sj = S[j] - xlogx(c) + xlogx(c + 1.0);
        Hj = std::log(L[j] + 1.0) - Sj / (L[j] + 1.0);
        E_add[j] = base1[j] + p1[j] * beta * Hj + half_p1[j] * ld;
      } else {
        E_add[j] = base1_h[j] + half_p1[j] * ld;
      }
      ld_add[j] = ld;
      S_add[j] = Sj;
      H_add[j] = Hj;
    }
  }

  // Per-slot constants of candidates() (_ClusterStats._refresh), after any change of slot j.
  std::vector<double> ldr, inv_n1, p1, base1, base1_h, half_p1;
  void refresh(i64 j) {
    const double nj = cnt[j], n1 = nj + 1.0;
    inv_n1[j] = 1.0 / n1;
    ldr[j] = logdet[j] + d * std::log(nj / n1);
    p1[j] = n1 / n_total;
    half_p1[j] = 0.5 * p1[j];
    base1[j] = p1[j] * (c0 - std::log(p1[j]));
    base1_h[j] = base1[j] + p1[j] * beta * H[j];
  }

  double cost(double nj, double ld, double Hj) const {
    const double p = nj / n_total;
    return p * (c0 + 0.5 * ld + beta * Hj - std::log(p));
  }

  void commit_add(i64 j, i64 zi) {
    const double nj = cnt[j], r = nj / (nj + 1.0);
    const double* vj = &v[j * d];
    const double* wj = &w[j * d];
    double* m = &mu[j * d];
    double* C = &cov[j * d * d];
    double* A = &inv[j * d * d];
    const double den = nj + 1.0 + q[j];
    for (i64 c = 0; c < d; ++c) m[c] += vj[c] / (nj + 1.0);
    for (i64 a = 0; a < d; ++a)
      for (i64 b = 0; b < d; ++b) {
        C[a * d + b] = r * (C[a * d + b] + vj[a] * vj[b] / (nj + 1.0));
        A[a * d + b] = (A[a * d + b] - wj[a] * wj[b] / den) / r;
      }
    logdet[j] = ld_add[j];
    cnt[j] = nj + 1.0;
    if (zi >= 0) {
      counts[j * M + zi] += 1.0;
      L[j] += 1.0;
    }
    S[j] = S_add[j];
    H[j] = H_add[j];
    E[j] = E_add[j];
    refresh(j);
  }

  // assign_greedy of point p (label -1); false when no slot can take it.
  bool greedy(i64 p) {
    const i64 zi = z[p];
    candidates(X + p * d, zi);
    i64 best = -1;
    double best_inc = kInf;
    for (i64 j = 0; j < K; ++j) {
      if (!active[j]) continue;
      const double inc = E_add[j] - E[j];
      if (std::isnan(inc)) continue;
      if (best < 0 || inc < best_inc) {
        best = j;
        best_inc = inc;
      }
    }
    if (best < 0 || !std::isfinite(best_inc)) return false;
    commit_add(best, zi);
    labels[p] = best;
    return true;
  }

  // One visit of point i: 0 no move, 1 moved, 2 host visit (suspect downdate), 3 fail.
  int visit(i64 i) {
    const i64 a = labels[i];
    const i64 zi = z[i];
    const double* x = X + i * d;
    project(x, a);
    const double na = cnt[a];
    const double f = 1.0 - q[a] / (na - 1.0);
    if (f <= kSuspectTol) return 2;
    const double ld_rm = logdet[a] + d * std::log(na / (na - 1.0)) + std::log(f);
    double S_rm = S[a], H_rm = H[a];
    if (zi >= 0) {
      const double c = counts[a * M + zi];
      S_rm = S[a] - c * std::log(c) + (c > 1 ? (c - 1.0) * std::log(c - 1.0) : 0.0);
      const double Lr = L[a] - 1.0;
      H_rm = Lr > 0 ? std::log(Lr) - S_rm / Lr : 0.0;
    }
    const double E_rm = cost(na - 1.0, ld_rm, H_rm);
    const double keep = E[a] - E_rm;
    candidates(x, zi, a, keep);
    i64 j = -1;
    double best = -kInf;
    for (i64 k = 0; k < K; ++k) {
      double g;
      if (k == a)
        g = 0.0;
      else if (!active[k] || rejected[k])
        g = -kInf;
      else
        g = E[k] + keep - E_add[k];
      if (std::isnan(g)) {  // NumPy's argmax stops at the first NaN
        j = k;
        best = g;
        break;
      }
      if (j < 0 || g > best) {
        j = k;
        best = g;
      }
    }
    if (!(best > tol)) return 0;
    // commit_remove(a)
    {
      const double r = na / (na - 1.0);
      const double* va = &v[a * d];
      const double* wa = &w[a * d];
      double* m = &mu[a * d];
      double* C = &cov[a * d * d];
      double* A = &inv[a * d * d];
      const double den = na - 1.0 - q[a];
      for (i64 c = 0; c < d; ++c) m[c] -= va[c] / (na - 1.0);
      for (i64 s = 0; s < d; ++s)
        for (i64 t = 0; t < d; ++t) {
          C[s * d + t] = r * (C[s * d + t] - va[s] * va[t] / (na - 1.0));
          A[s * d + t] = (A[s * d + t] + wa[s] * wa[t] / den) / r;
        }
      logdet[a] = ld_rm;
      cnt[a] = na - 1.0;
      if (zi >= 0) {
        counts[a * M + zi] -= 1.0;
        L[a] -= 1.0;
      }
      S[a] = S_rm;
      H[a] = H_rm;
      E[a] = E_rm;
      refresh(a);
    }
    commit_add(j, zi);
    labels[i] = j;
    if (cnt[a] < n_min) {
      members.clear();
      for (i64 p = 0; p < n; ++p)
        if (labels[p] == a) members.push_back(p);
      deleted[a] = 1;
      active[a] = 0;
      E[a] = 0.0;
      cnt[a] = 0.0;
      refresh(a);
      for (i64 p : members) labels[p] = -1;
      for (i64 p : members)
        if (!greedy(p)) return 3;
    }
    return 1;
  }

  // The end-of-pass recompute from the labels; false when a covariance may be singular.
  bool recompute(double* total) {
    for (i64 j = 0; j < K; ++j) {
      cnt[j] = 0.0;
      for (i64 c = 0; c < d; ++c) mu[j * d + c] = 0.0;
      for (i64 c = 0; c < M; ++c) counts[j * M + c] = 0.0;
    }
    for (i64 p = 0; p < n; ++p) {
      const i64 j = labels[p];
      cnt[j] += 1.0;
      for (i64 c = 0; c < d; ++c) mu[j * d + c] += X[p * d + c];
      if (z[p] >= 0) counts[j * M + z[p]] += 1.0;
    }
    for (i64 j = 0; j < K; ++j) {
      active[j] = cnt[j] > 0 && !deleted[j];
      double* C = &cov[j * d * d];
      double* A = &inv[j * d * d];
      for (i64 c = 0; c < d * d; ++c) C[c] = A[c] = 0.0;
      if (!active[j]) {
        for (i64 c = 0; c < d; ++c) mu[j * d + c] = 0.0;
        logdet[j] = std::numeric_limits<double>::quiet_NaN();
      } else {
        for (i64 c = 0; c < d; ++c) mu[j * d + c] /= cnt[j];
      }
    }
    for (i64 p = 0; p < n; ++p) {
      const i64 j = labels[p];
      if (!active[j]) continue;
      double* C = &cov[j * d * d];
      const double* m = &mu[j * d];
      double* __restrict diff = &chol[0];
      for (i64 c = 0; c < d; ++c) diff[c] = X[p * d + c] - m[c];
      for (i64 s = 0; s < d; ++s) {  // the full square (vectorised rows); symmetric anyway
        const double ds = diff[s];
        double* __restrict row = C + s * d;
        for (i64 t = 0; t < d; ++t) row[t] += ds * diff[t];
      }
    }
    double tot = 0.0;
    for (i64 j = 0; j < K; ++j) {
      double Lj = 0.0, Sj = 0.0;
      for (i64 c = 0; c < M; ++c) {
        Lj += counts[j * M + c];
        Sj += xlogx(counts[j * M + c]);
      }
      L[j] = Lj;
      S[j] = Sj;
      H[j] = Lj > 0 ? std::log(Lj) - Sj / Lj : 0.0;
      E[j] = 0.0;
      if (!active[j]) continue;
      double* C = &cov[j * d * d];
      double* A = &inv[j * d * d];
      for (i64 s = 0; s < d; ++s)
        for (i64 t = 0; t <= s; ++t) {
          C[s * d + t] /= cnt[j];
          C[t * d + s] = C[s * d + t];  // the lower triangle's sums (those of the NumPy loop's order)
        }
      // Cholesky C = G G' (lower), log det, and C^-1 = G^-T G^-1.
      double* G = &chol[0];
      for (i64 s = 0; s < d; ++s)
        for (i64 t = 0; t < d; ++t) G[s * d + t] = t <= s ? C[s * d + t] : 0.0;
      double ld = 0.0, trace = 0.0;
      for (i64 s = 0; s < d; ++s) {
        trace += C[s * d + s];
        for (i64 t = 0; t <= s; ++t) {
          double acc = G[s * d + t];
          for (i64 u = 0; u < t; ++u) acc -= G[s * d + u] * G[t * d + u];
          if (t == s) {
            if (!(acc > 0)) return false;
            G[s * d + s] = std::sqrt(acc);
            ld += std::log(acc);
          } else {
            G[s * d + t] = acc / G[t * d + t];
          }
        }
      }
      // Gi = G^-1 (lower triangular).
      std::vector<double>& Gi = w_inv;
      for (i64 c = 0; c < d * d; ++c) Gi[c] = 0.0;
      for (i64 t = 0; t < d; ++t) {
        Gi[t * d + t] = 1.0 / G[t * d + t];
        for (i64 s = t + 1; s < d; ++s) {
          double acc = 0.0;
          for (i64 u = t; u < s; ++u) acc -= G[s * d + u] * Gi[u * d + t];
          Gi[s * d + t] = acc / G[s * d + s];
        }
      }
      double tr_inv = 0.0;
      for (i64 s = 0; s < d; ++s)
        for (i64 t = 0; t <= s; ++t) {
          double acc = 0.0;
          for (i64 u = s; u < d; ++u) acc += Gi[u * d + s] * Gi[u * d + t];
          A[s * d + t] = A[t * d + s] = acc;
          if (s == t) tr_inv += acc;
        }
      if (!(trace * tr_inv < kCondBound)) return false;
      logdet[j] = ld;
      E[j] = cost(cnt[j], ld, H[j]);
      tot += E[j];
    }
    for (i64 j = 0; j < K; ++j) refresh(j);
    *total = tot;
    return true;
  }

  std::vector<double> w_inv;
};

}  // namespace

extern "C" {

// Hartigan passes of CEC-IB with full covariances, in place on the host's statistics
// (float64, C order): labels (n,), active / deleted (K,) bytes, mu (K, d), cov / inv (K, d, d),
// logdet / cnt / L / S / H / E (K,), counts (K, M).  Starts at point *pos of a pass in which
// *moved says whether a point has moved yet; runs until max_passes passes have ended.  Each
// pass that ends here writes its objective and moved flag to trace[*passes] / moved_of[*passes]
// and increments *passes; a pass that moved nothing ends the run.  max_passes = 0: only the
// recompute from the labels (0, or 2 when a covariance may be singular).  Returns 0 (done: converged
// or max_passes), 1 (the host visits point *pos, then calls again from *pos + 1), 2 (the host
// recomputes the statistics from the labels: a covariance may be singular; the pass has ended
// but is not counted), 3 (a deleted cluster's point found no cluster: degenerate X),
// 4 (no memory).
int bayesclust_cecib_passes(const double* X, const int64_t* z, int64_t n, int64_t d, int64_t K,
                            int64_t M, int64_t* labels, uint8_t* active, uint8_t* deleted,
                            double* mu, double* cov, double* inv, double* logdet, double* cnt,
                            double* counts, double* L, double* S, double* H, double* E,
                            double n_min, double tol, double beta, double c0, int64_t* pos,
                            uint8_t* moved, int64_t max_passes, int64_t* passes, double* trace,
                            uint8_t* moved_of) {
  try {
    Run run{X, z, n, d, K, M, labels, active, deleted, mu, cov, inv, logdet, cnt, counts, L, S,
            H, E, n_min, tol, beta, c0, static_cast<double>(n)};
    const i64 kd = K * d > d * d ? K * d : d * d;
    run.v.assign(kd, 0.0);
    run.w.assign(kd, 0.0);
    run.q.assign(K, 0.0);
    run.E_add.assign(K, 0.0);
    run.ld_add.assign(K, 0.0);
    run.S_add.assign(K, 0.0);
    run.H_add.assign(K, 0.0);
    run.chol.assign(d * d, 0.0);
    run.w_inv.assign(d * d, 0.0);
    run.members.reserve(n);
    run.rejected.assign(K, 0);
    run.matvec = pick_matvec(d, std::make_integer_sequence<int, 16>{});
    for (auto* a : {&run.ldr, &run.inv_n1, &run.p1, &run.base1, &run.base1_h, &run.half_p1})
      a->assign(K, 0.0);
    for (i64 j = 0; j < K; ++j) run.refresh(j);
    if (max_passes == 0) {  // the recompute alone (every label >= 0)
      double total = 0.0;
      return run.recompute(&total) ? 0 : 2;
    }
    while (*passes < max_passes) {
      for (i64 i = *pos; i < n; ++i) {
        const int s = run.visit(i);
        if (s == 2) {
          *pos = i;
          return 1;
        }
        if (s == 3) {
          *pos = i;
          return 3;
        }
        if (s == 1) *moved = 1;
      }
      *pos = n;
      double total = 0.0;
      if (!run.recompute(&total)) return 2;
      trace[*passes] = total;
      moved_of[*passes] = *moved;
      *passes += 1;
      const bool converged = !*moved;
      *pos = 0;
      *moved = 0;
      if (converged) break;
    }
  } catch (const std::bad_alloc&) {
    return 4;
  }
  return 0;
}

}  // extern "C"
