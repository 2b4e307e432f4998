// The point and table moves of one sweep of the HDP mixture's Chinese-restaurant-
// franchise sampler, every chain, as an XLA:CPU FFI custom call.
//
// The same Markov kernel as bayesclust.inference.mixtures.hdp_gibbs._scan_points and
// _scan_tables (the XLA path, the reference these moves are tested against), given the
// same uniforms and normals:
//
// points, in row order: a point x of data set j leaves its table; it then sits at
//   table t of j (serving dish p_t)       log w = log n_jt + log N(x | mu_{p_t}, s2 I)
//   a new table on existing dish p        log w = log alpha + log m_p - log(m + gamma)
//                                                 + log N(x | mu_p, s2 I)
//   a new table on a new dish             log w = log alpha + log gamma - log(m + gamma)
//                                                 + log N(x | 0, (rho2 + s2) I)
// drawn by inverse CDF from u in (0, 1] (tables, then dishes, then the new dish, each in
// slot order); a new table takes its data set's first free slot, a new dish the first
// free dish slot, its mean shrink x + sqrt(s2 shrink) z (shrink = rho2 / (rho2 + s2));
// tables, in slot order (data sets in order): an occupied table (n points, sum S,
// scatter SSE) leaves its dish and takes
//   dish p      log w = log m_p - (SSE + n |xbar - mu_p|^2) / (2 s2)
//   a new dish  log w = log gamma + d/2 log(s2 / (s2 + n rho2)) - SSE / (2 s2)
//                       - n |xbar|^2 / (2 (s2 + n rho2)),
// a new dish's mean drawn from its posterior given the table's points
// (Teh et al. 2006, §5.1; Neal 2000, Algorithm 2, at both levels).  A new slot wanted
// when its buffer is full sets the chain's overflow flag (the caller grows the buffers
// and redoes the segment, as on the XLA path).
//
// Why native: on XLA:CPU every step of the two scans is a few dozen small operations
// over the chains' buffers, and the scans made most of the sampler's compilation
// (BENCHMARKS.md).  Here a chain's step touches the slots in use only: the dishes'
// densities are computed once per point and shared by the tables serving them.  Chains
// are independent and shared out to XLA's intra-op thread pool, one chain per task
// (scalar code: with a handful of tables per data set, a step's work is a few dozen
// dishes, not enough to fill a vector register per chain).
//
// Arithmetic is in double whatever T is; the state comes back in T.  The draws are those
// of the XLA path except where the two roundings fall on either side of a CDF boundary.
//
// The call is written for one chain; under vmap (vmap_method="expand_dims") every
// argument gets a leading chain axis, of size C or 1 (shared by the chains), and the
// chains are shared out to XLA's intra-op thread pool.
//
// Rows n_valid..n-1 pad the data to a shape bucket (data set and table -1): they are
// never moved, counted or read, and come back as given.  The stream's counters are laid
// out by n_valid, not n, so a padded call makes an unpadded call's draws.

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

constexpr double kTwoPi = 6.283185307179586;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

template <typename T>
struct Crf {
  int64_t C, n, d, D, L, P;
  // Per-chain strides of the inputs, in argument order (0: shared by every chain).
  int64_t st[17];
  bool own;  // the chains draw their own numbers (u and z not given)
  const uint32_t* seeds;
  const T* X;
  const int32_t* gid;
  const T* rho2;
  const int32_t* tables_in;
  const T* counts_in;
  const int32_t* dish_in;
  const T* dish_tables_in;
  const T* means_in;
  const T* log_alpha;
  const T* log_gamma;
  const T* sigma2;
  const T* u_pt;
  const T* z_pt;
  const T* u_tb;
  const T* z_tb;
  const int32_t* n_valid;
  int32_t* tables_out;
  T* counts_out;
  int32_t* dish_out;
  T* dish_tables_out;
  T* means_out;
  int32_t* overflow_out;
  int32_t* accepted_out;
  int64_t split_merge;  // split-merge moves after the table moves (own stream only)
};

// ---- Random numbers: simd.h's SplitMix64 on a counter ------------------------
// Counter-based, so a number is computed where it is used (a new dish's normals only
// when one opens) and never depends on threading.

using bayesclust::SplitMix64;

// A uniform on (0, 1]: the top 53 bits plus one ulp.
inline double UnitOpen(uint64_t bits) { return bayesclust::Unit<double>(bits); }

// A chain's numbers for one sweep: u of point i at counter i, of table k at n + k; the
// normals of point i (table k) at kZ + 2 (i d + e) (kZ + 2 (n d + k d + e)), Box-Muller
// on two outputs (k = g n + slot for slot `slot` of data set g), with n the real rows
// (n_valid).
struct Stream {
  uint64_t seed;
  int64_t n, d;
  static constexpr uint64_t kZ = uint64_t(1) << 40;
  double U(int64_t j) const { return UnitOpen(SplitMix64(seed, uint64_t(j))); }
  double Z(int64_t j) const {
    const double u1 = UnitOpen(SplitMix64(seed, kZ + 2 * uint64_t(j)));
    const double u2 = UnitOpen(SplitMix64(seed, kZ + 2 * uint64_t(j) + 1));
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
  }
};

// The entry drawn by inverse CDF from u in (0, 1] among `k` candidates with log weights
// lw[0..k-1] (kernels.categorical_inverse_cdf over the whole row, whose other entries
// have weight 0 and so never change the draw): the first whose cumulative weight
// reaches u times the total, the last one against rounding.
inline int64_t InverseCdf(const double* lw, double* w, int64_t k, double u) {
  double top = kNegInf;
  for (int64_t e = 0; e < k; ++e) top = std::max(top, lw[e]);
  double total = 0.0;
  for (int64_t e = 0; e < k; ++e) {
    w[e] = std::exp(lw[e] - top);
    total += w[e];
  }
  const double target = u * total;
  double cdf = 0.0;
  for (int64_t e = 0; e < k; ++e) {
    cdf += w[e];
    if (cdf >= target) return e;
  }
  return k - 1;
}

// The dish slots in use, in slot order (the order of the XLA path's cumulative sums).
struct Active {
  std::vector<int32_t> slots;
  void Open(int32_t p) { slots.insert(std::lower_bound(slots.begin(), slots.end(), p), p); }
  void Close(int32_t p) {
    auto it = std::lower_bound(slots.begin(), slots.end(), p);
    if (it != slots.end() && *it == p) slots.erase(it);
  }
  // The first slot not in use (0 when all `P` are: the caller's overflow check sees it).
  int32_t FirstFree(int64_t P) const {
    int32_t p = 0;
    for (int32_t q : slots) {
      if (q != p) break;
      ++p;
    }
    return p < P ? p : 0;
  }
};

template <typename T>
void RunChain(const Crf<T>& s, const std::vector<double>& log_int, int64_t c) {
  const int64_t n_rows = s.n, d = s.d, D = s.D, L = s.L, P = s.P;
  // The real rows: the loops below never reach the padded ones (the caller checked
  // 0 <= n_valid <= n_rows).
  const int64_t n = s.n_valid[c * s.st[16]];
  const T* X = s.X + c * s.st[0];
  const int32_t* gid = s.gid + c * s.st[1];
  const double rho2 = s.rho2[c * s.st[2]];
  const double s2 = s.sigma2[c * s.st[10]];
  const double log_alpha = s.log_alpha[c * s.st[8]];
  const double log_gamma = s.log_gamma[c * s.st[9]];
  // State: counts as exact integers, means in double.
  const int32_t* t_in = s.tables_in + c * s.st[3];
  const T* c_in = s.counts_in + c * s.st[4];
  const int32_t* d_in = s.dish_in + c * s.st[5];
  const T* m_in = s.dish_tables_in + c * s.st[6];
  const T* mu_in = s.means_in + c * s.st[7];
  std::vector<int32_t> tables(t_in, t_in + n_rows);
  std::vector<int64_t> counts(D * L), m(P);
  for (int64_t k = 0; k < D * L; ++k) counts[k] = static_cast<int64_t>(c_in[k]);
  for (int64_t p = 0; p < P; ++p) m[p] = static_cast<int64_t>(m_in[p]);
  std::vector<int32_t> dish(d_in, d_in + D * L);
  std::vector<double> mu(mu_in, mu_in + P * d);
  Active active;
  int64_t m_total = 0;
  for (int64_t p = 0; p < P; ++p) {
    if (m[p] > 0) active.slots.push_back(int32_t(p));
    m_total += m[p];
  }
  bool overflow = false;
  const int64_t K = L + P + 1;
  std::vector<double> lw(K), w(K), log_f(P);
  std::vector<int32_t> entry(K);
  const double half_inv_s2 = 0.5 / s2;
  const double log_norm_s2 = -0.5 * d * std::log(kTwoPi * s2);
  const double var_new = rho2 + s2;
  const double log_norm_new = -0.5 * d * std::log(kTwoPi * var_new);
  const double shrink = rho2 / (rho2 + s2);
  const double new_sd = std::sqrt(s2 * shrink);
  auto log_of = [&log_int](int64_t k) { return log_int[k]; };

  // ---- points ----
  const T* u_pt = s.u_pt + c * s.st[11];
  const T* z_pt = s.z_pt + c * s.st[12];
  const T* u_tb = s.u_tb + c * s.st[13];
  const T* z_tb = s.z_tb + c * s.st[14];
  const uint32_t* seed = s.seeds + c * s.st[15];
  const Stream rng{(uint64_t(seed[0]) << 32) | seed[1], n, d};
  const int64_t T_slots = D * L;
  auto u_point = [&](int64_t i) { return s.own ? rng.U(i) : double(u_pt[i]); };
  auto z_point = [&](int64_t i, int64_t e) { return s.own ? rng.Z(i * d + e) : double(z_pt[i * d + e]); };
  // A table's numbers are indexed by (data set, slot < n), not by its flat slot g L + t,
  // so that they do not depend on the table buffer's size L.
  auto table_index = [&](int64_t t) { return (t / L) * n + t % L; };
  auto u_table = [&](int64_t t) { return s.own ? rng.U(n + table_index(t)) : double(u_tb[t]); };
  auto z_table = [&](int64_t t, int64_t e) {
    return s.own ? rng.Z(n * d + table_index(t) * d + e) : double(z_tb[t * d + e]);
  };
  for (int64_t i = 0; i < n; ++i) {
    const T* x = X + i * d;
    const int64_t j = gid[i];
    int64_t* cnt = counts.data() + j * L;
    int32_t* tdish = dish.data() + j * L;
    const int32_t old = tables[i];
    if (--cnt[old] == 0) {
      if (--m[tdish[old]] == 0) active.Close(tdish[old]);
      --m_total;
    }
    for (int32_t p : active.slots) {
      double sq = 0.0;
      for (int64_t e = 0; e < d; ++e) {
        const double diff = double(x[e]) - mu[p * d + e];
        sq += diff * diff;
      }
      log_f[p] = log_norm_s2 - sq * half_inv_s2;
    }
    int64_t k = 0;
    for (int64_t t = 0; t < L; ++t)
      if (cnt[t] > 0) {
        lw[k] = log_of(cnt[t]) + log_f[tdish[t]];
        entry[k++] = int32_t(t);
      }
    double sqx = 0.0;
    for (int64_t e = 0; e < d; ++e) sqx += double(x[e]) * double(x[e]);
    // log(alpha / (m + gamma)): logaddexp(log m, log gamma) as the XLA path.
    const double log_m = m_total > 0 ? log_of(m_total) : kNegInf;
    const double hi = std::max(log_m, log_gamma);
    const double base = log_alpha - (hi + std::log1p(std::exp(-std::abs(log_m - log_gamma))));
    for (int32_t p : active.slots) {
      lw[k] = base + log_of(m[p]) + log_f[p];
      entry[k++] = int32_t(L + p);
    }
    lw[k] = base + log_gamma + log_norm_new - sqx / (2.0 * var_new);
    entry[k++] = int32_t(L + P);
    const int64_t choice = entry[InverseCdf(lw.data(), w.data(), k, u_point(i))];
    const bool new_table = choice >= L;
    const bool new_dish = choice == L + P;
    int64_t free_t = 0;
    for (int64_t t = 0; t < L; ++t)
      if (cnt[t] == 0) {
        free_t = t;
        break;
      }
    const int32_t free_p = active.FirstFree(P);
    if ((new_table && cnt[free_t] > 0) || (new_dish && m[free_p] > 0)) {
      // No free slot: the point goes back to its table and the sweep stops, leaving a
      // consistent state (the caller grows the buffers and redoes the segment).
      if (cnt[old]++ == 0) {
        if (m[tdish[old]]++ == 0) active.Open(tdish[old]);
        ++m_total;
      }
      overflow = true;
      break;
    }
    const int64_t p_new = new_dish ? free_p : choice - L;
    const int64_t table = new_table ? free_t : choice;
    ++cnt[table];
    if (new_table) {
      tdish[table] = int32_t(p_new);
      if (m[p_new]++ == 0) active.Open(int32_t(p_new));
      ++m_total;
    }
    if (new_dish)
      for (int64_t e = 0; e < d; ++e)
        mu[p_new * d + e] = shrink * double(x[e]) + new_sd * z_point(i, e);
    tables[i] = int32_t(table);
  }

  // ---- tables ---- (not after an overflow: the segment is redone)
  std::vector<double> tsum(T_slots * d, 0.0), tsse(T_slots, 0.0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t slot = int64_t(gid[i]) * L + tables[i];
    for (int64_t e = 0; e < d; ++e) tsum[slot * d + e] += double(X[i * d + e]);
  }
  for (int64_t i = 0; i < n; ++i) {
    const int64_t slot = int64_t(gid[i]) * L + tables[i];
    const double nt = double(std::max<int64_t>(counts[slot], 1));
    double sq = 0.0;
    for (int64_t e = 0; e < d; ++e) {
      const double diff = double(X[i * d + e]) - tsum[slot * d + e] / nt;
      sq += diff * diff;
    }
    tsse[slot] += sq;
  }
  std::vector<double> xbar(d);
  for (int64_t t = 0; t < T_slots && !overflow; ++t) {
    if (counts[t] == 0) continue;  // a free slot keeps its dish; its numbers go unused
    const double nt = double(counts[t]);
    const int32_t old = dish[t];
    if (--m[old] == 0) active.Close(old);
    const double* S = tsum.data() + t * d;
    const double sse = tsse[t];
    double sqbar = 0.0;
    for (int64_t e = 0; e < d; ++e) {
      xbar[e] = S[e] / nt;
      sqbar += xbar[e] * xbar[e];
    }
    int64_t k = 0;
    for (int32_t p : active.slots) {
      double sq = 0.0;
      for (int64_t e = 0; e < d; ++e) {
        const double diff = xbar[e] - mu[p * d + e];
        sq += diff * diff;
      }
      lw[k] = log_of(m[p]) - (sse + nt * sq) * half_inv_s2;
      entry[k++] = p;
    }
    const double v = s2 + nt * rho2;
    lw[k] = log_gamma + 0.5 * d * std::log(s2 / v) - sse * half_inv_s2 - nt * sqbar / (2.0 * v);
    entry[k++] = int32_t(P);
    const int64_t choice = entry[InverseCdf(lw.data(), w.data(), k, u_table(t))];
    const int32_t free_p = active.FirstFree(P);
    const bool opened = choice == P;
    const int64_t p_new = opened ? free_p : choice;
    if (opened && m[free_p] > 0) {  // no free dish slot: back to its dish, and stop
      if (m[old]++ == 0) active.Open(old);
      overflow = true;
      break;
    }
    if (opened) {
      const double post_sd = std::sqrt(s2 * rho2 / v);
      for (int64_t e = 0; e < d; ++e)
        mu[p_new * d + e] = rho2 * S[e] / v + post_sd * z_table(t, e);
    }
    dish[t] = int32_t(p_new);
    if (m[p_new]++ == 0) active.Open(int32_t(p_new));
  }

  // ---- split-merge moves (hdp_gibbs.split_merge_move) ----
  // A move's numbers: counter kSM + move * 2^32 + k (the pair, the acceptance, the
  // visiting order, the allocations).
  int64_t accepted = 0;
  if (s.split_merge > 0 && !overflow && n > 0) {
    std::vector<int64_t> group_start(D + 1, 0);
    std::vector<int32_t> rows(n);
    for (int64_t i = 0; i < n; ++i) ++group_start[gid[i] + 1];
    for (int64_t g = 0; g < D; ++g) group_start[g + 1] += group_start[g];
    {
      std::vector<int64_t> fill(group_start.begin(), group_start.end() - 1);
      for (int64_t i = 0; i < n; ++i) rows[fill[gid[i]]++] = int32_t(i);
    }
    std::vector<int32_t> members;
    std::vector<char> to_b(n);
    const double log_norm_pred = -0.5 * d;
    // log N(x | posterior predictive of a dish mean given `cnt` points of sum `tot`).
    auto log_pred = [&](const T* x, double cnt, const double* tot) {
      const double v = 1.0 / (1.0 / rho2 + cnt / s2);
      const double var = s2 + v;
      double sq = 0.0;
      for (int64_t e = 0; e < d; ++e) {
        const double diff = double(x[e]) - v * tot[e] / s2;
        sq += diff * diff;
      }
      return log_norm_pred * std::log(kTwoPi * var) - sq / (2.0 * var);
    };
    // log of the marginal likelihood of `cnt` points of sum `tot`, up to the terms that
    // add over the points (hdp_gibbs._log_marginal).
    auto log_marginal = [&](double cnt, const double* tot) {
      const double v = s2 + cnt * rho2;
      double sq = 0.0;
      for (int64_t e = 0; e < d; ++e) sq += tot[e] * tot[e];
      return 0.5 * d * std::log(s2 / v) + rho2 * sq / (2.0 * s2 * v);
    };
    auto log_sigmoid = [](double v) { return v >= 0 ? -std::log1p(std::exp(-v)) : v - std::log1p(std::exp(v)); };
    std::vector<double> sa(d), sb(d), r_s(d), tot(d);
    constexpr uint64_t kSM = uint64_t(1) << 41;
    for (int64_t mv = 0; mv < s.split_merge && !overflow; ++mv) {
      const uint64_t base = kSM + (uint64_t(mv) << 32);
      const uint64_t b0 = SplitMix64(rng.seed, base), b1 = SplitMix64(rng.seed, base + 1);
      const double u_acc = UnitOpen(SplitMix64(rng.seed, base + 2));
      const int32_t i = int32_t(b0 % uint64_t(n));  // n >= 1: split_merge needs rows
      const int64_t g = gid[i];
      const int64_t g0 = group_start[g], n_g = group_start[g + 1] - g0;
      if (n_g < 2) continue;
      // j uniform among the other points of i's data set.
      int64_t rank_i = 0;
      while (rows[g0 + rank_i] != i) ++rank_i;
      int64_t r = int64_t(b1 % uint64_t(n_g - 1));
      r += r >= rank_i;
      const int32_t j = rows[g0 + r];
      const int32_t ti = tables[i], tj = tables[j];
      const bool split = ti == tj;
      const int32_t pi = dish[g * L + ti], pj = dish[g * L + tj];
      if (!split && !(pi != pj && m[pj] == 1)) continue;  // no move possible
      // R: the points of i's dish at its other tables.
      double r_n = 0.0;
      std::fill(r_s.begin(), r_s.end(), 0.0);
      for (int64_t q = 0; q < n; ++q) {
        if (dish[int64_t(gid[q]) * L + tables[q]] != pi || (gid[q] == g && tables[q] == ti)) continue;
        r_n += 1.0;
        for (int64_t e = 0; e < d; ++e) r_s[e] += double(X[q * d + e]);
      }
      // The other members of the two tables, in a uniformly random order (Fisher-Yates).
      members.clear();
      for (int64_t k = 0; k < n_g; ++k) {
        const int32_t q = rows[g0 + k];
        if (q != i && q != j && (tables[q] == ti || tables[q] == tj)) members.push_back(q);
      }
      for (int64_t k = int64_t(members.size()) - 1; k > 0; --k) {
        const int64_t pick = int64_t(SplitMix64(rng.seed, base + 3 + k) % uint64_t(k + 1));
        std::swap(members[k], members[pick]);
      }
      double n_a = 1.0, n_b = 1.0, log_q = 0.0;
      for (int64_t e = 0; e < d; ++e) {
        sa[e] = double(X[i * d + e]);
        sb[e] = double(X[j * d + e]);
      }
      for (int64_t k = 0; k < int64_t(members.size()); ++k) {
        const int32_t q = members[k];
        const T* x = X + q * d;
        for (int64_t e = 0; e < d; ++e) tot[e] = r_s[e] + sa[e];
        const double w_a = std::log(n_a) + log_pred(x, r_n + n_a, tot.data());
        const double w_b = std::log(n_b) + log_pred(x, n_b, sb.data());
        const double diff = w_b - w_a;
        bool go_b;
        if (split) {
          const double u = UnitOpen(SplitMix64(rng.seed, base + 3 + n + k));
          const bool less = u < 1.0 / (1.0 + std::exp(std::abs(diff)));
          go_b = (diff >= 0) != less;
        } else {
          go_b = tables[q] == tj;
        }
        log_q += go_b ? log_sigmoid(diff) : log_sigmoid(-diff);
        to_b[q] = go_b;
        if (go_b) {
          n_b += 1.0;
          for (int64_t e = 0; e < d; ++e) sb[e] += double(x[e]);
        } else {
          n_a += 1.0;
          for (int64_t e = 0; e < d; ++e) sa[e] += double(x[e]);
        }
      }
      const double m_merge = double(m_total) - (split ? 0.0 : 1.0);
      const double lm = std::log(m_merge), hi = std::max(lm, log_gamma);
      std::vector<double> ab(d), rab(d), ra(d);
      for (int64_t e = 0; e < d; ++e) {
        ra[e] = r_s[e] + sa[e];
        rab[e] = ra[e] + sb[e];
      }
      const double log_ratio = log_alpha + std::lgamma(n_a) + std::lgamma(n_b) -
                               std::lgamma(n_a + n_b) + log_gamma -
                               (hi + std::log1p(std::exp(-std::abs(lm - log_gamma)))) +
                               log_marginal(r_n + n_a, ra.data()) + log_marginal(n_b, sb.data()) -
                               log_marginal(r_n + n_a + n_b, rab.data());
      const double log_acc = split ? log_ratio - log_q : log_q - log_ratio;
      if (!(std::log(u_acc) < log_acc)) continue;
      int64_t* cnt = counts.data() + g * L;
      if (split) {
        int64_t free_t = -1;
        for (int64_t t = 0; t < L; ++t)
          if (cnt[t] == 0) {
            free_t = t;
            break;
          }
        const int32_t free_p = active.FirstFree(P);
        if (free_t < 0 || m[free_p] > 0) {  // no free slot: nothing moves
          overflow = true;
          break;
        }
        to_b[j] = 1;
        for (int64_t k = 0; k < n_g; ++k) {
          const int32_t q = rows[g0 + k];
          if ((q == j || (q != i && tables[q] == ti)) && to_b[q]) {
            tables[q] = int32_t(free_t);
            --cnt[ti];
            ++cnt[free_t];
          }
        }
        dish[g * L + free_t] = free_p;
        m[free_p] = 1;
        active.Open(free_p);
        ++m_total;
      } else {
        for (int64_t k = 0; k < n_g; ++k) {
          const int32_t q = rows[g0 + k];
          if (tables[q] == tj) {
            tables[q] = ti;
            --cnt[tj];
            ++cnt[ti];
          }
        }
        m[pj] = 0;
        active.Close(pj);
        --m_total;
      }
      ++accepted;
    }
  }

  std::copy(tables.begin(), tables.end(), s.tables_out + c * n_rows);
  for (int64_t k = 0; k < D * L; ++k) s.counts_out[c * D * L + k] = T(counts[k]);
  std::copy(dish.begin(), dish.end(), s.dish_out + c * D * L);
  for (int64_t p = 0; p < P; ++p) s.dish_tables_out[c * P + p] = T(m[p]);
  for (int64_t k = 0; k < P * d; ++k) s.means_out[c * P * d + k] = T(mu[k]);
  s.overflow_out[c] = overflow ? 1 : 0;
  s.accepted_out[c] = int32_t(accepted);
}

// The per-chain stride of an argument whose shape without a chain axis has `rank`
// dimensions and `size` elements: 0 when it has no chain axis or a chain axis of 1
// (shared by every chain), `size` when its chain axis is C; -1 when its shape is neither.
int64_t ChainStride(const ffi::AnyBuffer& a, size_t rank, int64_t size, int64_t C) {
  auto dims = a.dimensions();
  if (dims.size() == rank && static_cast<int64_t>(a.element_count()) == size) return 0;
  if (dims.size() != rank + 1) return -1;
  if (dims[0] == 1 && static_cast<int64_t>(a.element_count()) == size) return 0;
  if (dims[0] == C && static_cast<int64_t>(a.element_count()) == C * size) return size;
  return -1;
}

template <typename T>
ffi::Error CrfImpl(ffi::ThreadPool pool, ffi::AnyBuffer X, ffi::AnyBuffer gid, ffi::AnyBuffer rho2,
                   ffi::AnyBuffer tables, ffi::AnyBuffer counts, ffi::AnyBuffer table_dish,
                   ffi::AnyBuffer dish_tables, ffi::AnyBuffer means, ffi::AnyBuffer log_alpha,
                   ffi::AnyBuffer log_gamma, ffi::AnyBuffer sigma2, ffi::AnyBuffer u_pt,
                   ffi::AnyBuffer z_pt, ffi::AnyBuffer u_tb, ffi::AnyBuffer z_tb,
                   ffi::AnyBuffer seeds, ffi::AnyBuffer n_valid,
                   ffi::Result<ffi::Buffer<ffi::S32>> tables_out,
                   ffi::Result<ffi::AnyBuffer> counts_out,
                   ffi::Result<ffi::Buffer<ffi::S32>> dish_out,
                   ffi::Result<ffi::AnyBuffer> dish_tables_out,
                   ffi::Result<ffi::AnyBuffer> means_out,
                   ffi::Result<ffi::Buffer<ffi::S32>> overflow_out,
                   ffi::Result<ffi::Buffer<ffi::S32>> accepted_out, int64_t split_merge) {
  // Shapes from the outputs: tables (C?, n), counts (C?, D, L), means (C?, P, d).
  auto od = tables_out->dimensions();
  auto cd = counts_out->dimensions();
  auto md = means_out->dimensions();
  const bool chained = od.size() == 2;
  const size_t off = chained ? 1 : 0;
  if (od.size() != 1 + off || cd.size() != 2 + off || md.size() != 2 + off)
    return ffi::Error::InvalidArgument("hdp_crf_moves: unexpected output ranks");
  Crf<T> s;
  s.C = chained ? od[0] : 1;
  s.n = od[off];
  s.D = cd[off];
  s.L = cd[off + 1];
  s.P = md[off];
  s.d = md[off + 1];
  const int64_t n = s.n, d = s.d, DL = s.D * s.L, P = s.P;
  const ffi::AnyBuffer* args[17] = {&X, &gid, &rho2, &tables, &counts, &table_dish,
                                    &dish_tables, &means, &log_alpha, &log_gamma, &sigma2,
                                    &u_pt, &z_pt, &u_tb, &z_tb, &seeds, &n_valid};
  const size_t ranks[17] = {2, 1, 0, 1, 2, 2, 1, 2, 0, 0, 0, 1, 2, 1, 2, 1, 0};
  const int64_t sizes[17] = {n * d, n, 1, n, DL, DL, P, P * d, 1, 1, 1, n, n * d, DL, DL * d, 2, 1};
  // u and z empty: the chains draw their own numbers from their seeds.
  s.own = u_pt.element_count() == 0;
  if (s.own != (z_pt.element_count() == 0) || s.own != (u_tb.element_count() == 0) ||
      s.own != (z_tb.element_count() == 0))
    return ffi::Error::InvalidArgument("hdp_crf_moves: give all of u and z, or none");
  for (int k = 0; k < 17; ++k) {
    if (s.own && k >= 11 && k < 15) {
      s.st[k] = 0;
      continue;
    }
    s.st[k] = ChainStride(*args[k], ranks[k], sizes[k], s.C);
    if (s.st[k] < 0)
      return ffi::Error::InvalidArgument("hdp_crf_moves: an argument's shape does not match "
                                         "the state's (n, D, L, P, d) and chains");
  }
  s.X = static_cast<const T*>(X.untyped_data());
  s.gid = static_cast<const int32_t*>(gid.untyped_data());
  s.rho2 = static_cast<const T*>(rho2.untyped_data());
  s.tables_in = static_cast<const int32_t*>(tables.untyped_data());
  s.counts_in = static_cast<const T*>(counts.untyped_data());
  s.dish_in = static_cast<const int32_t*>(table_dish.untyped_data());
  s.dish_tables_in = static_cast<const T*>(dish_tables.untyped_data());
  s.means_in = static_cast<const T*>(means.untyped_data());
  s.log_alpha = static_cast<const T*>(log_alpha.untyped_data());
  s.log_gamma = static_cast<const T*>(log_gamma.untyped_data());
  s.sigma2 = static_cast<const T*>(sigma2.untyped_data());
  s.u_pt = static_cast<const T*>(u_pt.untyped_data());
  s.z_pt = static_cast<const T*>(z_pt.untyped_data());
  s.u_tb = static_cast<const T*>(u_tb.untyped_data());
  s.z_tb = static_cast<const T*>(z_tb.untyped_data());
  s.seeds = static_cast<const uint32_t*>(seeds.untyped_data());
  if (n_valid.element_type() != ffi::DataType::S32)
    return ffi::Error::InvalidArgument("hdp_crf_moves: n_valid must be int32");
  s.n_valid = static_cast<const int32_t*>(n_valid.untyped_data());
  s.tables_out = tables_out->typed_data();
  s.counts_out = static_cast<T*>(counts_out->untyped_data());
  s.dish_out = dish_out->typed_data();
  s.dish_tables_out = static_cast<T*>(dish_tables_out->untyped_data());
  s.means_out = static_cast<T*>(means_out->untyped_data());
  s.overflow_out = overflow_out->typed_data();
  s.accepted_out = accepted_out->typed_data();
  s.split_merge = split_merge;
  if (split_merge < 0 || (split_merge > 0 && !s.own))
    return ffi::Error::InvalidArgument(
        "hdp_crf_moves: split_merge must be >= 0, and its moves draw their own numbers");
  // Out-of-range slots would write outside the buffers: refuse them.
  for (int64_t c = 0; c < s.C; ++c) {
    const int64_t nv = s.n_valid[c * s.st[16]];
    if (nv < 0 || nv > n)
      return ffi::Error::InvalidArgument("hdp_crf_moves: n_valid out of [0, n]");
    for (int64_t i = 0; i < nv; ++i) {
      const int32_t g = s.gid[c * s.st[1] + i], t = s.tables_in[c * s.st[3] + i];
      if (g < 0 || g >= s.D || t < 0 || t >= s.L)
        return ffi::Error::InvalidArgument("hdp_crf_moves: a data set or table slot out of range");
    }
    for (int64_t k = 0; k < DL; ++k) {
      const int32_t p = s.dish_in[c * s.st[5] + k];
      const T cnt = s.counts_in[c * s.st[4] + k];
      if (p < 0 || p >= P || !(cnt >= 0 && cnt <= n))
        return ffi::Error::InvalidArgument("hdp_crf_moves: a dish slot or table count out of range");
    }
    for (int64_t p = 0; p < P; ++p) {
      const T mp = s.dish_tables_in[c * s.st[6] + p];
      if (!(mp >= 0 && mp <= DL))
        return ffi::Error::InvalidArgument("hdp_crf_moves: a dish's table count out of range");
    }
  }
  // log k for the counts a chain can reach: points at a table, tables at a dish.
  auto log_int = std::make_shared<std::vector<double>>(std::max(n, DL) + 1);
  (*log_int)[0] = kNegInf;
  for (size_t k = 1; k < log_int->size(); ++k) (*log_int)[k] = std::log(double(k));
  auto shared = std::make_shared<Crf<T>>(s);
  bayesclust::ParallelFor(pool, s.C, [shared, log_int](int64_t c) {
    RunChain<T>(*shared, *log_int, c);
  });
  return ffi::Error::Success();
}

}  // namespace

#define BAYESCLUST_BIND_HDP                                              \
  ffi::Ffi::Bind()                                                       \
      .Ctx<ffi::ThreadPool>()                                            \
      .Arg<ffi::AnyBuffer>()        /* X (1|C, n, d) */                  \
      .Arg<ffi::AnyBuffer>()        /* gid (1|C, n) int32 */             \
      .Arg<ffi::AnyBuffer>()        /* rho2 (1|C,) */                    \
      .Arg<ffi::AnyBuffer>()        /* tables (C, n) int32 */            \
      .Arg<ffi::AnyBuffer>()        /* table_counts (C, D, L) */         \
      .Arg<ffi::AnyBuffer>()        /* table_dish (C, D, L) int32 */     \
      .Arg<ffi::AnyBuffer>()        /* dish_tables (C, P) */             \
      .Arg<ffi::AnyBuffer>()        /* means (C, P, d) */                \
      .Arg<ffi::AnyBuffer>()        /* log_alpha (C,) */                 \
      .Arg<ffi::AnyBuffer>()        /* log_gamma (C,) */                 \
      .Arg<ffi::AnyBuffer>()        /* sigma2 (C,) */                    \
      .Arg<ffi::AnyBuffer>()        /* u points (C, n) */                \
      .Arg<ffi::AnyBuffer>()        /* z points (C, n, d) */             \
      .Arg<ffi::AnyBuffer>()        /* u tables (C, D * L) */            \
      .Arg<ffi::AnyBuffer>()        /* z tables (C, D * L, d) */         \
      .Arg<ffi::AnyBuffer>()        /* seeds (C, 2) uint32 */            \
      .Arg<ffi::AnyBuffer>()        /* n_valid (1|C,) int32 */           \
      .Ret<ffi::Buffer<ffi::S32>>() /* tables (C, n) */                  \
      .Ret<ffi::AnyBuffer>()        /* table_counts (C, D, L) */         \
      .Ret<ffi::Buffer<ffi::S32>>() /* table_dish (C, D, L) */           \
      .Ret<ffi::AnyBuffer>()        /* dish_tables (C, P) */             \
      .Ret<ffi::AnyBuffer>()        /* means (C, P, d) */                \
      .Ret<ffi::Buffer<ffi::S32>>() /* overflow (C,) */                \
      .Ret<ffi::Buffer<ffi::S32>>() /* accepted (C,) */                \
      .Attr<int64_t>("split_merge")

XLA_FFI_DEFINE_HANDLER_SYMBOL(BayesclustHdpCrfF32, CrfImpl<float>, BAYESCLUST_BIND_HDP);
XLA_FFI_DEFINE_HANDLER_SYMBOL(BayesclustHdpCrfF64, CrfImpl<double>, BAYESCLUST_BIND_HDP);
