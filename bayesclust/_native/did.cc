// SL-DID (Aidos & Fred 2011) and SL-AGLO (Fred & Leitao 2003): single link's agglomeration
// order with dissimilarity-increment tests, the whole run in one host call.
//
// The same state and the same decisions as the NumPy driver of
// bayesclust/inference/increments/did_hierarchy.py (class _Agglomeration and the loops of
// sl_did / sl_aglo), step for step: an (n, n) single-link distance matrix between the current
// clusters (Lance--Williams' minimum update), each cluster's nearest eligible point, the pairs
// already tested, and per point its two nearest neighbours inside its cluster, updated from the
// cross distances at every merge.  A tested pair is O(n) arithmetic, which the NumPy driver
// wraps in dozens of interpreter-level calls (BENCHMARKS.md, the SL-DID vs SciPy table).
//
// Bit for bit with the NumPy driver: the distances (sqrt of the sum of squared differences,
// summed left to right, no fused multiply-add -- SciPy's cdist), the means of increments
// (NumPy's pairwise summation), every comparison and tie rule.  The 2-DID log density and
// survival function use exp(u^2) erfc(u) for SciPy's erfcx and libm's log, which may differ
// from SciPy's / NumPy's in the last bits: only a description-length comparison or tail test
// that ties to ~1e-14 relative could decide differently.
//
// Called through ctypes (bayesclust._native.did_agglomerate); not an XLA custom call: the
// algorithm is host code with a data-dependent number of steps and output size.

#pragma GCC optimize("fp-contract=off")

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <vector>

#if defined(__AVX512F__) || defined(__AVX__)
#include <immintrin.h>
#endif

namespace {

using i64 = int64_t;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr i64 kNoIndex = std::numeric_limits<i64>::max();

// --------------------------------------------------------------------------- NumPy's sum

// np.add.reduce of a contiguous float64 vector: pairwise summation, 8 accumulators below 128.
double pairwise_sum(const double* a, i64 n) {
  if (n < 8) {
    double res = 0.0;
    for (i64 i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    double r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    i64 i = 8;
    for (; i < n - (n % 8); i += 8)
      for (int j = 0; j < 8; ++j) r[j] += a[i + j];
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  i64 n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

double mean(const std::vector<double>& w) {
  return (0.0 + pairwise_sum(w.data(), static_cast<i64>(w.size()))) / static_cast<double>(w.size());
}

// IEEE square roots (correctly rounded, so every path gives the same bits), in SIMD registers
// where the target has them: GCC keeps std::sqrt scalar for errno's sake.
void sqrt_in_place(double* a, i64 n) {
  i64 j = 0;
#if defined(__AVX512F__)
  for (; j + 8 <= n; j += 8) _mm512_storeu_pd(a + j, _mm512_sqrt_pd(_mm512_loadu_pd(a + j)));
#elif defined(__AVX__)
  for (; j + 4 <= n; j += 4) _mm256_storeu_pd(a + j, _mm256_sqrt_pd(_mm256_loadu_pd(a + j)));
#endif
  for (; j < n; ++j) a[j] = std::sqrt(a[j]);
}

// The first index of the smallest max(a[p], b[p]) (b = nullptr: of a[p]); 0 if all are inf,
// as np.argmin.  Eight lanes of minima, then a search for the first equal entry.
i64 first_argmin(const double* a, const double* b, i64 n) {
  double m[8];
  for (int j = 0; j < 8; ++j) m[j] = kInf;
  i64 p = 0;
  if (b) {
    for (; p + 8 <= n; p += 8)
      for (int j = 0; j < 8; ++j) {
        double v = std::max(a[p + j], b[p + j]);
        m[j] = v < m[j] ? v : m[j];
      }
  } else {
    for (; p + 8 <= n; p += 8)
      for (int j = 0; j < 8; ++j) m[j] = a[p + j] < m[j] ? a[p + j] : m[j];
  }
  double best = kInf;
  for (int j = 0; j < 8; ++j) best = m[j] < best ? m[j] : best;
  for (; p < n; ++p) {
    double v = b ? std::max(a[p], b[p]) : a[p];
    best = v < best ? v : best;
  }
  for (p = 0; p < n; ++p)
    if ((b ? std::max(a[p], b[p]) : a[p]) == best) return p;
  return 0;
}

// --------------------------------------------------------------------------- the 2-DID law

const double kPi = 3.141592653589793;
const double kBeta = 2.0 - std::sqrt(2.0);  // Aidos & Fred 2012, eq. 10
constexpr double kSeriesFrom = 10.0;
constexpr int kSeriesTerms = 14;
constexpr double kFisher = 1.8869535;  // kernels.DID2_FISHER

struct Series {
  double g[kSeriesTerms];  // g(u) = u + sqrt(pi) erfcx(u) (1/2 - u^2) ~ sum g_m u^(-2m-1)
  double h[kSeriesTerms];  // 1 - v sqrt(pi) erfcx(v) ~ sum h_m v^(-2m-2)
  Series() {
    double c[kSeriesTerms + 2];
    c[0] = 1.0;
    for (int k = 1; k < kSeriesTerms + 2; ++k) c[k] = -c[k - 1] * (2 * k - 1) / 2.0;
    for (int m = 0; m < kSeriesTerms; ++m) {
      g[m] = c[m] / 2.0 - c[m + 1];
      h[m] = -c[m + 1];
    }
  }
};
const Series kSeries;

double horner(double v, const double* coeffs) {
  double z = 1.0 / (v * v);
  double acc = 0.0 + coeffs[kSeriesTerms - 1];
  for (int m = kSeriesTerms - 2; m >= 0; --m) acc = acc * z + coeffs[m];
  return acc;
}

// exp(x^2) erfc(x) for 0 <= x < 10, x^2 split exactly into hi + lo.
double erfcx(double x) {
  double hi = x * x;
  double lo = std::fma(x, x, -hi);
  return std::exp(hi) * std::exp(lo) * std::erfc(x);
}

double did2_logpdf(double w, double lam) {
  double a = kPi * (kBeta * kBeta) / (4.0 * lam * lam);
  double u = w * std::sqrt(a / 2.0);
  double g = u >= kSeriesFrom ? horner(u, kSeries.g) / u
                              : u + std::sqrt(kPi) * erfcx(u) * (0.5 - u * u);
  return -a * w * w + 0.5 * std::log(2.0 * a) + std::log(g);
}

double did2_logsf(double w, double lam) {
  const double m2 = std::sqrt(kPi / 2.0) * kBeta;
  double u = w * m2 / lam;
  double v = 0.5 * u;
  double s = v >= kSeriesFrom ? horner(v, kSeries.h) / (v * v)
                              : 1.0 - v * std::sqrt(kPi) * erfcx(v);
  return -0.5 * u * u + std::log(s);
}

// kernels.description_length(w, lam): Wallace & Freeman's two-part code, the 1/lam prior.
double description_length(const std::vector<double>& w, double lam) {
  std::vector<double> lp(w.size());
  for (size_t i = 0; i < w.size(); ++i) lp[i] = did2_logpdf(w[i], lam);
  double loglik = 0.0 + pairwise_sum(lp.data(), static_cast<i64>(lp.size()));
  return 0.5 * (1.0 - std::log(12.0)) + 0.5 * std::log(static_cast<double>(w.size()) * kFisher) -
         loglik;
}

// --------------------------------------------------------------------------- the agglomeration

struct Union {
  std::vector<i64> rows;   // sorted points
  std::vector<i64> idx;    // (size, 2) their two nearest neighbours inside the union
  std::vector<double> dist;
};

bool before(double d1, i64 i1, double d2, i64 i2) {
  if (i1 < 0) i1 = kNoIndex;
  if (i2 < 0) i2 = kNoIndex;
  return d1 < d2 || (d1 == d2 && i1 < i2);
}

struct Agglomeration {
  i64 n, d;
  const double* X;
  std::unique_ptr<double[]> D;
  std::vector<i64> owner;
  std::vector<char> dead, frozen;
  std::vector<double> pen;  // inf at the points of isolated clusters, else 0
  std::vector<i64> pos;     // scratch: a point's place in the union at hand
  std::vector<std::vector<i64>> members, tested;
  std::vector<i64> nn_idx;
  std::vector<double> nn_dist;
  std::vector<double> rowmin;
  std::vector<i64> rowarg;
  std::vector<char> has_lam, has_dl;
  std::vector<double> lam, dl;
  double* merges;
  i64 n_merges = 0, n_tests = 0;

  double dist(i64 i, i64 j) const {
    const double* x = X + i * d;
    const double* y = X + j * d;
    double acc = 0.0;
    for (i64 k = 0; k < d; ++k) {
      double t = x[k] - y[k];
      acc += t * t;
    }
    return std::sqrt(acc);
  }

  Agglomeration(const double* X_, i64 n_, i64 d_, double* merges_)
      : n(n_), d(d_), X(X_), D(new double[n_ * n_]), owner(n_), dead(n_, 0), frozen(n_, 0),
        pen(n_, 0.0), pos(n_, 0), members(n_), tested(n_), nn_idx(2 * n_, -1), nn_dist(2 * n_, kInf),
        rowmin(n_), rowarg(n_), has_lam(n_, 0), has_dl(n_, 0), lam(n_), dl(n_),
        merges(merges_) {
    // row by row, the coordinates in columns: the sums over k run left to right as cdist's
    // and vectorise over j
    std::vector<double> Xt(d * n);
    for (i64 i = 0; i < n; ++i)
      for (i64 k = 0; k < d; ++k) Xt[k * n + i] = X[i * d + k];
    for (i64 i = 0; i < n; ++i) {
      double* row = &D[i * n];
      for (i64 j = 0; j < n; ++j) row[j] = 0.0;
      for (i64 k = 0; k < d; ++k) {
        const double xik = X[i * d + k];
        const double* col = &Xt[k * n];
        for (i64 j = 0; j < n; ++j) {
          double t = xik - col[j];
          row[j] += t * t;
        }
      }
      sqrt_in_place(row, n);
      row[i] = kInf;
      owner[i] = i;
      members[i].assign(1, i);
      i64 a = first_argmin(row, nullptr, n);
      rowmin[i] = row[a];
      rowarg[i] = a;
    }
  }

  bool next_pair(i64* s, i64* t) const {
    i64 a = first_argmin(rowmin.data(), nullptr, n);
    if (!std::isfinite(rowmin[a])) return false;
    *s = a;
    *t = owner[rowarg[a]];
    return true;
  }

  // excluded: dead points, the row's own cluster, the clusters it was tested against
  void set_pen(i64 r, double own) {
    for (i64 p : members[r]) pen[p] = own;
    for (i64 c : tested[r])
      for (i64 p : members[c]) pen[p] = dead[p] ? kInf : own;
  }

  void refresh_row(i64 r) {
    set_pen(r, kInf);
    const double* row = &D[r * n];
    i64 arg = first_argmin(row, pen.data(), n);
    rowmin[r] = std::max(row[arg], pen[arg]);
    rowarg[r] = arg;
    set_pen(r, 0.0);
  }

  void reject(i64 s, i64 t) {
    tested[s].push_back(t);
    tested[t].push_back(s);
    refresh_row(s);
    refresh_row(t);
  }

  void freeze(i64 f) {
    frozen[f] = 1;
    for (i64 p : members[f]) {
      dead[p] = 1;
      pen[p] = kInf;
    }
    rowmin[f] = kInf;
    for (i64 r = 0; r < n; ++r)
      if (dead[rowarg[r]] && std::isfinite(rowmin[r])) refresh_row(r);
  }

  void merge(i64 s, i64 t, Union& u) {
    i64 keep = std::min(s, t), gone = std::max(s, t);
    merges[3 * n_merges] = static_cast<double>(keep);
    merges[3 * n_merges + 1] = static_cast<double>(gone);
    merges[3 * n_merges + 2] = rowmin[s];
    ++n_merges;
    double* rk = &D[keep * n];
    const double* rg = &D[gone * n];
    for (i64 p = 0; p < n; ++p) rk[p] = std::min(rk[p], rg[p]);
    for (i64 p : members[gone]) owner[p] = keep;
    for (size_t i = 0; i < u.rows.size(); ++i) {
      i64 p = u.rows[i];
      nn_idx[2 * p] = u.idx[2 * i];
      nn_idx[2 * p + 1] = u.idx[2 * i + 1];
      nn_dist[2 * p] = u.dist[2 * i];
      nn_dist[2 * p + 1] = u.dist[2 * i + 1];
    }
    members[keep].swap(u.rows);
    std::vector<i64>().swap(members[gone]);
    std::vector<i64> stale = tested[keep];
    for (i64 p : tested[gone])
      if (std::find(stale.begin(), stale.end(), p) == stale.end()) stale.push_back(p);
    for (i64 p : stale) {
      auto& tp = tested[p];
      tp.erase(std::remove_if(tp.begin(), tp.end(), [&](i64 c) { return c == keep || c == gone; }),
               tp.end());
    }
    tested[keep].clear();
    std::vector<i64>().swap(tested[gone]);
    has_lam[keep] = has_lam[gone] = has_dl[keep] = has_dl[gone] = 0;
    rowmin[gone] = kInf;
    refresh_row(keep);
    for (i64 p : stale)
      if (!frozen[p]) refresh_row(p);
  }

  // (distance, p in s, q in t), ties to the smallest p, then q.
  void closest_pair(i64 s, i64 t, double* dd, i64* pp, i64* qq) const {
    double dst = rowmin[s];
    std::vector<i64> qs;
    for (i64 q : members[t])
      if (D[s * n + q] == dst) qs.push_back(q);
    for (i64 p : members[s])
      for (i64 q : qs)
        if (dist(q, p) == dst) {
          *dd = dst;
          *pp = p;
          *qq = q;
          return;
        }
    *dd = dst;  // unreachable: D's entries are distances between members
    *pp = members[s][0];
    *qq = qs.empty() ? members[t][0] : qs[0];
  }

  // The two nearest of `others` (sorted) to point p, ties to the first; p itself skipped.
  void two_nearest(i64 p, const std::vector<i64>& others, i64* idx, double* dst) const {
    double d1 = kInf, d2 = kInf;
    i64 j1 = -1, j2 = -1;
    for (i64 q : others) {
      if (q == p) continue;
      double v = dist(p, q);
      if (v < d1) {
        d2 = d1;
        j2 = j1;
        d1 = v;
        j1 = q;
      } else if (v < d2) {
        d2 = v;
        j2 = q;
      }
    }
    idx[0] = j1;
    idx[1] = j2;
    dst[0] = d1;
    dst[1] = d2;
  }

  Union make_union(i64 s, i64 t) const {
    const std::vector<i64>& a = members[s];
    const std::vector<i64>& b = members[t];
    Union u;
    u.rows.resize(a.size() + b.size());
    std::merge(a.begin(), a.end(), b.begin(), b.end(), u.rows.begin());
    size_t m = u.rows.size();
    u.idx.resize(2 * m);
    u.dist.resize(2 * m);
    if (m <= 48) {  // the NumPy driver's small unions: all pairs
      for (size_t i = 0; i < m; ++i) two_nearest(u.rows[i], u.rows, &u.idx[2 * i], &u.dist[2 * i]);
      return u;
    }
    // a point's two neighbours change only if the other cluster comes within its second
    // neighbour's distance, which the other cluster's row of D tells without a search
    for (size_t i = 0; i < m; ++i) {
      i64 p = u.rows[i];
      bool in_a = owner[p] == s;
      i64 other = in_a ? t : s;
      i64 ci[2];
      double cd[2];
      ci[0] = nn_idx[2 * p];
      ci[1] = nn_idx[2 * p + 1];
      cd[0] = nn_dist[2 * p];
      cd[1] = nn_dist[2 * p + 1];
      if (D[other * n + p] <= cd[1]) {
        i64 xi[2];
        double xd[2];
        two_nearest(p, in_a ? b : a, xi, xd);
        bool a_first = before(cd[0], ci[0], xd[0], xi[0]);
        i64 fi = a_first ? ci[0] : xi[0];
        double fd = a_first ? cd[0] : xd[0];
        i64 c_i = a_first ? ci[1] : xi[1];
        double c_d = a_first ? cd[1] : xd[1];
        i64 o_i = a_first ? xi[0] : ci[0];
        double o_d = a_first ? xd[0] : cd[0];
        bool c_first = before(c_d, c_i, o_d, o_i);
        ci[0] = fi;
        cd[0] = fd;
        ci[1] = c_first ? c_i : o_i;
        cd[1] = c_first ? c_d : o_d;
      }
      u.idx[2 * i] = ci[0];
      u.idx[2 * i + 1] = ci[1];
      u.dist[2 * i] = cd[0];
      u.dist[2 * i + 1] = cd[1];
    }
    return u;
  }

  // Increments of the sorted points `rows` from their two nearest neighbours (row-aligned).
  std::vector<double> triplet_increments(const std::vector<i64>& rows, const i64* idx,
                                         const double* dst) {
    size_t m = rows.size();
    for (size_t i = 0; i < m; ++i) pos[rows[i]] = static_cast<i64>(i);
    std::vector<double> w(m);
    for (size_t i = 0; i < m; ++i) {
      i64 j = pos[idx[2 * i]];
      double d_jk = idx[2 * j] == rows[i] ? dst[2 * j + 1] : dst[2 * j];
      w[i] = std::fabs(dst[2 * i] - d_jk);
    }
    return w;
  }

  std::vector<double> cluster_increments(i64 s) {
    const std::vector<i64>& rows = members[s];
    if (rows.size() < 3) return {};
    std::vector<i64> idx(2 * rows.size());
    std::vector<double> dst(2 * rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      idx[2 * i] = nn_idx[2 * rows[i]];
      idx[2 * i + 1] = nn_idx[2 * rows[i] + 1];
      dst[2 * i] = nn_dist[2 * rows[i]];
      dst[2 * i + 1] = nn_dist[2 * rows[i] + 1];
    }
    return triplet_increments(rows, idx.data(), dst.data());
  }
};

struct DIDTests {
  Agglomeration& agg;
  double floor, tail_factor, tail_prob;

  bool in_tail(double x, double lam) const {
    if (!(tail_prob > 0.0)) return x > tail_factor * lam;
    double cdf = 0.0 - std::expm1(did2_logsf(x, lam));
    return 1.0 - cdf < tail_prob;
  }

  // A cluster's mean increment (floored) and, on demand, its description length.
  double lam_of(i64 s) {
    if (!agg.has_lam[s]) {
      std::vector<double> w = agg.cluster_increments(s);
      agg.lam[s] = w.empty() ? floor : std::max(mean(w), floor);
      agg.has_lam[s] = 1;
    }
    return agg.lam[s];
  }
  double dl_of(i64 s) {
    if (!agg.has_dl[s]) {
      double l = lam_of(s);
      std::vector<double> w = agg.cluster_increments(s);
      agg.dl[s] = w.empty() ? 0.0 : description_length(w, l);
      agg.has_dl[s] = 1;
    }
    return agg.dl[s];
  }
};

void run_sl_did(Agglomeration& agg, double floor, double tail_factor, double tail_prob,
                i64 min_size) {
  DIDTests T{agg, floor, tail_factor, tail_prob};
  i64 s, t;
  while (agg.next_pair(&s, &t)) {
    ++agg.n_tests;
    i64 ns = agg.members[s].size(), nt = agg.members[t].size();
    if (ns < min_size && nt < min_size) {
      Union u = agg.make_union(s, t);
      agg.merge(s, t, u);
      continue;
    }
    if (ns < min_size || nt < min_size) {
      i64 big = nt < min_size ? s : t;
      i64 small = nt < min_size ? t : s;
      std::vector<double> w_small = agg.cluster_increments(small);
      Union u;
      bool have_union = false;
      if (w_small.empty()) {  // judged by its points' increments inside the union
        u = agg.make_union(s, t);
        have_union = true;
        std::vector<double> w_union =
            agg.triplet_increments(u.rows, u.idx.data(), u.dist.data());
        for (size_t i = 0; i < u.rows.size(); ++i)
          if (agg.owner[u.rows[i]] == small) w_small.push_back(w_union[i]);
      }
      if (T.in_tail(mean(w_small), T.lam_of(big))) {
        agg.reject(s, t);
      } else {
        if (!have_union) u = agg.make_union(s, t);
        agg.merge(s, t, u);
      }
      continue;
    }
    double dd;
    i64 p, q;
    agg.closest_pair(s, t, &dd, &p, &q);
    double lam_s = T.lam_of(s), lam_t = T.lam_of(t);
    if (T.in_tail(std::fabs(dd - agg.nn_dist[2 * p]), lam_s)) {
      agg.freeze(s);
    } else if (T.in_tail(std::fabs(dd - agg.nn_dist[2 * q]), lam_t)) {
      agg.freeze(t);
    } else {
      Union u = agg.make_union(s, t);
      std::vector<double> w_union =
          agg.triplet_increments(u.rows, u.idx.data(), u.dist.data());
      double lam_u = std::max(mean(w_union), floor);
      if (description_length(w_union, lam_u) <= T.dl_of(s) + T.dl_of(t))
        agg.merge(s, t, u);
      else
        agg.reject(s, t);
    }
  }
}

void run_sl_aglo(Agglomeration& agg, double floor, double tau, i64 min_size) {
  DIDTests T{agg, floor, 0.0, 0.0};
  i64 s, t;
  while (agg.next_pair(&s, &t)) {
    ++agg.n_tests;
    bool big_s = static_cast<i64>(agg.members[s].size()) >= min_size;
    bool big_t = static_cast<i64>(agg.members[t].size()) >= min_size;
    if (!big_s && !big_t) {
      Union u = agg.make_union(s, t);
      agg.merge(s, t, u);
      continue;
    }
    double mu_s = big_s ? T.lam_of(s) : 0.0;
    double mu_t = big_t ? T.lam_of(t) : 0.0;
    double dd;
    i64 p, q;
    agg.closest_pair(s, t, &dd, &p, &q);
    if (big_s && std::fabs(dd - agg.nn_dist[2 * p]) >= tau * mu_s) {
      agg.freeze(s);
    } else if (big_t && std::fabs(dd - agg.nn_dist[2 * q]) >= tau * mu_t) {
      agg.freeze(t);
    } else {
      Union u = agg.make_union(s, t);
      agg.merge(s, t, u);
    }
  }
}

}  // namespace

extern "C" {

// method 0: SL-DID (param = tail_factor, param2 = tail_prob or <= 0 for none);
// method 1: SL-AGLO (param = tau).  X: (n, d) float64, C order, n >= 2.
// Outputs: owner (n,) the smallest point of each point's cluster, frozen (n,) 1 for the
// smallest point of an isolated cluster, merges (n - 1, 3) of which the first *n_merges rows
// are filled, *n_tests.  Returns 0, or 1 if memory ran out.
int bayesclust_did_agglomerate(const double* X, int64_t n, int64_t d, int32_t method,
                               double floor, double param, double param2, int64_t min_size,
                               int64_t* owner, uint8_t* frozen, double* merges,
                               int64_t* n_merges, int64_t* n_tests) {
  try {
    Agglomeration agg(X, n, d, merges);
    if (method == 0)
      run_sl_did(agg, floor, param, param2, min_size);
    else
      run_sl_aglo(agg, floor, param, min_size);
    for (i64 i = 0; i < n; ++i) {
      owner[i] = agg.owner[i];
      frozen[i] = static_cast<uint8_t>(agg.frozen[i]);
    }
    *n_merges = agg.n_merges;
    *n_tests = agg.n_tests;
  } catch (const std::bad_alloc&) {
    return 1;  // no exception crosses the C boundary
  }
  return 0;
}

}  // extern "C"
