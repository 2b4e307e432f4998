// One sweep of Neal's single-site Gibbs moves for the DP Gaussian mixture,
// every chain, as an XLA:CPU FFI custom call.
//
// The same Markov kernel as bayesclust.inference.mixtures.gibbs._scan_points (the XLA
// path, which is the reference these kernels are tested against): for every
// point in order and in every chain, remove the point from its cluster, weigh
// the clusters
//
//   log w_c   = a_c - b_c |x - m_c|^2          (existing slot c, n_c > 0)
//   log w_new = log alpha - d/2 log(2 pi (rho2 + sigma2)) - |x|^2 / (2 (rho2 + sigma2))
//
// (collapsed, Neal's Algorithm 3:  s2_c = 1 / (1/rho2 + n_c/sigma2),
//  m_c = s2_c S_c / sigma2,  a_c = log n_c - d/2 log(2 pi (sigma2 + s2_c)),
//  b_c = 1 / (2 (sigma2 + s2_c));   Kulis & Jordan's Algorithm 2:  m_c = mu_c,
//  a_c = log n_c - d/2 log(2 pi sigma2),  b_c = 1 / (2 sigma2)),
// draw one by inverse CDF from u ~ U(0, 1] (slots in order, the new cluster
// last), and add the point back.  A new cluster takes the first empty slot
// (Algorithm 2: its mean drawn from N(rho2/(rho2+sigma2) x,
// sigma2 rho2/(sigma2+rho2) I)); when every slot is taken the chain's
// overflow flag is set and slot 0 is used (the caller grows the buffer and
// redoes the sweep, as on the XLA path).
//
// Why native: on XLA:CPU a step of the scan is a few dozen small operations
// over the K x chains buffer (its cost per point and chain is in BENCHMARKS.md,
// whatever the number of clusters in use).  Here the chains sit on the lanes
// of an AVX register (8 float / 4 double chains per group, groups shared out
// to XLA's intra-op thread pool), every slot caches its terms (a, b, m) and
// those with one member fewer (the slot a point is leaving), so a step is a
// few vector instructions per slot in use and writes nothing unless some
// chain moves the point; the chains that do are then updated lane by lane,
// the terms read from a per-count table filled lazily (log n_c and
// log(sigma2 + s2_c) are computed once per count and sigma2, not per step).
// Optionally every sweep ends with Dahl's (2003) sequentially-allocated
// split-merge moves (Group::SplitMerge; gibbs.split_merge_move on the XLA
// path), the W lanes walking the points together.
//
// With its own random numbers the kernel renumbers each chain's clusters
// 0..k-1 before every sweep (a relabelling: the chain of partitions is the
// same), so a step weighs as many slots as the busiest lane has clusters
// (far below the XLA step per point and chain: BENCHMARKS.md).
//
// Randomness: by default each chain draws its uniforms from its own stream,
// seeded by the chain's two 32-bit seed words (the caller derives them from
// the chain's JAX key): float32 from xoshiro128** (Blackman & Vigna 2018),
// all lanes stepped together, float64 from SplitMix64 outputs (Steele, Lea &
// Flood 2014); Algorithm 2's normals are Box-Muller on SplitMix64 outputs.  A
// chain's numbers depend only on its seed, never on its lane, group or
// thread.  Tests pass u (C, n) and z (C, n, d) instead, and then the kernel
// makes the very draws the XLA path makes from the same numbers.
//
// Sums are kept in double beside their float copies, so float32 chains do not
// drift from sweep to sweep; counts are exact integers.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <thread>
#include <vector>

#include "parallel.h"
#include "simd.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

using bayesclust::AnyTrue;
using bayesclust::ExpNonPositive;
using bayesclust::Simd;
using bayesclust::SplitMix64;
using bayesclust::Unit;

constexpr double kTwoPi = 6.283185307179586;

// ---- Random numbers and SIMD: simd.h ---------------------------------------

// Per-lane uniform streams for a sweep.  Float: xoshiro128** (Blackman &
// Vigna 2018), one 128-bit state per lane seeded by SplitMix64 from the
// chain's seed, all lanes stepped together in one AVX register of 32-bit
// integers; 24 bits per uniform.  Double: SplitMix64 output i of the chain's
// seed, 53 bits per uniform.  Either way chain c's numbers depend only on its
// seed, never on its lane, group or thread.
template <typename T, int W>
struct Uniforms {
  using U = typename Simd<uint32_t, W>::V;
  U s0, s1, s2, s3;
  uint64_t seed[W];

  void Seed(const uint64_t* seeds) {
    for (int l = 0; l < W; ++l) {
      seed[l] = seeds[l];
      const uint64_t a = SplitMix64(seeds[l], 0xB5ull << 56), b = SplitMix64(seeds[l], (0xB5ull << 56) + 1);
      s0[l] = static_cast<uint32_t>(a);
      s1[l] = static_cast<uint32_t>(a >> 32);
      s2[l] = static_cast<uint32_t>(b);
      s3[l] = static_cast<uint32_t>(b >> 32) | 1u;  // never the all-zero state
    }
  }

  template <typename V>
  __attribute__((always_inline)) inline void Next(uint64_t i, V& out) {
    if constexpr (sizeof(T) == 4) {
      const U x = s1 * 5u;
      const U r = ((x << 7) | (x >> 25)) * 9u;
      const U t = s1 << 9;
      s2 ^= s0;
      s3 ^= s1;
      s1 ^= s2;
      s0 ^= s3;
      s2 ^= t;
      s3 = (s3 << 11) | (s3 >> 21);
      using I = typename Simd<int32_t, W>::V;
      const I top = reinterpret_cast<const I&>(r) >> 8 & 0xFFFFFF;
      out = __builtin_convertvector(top + 1, V) * T(0x1p-24f);
    } else {
      for (int l = 0; l < W; ++l) out[l] = Unit<T>(SplitMix64(seed[l], i));
    }
  }
};

// SplitMix64 counter spaces of a chain's seed (tags in the top bits): the
// float64 uniforms of the point moves, the normals of Algorithm 2's new means,
// those of the mean draws after each sweep, and the float64 uniforms of the
// split-merge moves.
constexpr uint64_t kUniformTag = 0, kNewMeanTag = 1ull << 62, kMeanTag = 2ull << 62,
                   kSplitMergeTag = 3ull << 62;

// ---- The sweep -------------------------------------------------------------

template <typename T>
struct Sweep {
  const T* X;
  // n: the points that move (the first n rows); stride: the rows of X and of
  // the labels' and uniforms' rows (n or more: rows padded to a shape bucket,
  // which never move, are never counted and are recorded as -1).
  int64_t n, stride, d, K, C;
  const int32_t* labels_in;
  const T* counts_in;  // (C, K): the sizes of the slots under labels_in
  const T* sums_in;    // (C, K, d): their sums
  const T* means_in;
  const T* log_alpha;
  const T* sigma2;
  double rho2;
  const uint32_t* seeds;
  const T* u_in;  // (C, stride) or null
  const T* z_in;  // (C, stride, d) or null
  bool collapsed;
  int64_t draws, thin;  // draws recorded, sweeps per draw
  bool draw_means;      // draw the means from p(mu | z) after every sweep
  int64_t split_merge;  // split-merge moves after the point moves of every sweep
  int32_t* labels_out;  // (C, draws, stride)
  T* counts_out;        // (C, draws, K)
  T* sums_out;          // (C, draws, K, d)
  T* means_out;         // (C, draws, K, d)
  int32_t* overflow_out;
  int32_t* accepted_out;  // (C, draws): split-merge moves accepted in each draw's sweeps
};

// The slot terms by count n_c for one (sigma2, rho2, d, scheme): a(n_c),
// b(n_c) and, collapsed, the shrinkage s2_c / sigma2 of the mean; filled
// lazily (a chain visits few distinct counts).  Each thread keeps a few in a
// cache, so a run with a fixed sigma2 computes each entry once.
template <typename T>
struct Table {
  double sigma2 = -1.0, rho2 = -1.0;
  int64_t d = -1;
  bool collapsed = false;
  uint64_t stamp = 0;  // the last group that looked it up
  std::vector<T> a, b, shrink;
  std::vector<uint8_t> ok;

  bool Matches(double s2, double r2, int64_t dim, bool coll, int64_t n) const {
    return sigma2 == s2 && rho2 == r2 && d == dim && collapsed == coll &&
           static_cast<int64_t>(ok.size()) > n;
  }
  void Reset(double s2, double r2, int64_t dim, bool coll, int64_t n) {
    sigma2 = s2;
    rho2 = r2;
    d = dim;
    collapsed = coll;
    a.resize(n + 1);
    b.resize(n + 1);
    shrink.resize(n + 1);
    ok.assign(n + 1, 0);
    full = false;
  }
  bool full = false;  // every count 0..n filled
  void Fill() {
    if (full) return;
    for (int64_t c = 0; c < static_cast<int64_t>(ok.size()); ++c) Ensure(c);
    full = true;
  }
  inline void Ensure(int64_t count) {
    if (ok[count]) return;
    const double n_c = static_cast<double>(count);
    double var, shr = 0.0;
    if (collapsed) {
      const double post_var = 1.0 / (1.0 / rho2 + n_c / sigma2);
      shr = post_var / sigma2;
      var = sigma2 + post_var;
    } else {
      var = sigma2;
    }
    a[count] = count > 0 ? static_cast<T>(std::log(n_c) - 0.5 * d * std::log(kTwoPi * var))
                         : -std::numeric_limits<T>::infinity();
    b[count] = static_cast<T>(0.5 / var);
    shrink[count] = static_cast<T>(shr);
    ok[count] = 1;
  }
};

// This thread's table for the key; never one another lane of the same group
// (same stamp) holds.  At most 16 tables per thread (twice a group's lanes), each
// 13 (n + 1) bytes for float: chains with a sigma2 prior each need their own.
template <typename T>
Table<T>* TableFor(double sigma2, double rho2, int64_t d, bool collapsed, int64_t n,
                   uint64_t stamp) {
  constexpr size_t kCapacity = 16;
  thread_local std::vector<std::unique_ptr<Table<T>>> cache;
  thread_local size_t next = 0;
  for (auto& t : cache)
    if (t->Matches(sigma2, rho2, d, collapsed, n)) {
      t->stamp = stamp;
      return t.get();
    }
  Table<T>* victim = nullptr;
  if (cache.size() < kCapacity) {
    cache.push_back(std::make_unique<Table<T>>());
    victim = cache.back().get();
  } else {
    while (victim == nullptr) {
      Table<T>* t = cache[next++ % kCapacity].get();
      if (t->stamp != stamp) victim = t;
    }
  }
  victim->Reset(sigma2, rho2, d, collapsed, n);
  victim->stamp = stamp;
  return victim;
}

// W chains moved together, one per SIMD lane (W = 8 for float, 4 for
// double): every array below holds one vector per slot, lane l = chain
// first + l.  A step evaluates the slots of all W chains with vector
// instructions, the slot the point leaves taking the "one member fewer"
// terms cached beside each slot's terms, so a step writes nothing unless a
// chain moves the point; the chains that do are then updated lane by lane.
// Lanes past the last chain repeat it, and their results are discarded.
template <typename T, int Lanes>
struct Group {
  using V = typename Simd<T, Lanes>::V;
  static constexpr int W = Lanes;
  static constexpr T kInf = std::numeric_limits<T>::infinity();

  const Sweep<T>* s;
  int64_t first, lanes;   // chains first .. first + lanes - 1
  int64_t K, d, n, kmax;  // kmax: slots past it are empty in every lane
  // Per slot: the count; the terms a, b, m (feature-major, m[t * K + k]) of
  // the slot as it is, and am, bm, shm (shrinkage) with one member fewer.
  std::vector<V> cnt, a, b, am, bm, shm, m;
  std::vector<V> mleave;    // d * K: shm S, so that a leaving point's slot has mean mleave - shm x
  std::vector<double> sum;  // lane-major (l, k, t): running sums in double
  std::vector<V> label;     // n: slot of point i in every lane (as T)
  std::vector<V> u;         // n: uniforms
  std::vector<V> scratch;   // K: a step's log weights, then cumulative weights
  std::vector<int64_t> slot_map;  // K: Compact's renumbering
  V a_new, b_new;           // the new cluster's terms
  double sigma2[W], log_alpha[W], rho2;
  int64_t chain[W];
  int32_t overflow[W];
  int32_t accepted[W];  // split-merge moves accepted since the last Record
  Table<T>* table[W];
  Table<T>* sm_table[W];    // the collapsed terms, for the split-merge moves
  std::vector<V> sm_sa, sm_sb, sm_alloc;  // d, d, n: a move's sums of A and B, allocations
  Uniforms<T, W> stream;
  std::vector<double> mu;  // lane-major (l, k, t): the means drawn after a sweep
  int64_t sweep_ = 0;      // the sweep in progress

  // Lane l of v[k] := value, as a whole-vector write (a blend in registers):
  // the next step reads these arrays as vectors, and a vector load that
  // overlaps an earlier scalar store cannot be forwarded from it (a stall of
  // tens of cycles per array on every move).
  V lane_ids;
  __attribute__((always_inline)) inline void Set(std::vector<V>& v, int64_t k, int l, T value) {
    v[k] = lane_ids == static_cast<T>(l) ? V{} + value : v[k];
  }

  static T& At(std::vector<V>& v, int64_t k, int l) {
    return reinterpret_cast<T*>(v.data() + k)[l];
  }
  double* Sum(int l, int64_t k) { return sum.data() + (l * K + k) * d; }

  // Slot k of lane l after its count or sum changed.
  void Refresh(int64_t k, int l) {
    const int64_t count = static_cast<int64_t>(At(cnt, k, l));
    if (count == 0) {
      Set(a, k, l, -kInf);
      return;
    }
    Table<T>& tab = *table[l];
    tab.Ensure(count);
    tab.Ensure(count - 1);
    Set(a, k, l, tab.a[count]);
    Set(b, k, l, tab.b[count]);
    Set(am, k, l, tab.a[count - 1]);
    Set(bm, k, l, tab.b[count - 1]);
    Set(shm, k, l, tab.shrink[count - 1]);
    const double* sk = Sum(l, k);
    if (s->collapsed)
      for (int64_t t = 0; t < d; ++t) {
        Set(m, t * K + k, l, static_cast<T>(tab.shrink[count] * sk[t]));
        Set(mleave, t * K + k, l, static_cast<T>(tab.shrink[count - 1] * sk[t]));
      }
    kmax = std::max(kmax, k + 1);
  }

  void Init(const Sweep<T>* sweep, int64_t first_chain, int64_t count, uint64_t stamp) {
    s = sweep;
    first = first_chain;
    K = s->K;
    d = s->d;
    n = s->n;
    lanes = count;
    rho2 = s->rho2;
    kmax = 0;
    for (int l = 0; l < W; ++l) lane_ids[l] = static_cast<T>(l);
    cnt.assign(K, V{});
    a.assign(K, V{} - kInf);
    b.assign(K, V{});
    am.assign(K, V{} - kInf);
    bm.assign(K, V{});
    shm.assign(K, V{});
    m.assign(d * K, V{});
    mleave.assign(d * K, V{});
    sum.assign(W * K * d, 0.0);
    mu.assign(W * K * d, 0.0);
    scratch.assign(K, V{});
    label.resize(n);
    u.resize(n);
    if (s->split_merge > 0) {
      sm_sa.resize(d);
      sm_sb.resize(d);
      sm_alloc.resize(n);
    }
    for (int l = 0; l < W; ++l) {
      const int64_t c = first + std::min<int64_t>(l, lanes - 1);
      chain[l] = c;
      sigma2[l] = s->sigma2[c];
      log_alpha[l] = s->log_alpha[c];
      overflow[l] = 0;
      accepted[l] = 0;
      table[l] = TableFor<T>(sigma2[l], rho2, d, s->collapsed, n, stamp);
      if (s->split_merge > 0) {
        // A move weighs clusters of any size up to n: every count filled once.
        sm_table[l] = TableFor<T>(sigma2[l], rho2, d, true, n, stamp);
        sm_table[l]->Fill();
      }
      for (int64_t k = 0; k < K; ++k) {
        At(cnt, k, l) = s->counts_in[c * K + k];
        for (int64_t t = 0; t < d; ++t) Sum(l, k)[t] = s->sums_in[(c * K + k) * d + t];
      }
      if (!s->collapsed) {
        const T* means_in = s->means_in + c * K * d;
        for (int64_t k = 0; k < K; ++k)
          for (int64_t t = 0; t < d; ++t) At(m, t * K + k, l) = means_in[k * d + t];
      }
      for (int64_t k = 0; k < K; ++k) Refresh(k, l);
      // The new cluster: log alpha + log N(x | 0, (rho2 + sigma2) I).
      const double var_new = rho2 + sigma2[l];
      a_new[l] = static_cast<T>(log_alpha[l] - 0.5 * d * std::log(kTwoPi * var_new));
      b_new[l] = static_cast<T>(0.5 / var_new);
    }
    // Labels and uniforms point by point, lanes inner: whole vectors written.
    const int32_t* lab[W];
    uint64_t seed[W];
    for (int l = 0; l < W; ++l) {
      lab[l] = s->labels_in + chain[l] * s->stride;
      seed[l] = Seed(chain[l]);
    }
    stream.Seed(seed);
    for (int64_t i = 0; i < n; ++i) {
      V li;
      for (int l = 0; l < W; ++l) li[l] = static_cast<T>(lab[l][i]);
      label[i] = li;
    }
  }

  // The uniforms of sweep `sweep` (given ones: sweep 0 only).
  void NewSweep(int64_t sweep) {
    sweep_ = sweep;
    // Given numbers reproduce the reference's draws slot for slot: no relabelling.
    if (s->u_in == nullptr)
      for (int l = 0; l < W; ++l) Compact(l);
    // kmax only grows during a sweep; clusters that died since leave gaps at
    // the top, which would otherwise be weighed (at -inf) in every step.
    kmax = 0;
    for (int64_t k = 0; k < K; ++k)
      for (int l = 0; l < W; ++l)
        if (At(cnt, k, l) > T(0)) kmax = k + 1;
    for (int64_t i = 0; i < n; ++i) {
      V ui;
      if (s->u_in != nullptr)
        for (int l = 0; l < W; ++l) ui[l] = s->u_in[chain[l] * s->stride + i];
      else
        stream.Next(kUniformTag + static_cast<uint64_t>(sweep) * n + i, ui);
      u[i] = ui;
    }
  }

  // Lane l's clusters renumbered 0, 1, ... in slot order, so that a step
  // weighs only as many slots as the busiest lane has clusters (a dead
  // cluster leaves a gap that a step would otherwise weigh at -inf until a new
  // cluster fills it).  A relabelling of the partition: the chain of
  // partitions is unchanged.
  void Compact(int l) {
    int64_t next = 0;
    bool gap = false;
    std::vector<int64_t>& to = slot_map;
    to.assign(K, -1);
    for (int64_t k = 0; k < K; ++k)
      if (At(cnt, k, l) > T(0)) {
        gap = gap || next != k;
        to[k] = next++;
      }
    if (!gap) return;  // already contiguous
    for (int64_t k = 0; k < K; ++k) {
      const int64_t j = to[k];
      if (j < 0 || j == k) continue;  // j < k: moving down never overwrites a live slot
      Set(cnt, j, l, At(cnt, k, l));
      std::copy(Sum(l, k), Sum(l, k) + d, Sum(l, j));
      if (!s->collapsed)
        for (int64_t t = 0; t < d; ++t) Set(m, t * K + j, l, At(m, t * K + k, l));
    }
    for (int64_t k = next; k < K; ++k) {
      Set(cnt, k, l, T(0));
      std::fill(Sum(l, k), Sum(l, k) + d, 0.0);
    }
    for (int64_t k = 0; k < K; ++k) Refresh(k, l);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t j = to[static_cast<int64_t>(label[i][l])];
      Set(label, i, l, static_cast<T>(j));
    }
  }

  // A standard normal from the chain of lane l: Box-Muller on two SplitMix64
  // outputs of the counter space starting at j.
  double Normal(int l, uint64_t j) const {
    const uint64_t seed = Seed(chain[l]);
    const double u1 = Unit<double>(SplitMix64(seed, j));
    const double u2 = Unit<double>(SplitMix64(seed, j + 1));
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
  }

  // After a sweep: every slot's mean drawn from its Gaussian posterior
  // N(rho2 S / (sigma2 + rho2 n), sigma2 rho2 / (sigma2 + rho2 n) I), 0 for
  // empty slots (gibbs._draw_means); Algorithm 2 moves on with them.
  void DrawMeans(int64_t sweep) {
    for (int l = 0; l < W; ++l) {
      const double s2 = sigma2[l];
      for (int64_t k = 0; k < K; ++k) {
        const double count = At(cnt, k, l);
        double* out = mu.data() + (l * K + k) * d;
        if (count == 0) {
          std::fill(out, out + d, 0.0);
        } else {
          const double denom = s2 + rho2 * count, sd = std::sqrt(s2 * rho2 / denom);
          const double* sk = Sum(l, k);
          const uint64_t j = kMeanTag + 2 * ((static_cast<uint64_t>(sweep) * K + k) * d);
          for (int64_t t = 0; t < d; ++t) out[t] = rho2 * sk[t] / denom + sd * Normal(l, j + 2 * t);
        }
        if (!s->collapsed)
          for (int64_t t = 0; t < d; ++t) Set(m, t * K + k, l, static_cast<T>(out[t]));
      }
    }
  }

  // Draw `t`: labels, counts, sums (from the double sums, so float32 chains
  // do not drift) and means (drawn, or as the moves left them).
  void Record(int64_t t) {
    const int64_t T_ = s->draws;
    for (int l = 0; l < lanes; ++l) {
      s->accepted_out[(first + l) * T_ + t] = accepted[l];
      accepted[l] = 0;
    }
    int32_t* lab[W];
    for (int l = 0; l < lanes; ++l) lab[l] = s->labels_out + ((first + l) * T_ + t) * s->stride;
    for (int64_t i = 0; i < n; ++i) {
      const V li = label[i];
      for (int l = 0; l < lanes; ++l) lab[l][i] = static_cast<int32_t>(li[l]);
    }
    for (int l = 0; l < lanes; ++l) std::fill(lab[l] + n, lab[l] + s->stride, -1);
    for (int l = 0; l < lanes; ++l) {
      const int64_t c = first + l, row = c * T_ + t;
      T* counts = s->counts_out + row * K;
      T* sums = s->sums_out + row * K * d;
      T* means = s->means_out + row * K * d;
      const T* means_in = s->means_in + c * K * d;
      for (int64_t k = 0; k < K; ++k) {
        counts[k] = At(cnt, k, l);
        for (int64_t q = 0; q < d; ++q) {
          sums[k * d + q] = static_cast<T>(Sum(l, k)[q]);
          means[k * d + q] = s->draw_means ? static_cast<T>(mu[(l * K + k) * d + q])
                             : s->collapsed ? means_in[k * d + q]
                                            : At(m, q * K + k, l);
        }
      }
    }
  }

  uint64_t Seed(int64_t c) const {
    return (static_cast<uint64_t>(s->seeds[2 * c]) << 32) | s->seeds[2 * c + 1];
  }

  // Algorithm 2's new-cluster mean for point i, feature t, lane l.
  T NewMean(int64_t i, const T* x, int64_t t, int l) const {
    const int64_t c = chain[l];
    const double z = s->z_in != nullptr
                         ? static_cast<double>(s->z_in[(c * s->stride + i) * d + t])
                         : Normal(l, kNewMeanTag + 2 * ((static_cast<uint64_t>(sweep_) * n + i) * d + t));
    const double shrink = rho2 / (rho2 + sigma2[l]);
    return static_cast<T>(shrink * x[t] + std::sqrt(sigma2[l] * shrink) * z);
  }

  // Neal's move for point i in every lane.  Compiled per scheme, for d <= 3
  // per dimension D (D = 0: any d), so that the features' loops unroll and the
  // point's coordinates are broadcast once per step, not once per slot, and
  // for up to 6 slots in use per KK (KK = 0: kmax), so that the slots' loops
  // unroll and their weights stay in registers (PointsFor).
  template <bool Collapsed, int D, int KK>
  __attribute__((always_inline)) inline void Step(int64_t i) {
    const int64_t dim = D > 0 ? D : d;
    const T* x = s->X + i * dim;
    const V old = label[i];
    const int64_t kk = KK > 0 ? KK : kmax;  // slots kk.. are empty in every lane
    V lw_fixed[KK > 0 ? KK : 1];  // a fixed number of slots: weights in registers
    V* lw = KK > 0 ? lw_fixed : scratch.data();
    constexpr int kFixed = D > 0 ? D : 1;
    V xv[kFixed];
    V sq_new{};
    for (int64_t t = 0; t < dim; ++t) sq_new += x[t] * x[t];
    if constexpr (D > 0)
      for (int t = 0; t < D; ++t) xv[t] = V{} + x[t];
    const V lw_new = a_new - b_new * sq_new;
    V top = lw_new;
    for (int64_t k = 0; k < kk; ++k) {
      const auto leaving = old == static_cast<T>(k);
      const V ak = leaving ? am[k] : a[k];
      const V bk = leaving ? bm[k] : b[k];
      V acc{};
      for (int64_t t = 0; t < dim; ++t) {
        const V xt = D > 0 ? xv[D > 0 ? t : 0] : V{} + x[t];
        V mk = m[t * K + k];
        // Collapsed, the slot the point leaves: the other members' mean, shm (S - x).
        if constexpr (Collapsed) mk = leaving ? mleave[t * K + k] - shm[k] * xt : mk;
        const V diff = xt - mk;
        acc += diff * diff;
      }
      lw[k] = ak - bk * acc;
      top = top > lw[k] ? top : lw[k];
    }
    // Inverse CDF: the slot is the number of slots whose cumulative weight is
    // below u * total (kk: the new cluster).
    V cdf{};
    for (int64_t k = 0; k < kk; ++k) {
      cdf += ExpNonPositive<T, W>(lw[k] - top);
      lw[k] = cdf;
    }
    const V target = (cdf + ExpNonPositive<T, W>(lw_new - top)) * u[i];
    const V one = V{} + T(1);
    V choice{};
    for (int64_t k = 0; k < kk; ++k) choice += lw[k] < target ? one : V{};
    if (AnyTrue(choice != old)) Move(i, x, old, choice, kk);
  }

  // The lanes whose point leaves its slot: remove, find a slot for a new
  // cluster (choice == kk), add, refresh the two slots' terms.
  __attribute__((noinline)) void Move(int64_t i, const T* x, const V& old, const V& choice,
                                      int64_t kk) {
    // The moving lanes as bits (one unpredictable branch per moving lane, not
    // one per lane).
    uint32_t moving = 0;
    for (int l = 0; l < W; ++l) moving |= static_cast<uint32_t>(choice[l] != old[l]) << l;
    for (; moving != 0; moving &= moving - 1) {
      const int l = __builtin_ctz(moving);
      const int64_t o = static_cast<int64_t>(old[l]);
      Set(cnt, o, l, At(cnt, o, l) - T(1));
      Shift(l, o, x, -1.0);
      Refresh(o, l);
      int64_t slot = static_cast<int64_t>(choice[l]);
      if (slot >= kk) {
        // The first empty slot; a full buffer puts the point in slot 0 (and,
        // as on the XLA path, the new mean there) and flags the sweep, which
        // the caller redoes with a larger buffer.
        slot = -1;
        for (int64_t k = 0; k < K && slot < 0; ++k)
          if (At(cnt, k, l) == T(0)) slot = k;
        if (slot < 0) {
          overflow[l] = 1;
          slot = 0;
        }
        if (!s->collapsed)
          for (int64_t t = 0; t < d; ++t) Set(m, t * K + slot, l, NewMean(i, x, t, l));
      }
      Set(cnt, slot, l, At(cnt, slot, l) + T(1));
      Shift(l, slot, x, 1.0);
      Refresh(slot, l);
      Set(label, i, l, static_cast<T>(slot));
    }
  }

  // Sum of slot k in lane l plus sign * x (in double; Refresh rounds).
  void Shift(int l, int64_t k, const T* x, double sign) {
    double* sk = Sum(l, k);
    for (int64_t t = 0; t < d; ++t) sk[t] += sign * x[t];
  }


  // One sequentially-allocated split-merge move in every lane (Dahl 2003; the
  // XLA path's gibbs.split_merge_move, means integrated out): per lane two
  // distinct points i, j; the other members of their clusters are allocated
  // in index order to A = {i} or B = {j} with probability proportional to
  // |A| p(x | A) (the collapsed predictive of the members allocated so far),
  // drawn for a split (z_i = z_j) and forced to the current clusters for a
  // merge (z_i != z_j), q the product of the probabilities; the split is
  // accepted with probability min(1, r / q), the merge with min(1, q / r), r
  // the posterior ratio of the split to the merged state.  The lanes walk the
  // points together, each lane masked to its own clusters' members.  The
  // visiting order is an auxiliary variable of the move, shared by the move
  // and its reverse: Dahl draws it uniformly, here it is the index order (any
  // state-independent choice keeps detailed balance; a per-lane random order
  // would cost a gather per point).
  void SplitMerge(int64_t sweep, int64_t move) {
    using I = typename Simd<T, W>::I;
    const uint64_t base =
        kSplitMergeTag + (static_cast<uint64_t>(sweep) * s->split_merge + move) * (n + 3);
    V u_i, u_j, u_acc;
    stream.Next(base, u_i);
    stream.Next(base + 1, u_j);
    stream.Next(base + 2, u_acc);
    V vi, vj, ci, cj, n_a, n_b, a_a, b_a, sh_a, a_b, b_b, sh_b;
    int64_t pi[W], pj[W];
    for (int l = 0; l < W; ++l) {
      // A pair chosen independently of the state (a uniform pair up to the
      // uniforms' resolution), as detailed balance needs.
      pi[l] = std::min<int64_t>(static_cast<int64_t>(u_i[l] * n), n - 1);
      const int64_t jj = std::min<int64_t>(static_cast<int64_t>(u_j[l] * (n - 1)), n - 2);
      pj[l] = jj + (jj >= pi[l]);
      vi[l] = static_cast<T>(pi[l]);
      vj[l] = static_cast<T>(pj[l]);
      ci[l] = label[pi[l]][l];
      cj[l] = label[pj[l]][l];
      const Table<T>& tab = *sm_table[l];
      a_a[l] = a_b[l] = tab.a[1];
      b_a[l] = b_b[l] = tab.b[1];
      sh_a[l] = sh_b[l] = tab.shrink[1];
      for (int64_t t = 0; t < d; ++t) {
        At(sm_sa, t, l) = s->X[pi[l] * d + t];
        At(sm_sb, t, l) = s->X[pj[l] * d + t];
      }
    }
    const I split = ci == cj;
    const V one = V{} + T(1);
    n_a = n_b = one;
    // log q = sum over members of log P(chosen side): -log(1 + e) - [chosen
    // side the less likely] |diff|, e = exp(-|diff|).  The (1 + e) factors
    // (each in [1, 2]) are multiplied up and their log taken every 64 points.
    V less_likely{}, product = one;
    double log_q[W] = {};
    auto fold = [&]() {
      for (int l = 0; l < W; ++l) log_q[l] -= std::log(static_cast<double>(product[l]));
      product = one;
    };
    for (int64_t p = 0; p < n; ++p) {
      V u_p;
      stream.Next(base + 3 + p, u_p);  // every lane steps its stream at every point
      const V lab = label[p];
      const T pt = static_cast<T>(p);
      const I in = ((lab == ci) | (lab == cj)) & (vi != pt) & (vj != pt);
      if ((p & 63) == 0) fold();  // at most 64 factors in [1, 2]: no overflow
      if (!AnyTrue(in)) continue;
      const T* x = s->X + p * d;
      V acc_a{}, acc_b{};
      for (int64_t t = 0; t < d; ++t) {
        const V da = x[t] - sh_a * sm_sa[t], db = x[t] - sh_b * sm_sb[t];
        acc_a += da * da;
        acc_b += db * db;
      }
      const V diff = (a_b - b_b * acc_b) - (a_a - b_a * acc_a);  // log P(B) - log P(A)
      const I b_ahead = diff >= T(0);
      const V abs_diff = b_ahead ? diff : -diff;
      const V e = ExpNonPositive<T, W>(-abs_diff);
      // Drawn as "the less likely side or not", u in (0, 1]: a side whose
      // probability e / (1 + e) is below the uniforms' resolution is never
      // chosen.  (u < P(B) would choose A at u = 1 even when P(B) rounds to 1:
      // a split whose q claims e^-|diff| but is proposed with probability 2^-24,
      // then accepted with probability ~1 and hardly ever merged back.)
      const I less = u_p < e / (one + e);
      const I go_b = split ? (b_ahead != less) : (lab == cj);
      const I to_b = in & go_b, to_a = in & ~go_b;
      less_likely += (in & (go_b != b_ahead)) ? abs_diff : V{};
      product *= in ? one + e : one;
      sm_alloc[p] = to_b ? one : V{};
      n_a += to_a ? one : V{};
      n_b += to_b ? one : V{};
      for (int64_t t = 0; t < d; ++t) {
        sm_sa[t] += to_a ? V{} + x[t] : V{};
        sm_sb[t] += to_b ? V{} + x[t] : V{};
      }
      // The grown side's terms at its new count.
      const V grown = to_b ? n_b : n_a;
      V ga, gb, gs;
      for (int l = 0; l < W; ++l) {
        const Table<T>& tab = *sm_table[l];
        const int64_t c = static_cast<int64_t>(grown[l]);
        ga[l] = tab.a[c];
        gb[l] = tab.b[c];
        gs[l] = tab.shrink[c];
      }
      a_a = to_a ? ga : a_a;
      b_a = to_a ? gb : b_a;
      sh_a = to_a ? gs : sh_a;
      a_b = to_b ? ga : a_b;
      b_b = to_b ? gb : b_b;
      sh_b = to_b ? gs : sh_b;
    }
    fold();
    for (int l = 0; l < W; ++l) {
      const double na = n_a[l], nb = n_b[l], s2 = sigma2[l];
      const auto score = [&](double count, double sq) {  // gibbs._split_merge_score
        return -0.5 * d * std::log1p(count * rho2 / s2) + sq / (2.0 * s2 * (count + s2 / rho2));
      };
      double sq_a = 0.0, sq_b = 0.0, sq_ab = 0.0;
      for (int64_t t = 0; t < d; ++t) {
        const double sa = At(sm_sa, t, l), sb = At(sm_sb, t, l);
        sq_a += sa * sa;
        sq_b += sb * sb;
        sq_ab += (sa + sb) * (sa + sb);
      }
      const double log_ratio = log_alpha[l] + std::lgamma(na) + std::lgamma(nb) -
                               std::lgamma(na + nb) + score(na, sq_a) + score(nb, sq_b) -
                               score(na + nb, sq_ab);
      const double lq = log_q[l] - static_cast<double>(less_likely[l]);
      const bool is_split = split[l] != 0;
      const double log_acc = is_split ? log_ratio - lq : lq - log_ratio;
      if (!(std::log(static_cast<double>(u_acc[l])) < log_acc)) continue;
      const int64_t keep = static_cast<int64_t>(ci[l]);
      int64_t other = static_cast<int64_t>(cj[l]);
      if (is_split) {
        other = -1;
        for (int64_t k = 0; k < K && other < 0; ++k)
          if (At(cnt, k, l) == T(0)) other = k;
        if (other < 0) {  // no slot for B: the caller grows the buffer and redoes
          overflow[l] = 1;
          continue;
        }
        for (int64_t p = 0; p < n; ++p)
          if (p == pj[l] || (p != pi[l] && label[p][l] == ci[l] && sm_alloc[p][l] != T(0)))
            Set(label, p, l, static_cast<T>(other));
      } else {
        for (int64_t p = 0; p < n; ++p)
          if (label[p][l] == cj[l])
            Set(label, p, l, static_cast<T>(keep));
      }
      ++accepted[l];
      // The two clusters' counts and sums (double) from their members.
      double* s_keep = Sum(l, keep);
      double* s_other = Sum(l, other);
      std::fill(s_keep, s_keep + d, 0.0);
      std::fill(s_other, s_other + d, 0.0);
      T c_keep = 0, c_other = 0;
      for (int64_t p = 0; p < n; ++p) {
        const int64_t z = static_cast<int64_t>(label[p][l]);
        if (z != keep && z != other) continue;
        double* dst = z == keep ? s_keep : s_other;
        for (int64_t t = 0; t < d; ++t) dst[t] += s->X[p * d + t];
        (z == keep ? c_keep : c_other) += T(1);
      }
      Set(cnt, keep, l, c_keep);
      Set(cnt, other, l, c_other);
      Refresh(keep, l);
      Refresh(other, l);
    }
  }

  // Every point once, in order (Step compiled for this scheme and d).
  void Points() {
    if (s->collapsed) {
      PointsFor<true>();
    } else {
      PointsFor<false>();
    }
  }
  template <bool Collapsed>
  void PointsFor() {
    switch (d) {
      case 1: PointsFor<Collapsed, 1>(); break;
      case 2: PointsFor<Collapsed, 2>(); break;
      case 3: PointsFor<Collapsed, 3>(); break;
      default: PointsFor<Collapsed, 0>();
    }
  }
  // Up to 6 slots in use, a step is compiled for their number (loops
  // unrolled, weights kept in registers); kmax can grow within the sweep.
  template <bool Collapsed, int D>
  void PointsFor() {
    for (int64_t i = 0; i < n; ++i) {
      switch (kmax) {
        case 1: Step<Collapsed, D, 1>(i); break;
        case 2: Step<Collapsed, D, 2>(i); break;
        case 3: Step<Collapsed, D, 3>(i); break;
        case 4: Step<Collapsed, D, 4>(i); break;
        case 5: Step<Collapsed, D, 5>(i); break;
        case 6: Step<Collapsed, D, 6>(i); break;
        default: Step<Collapsed, D, 0>(i);
      }
    }
  }

  void Finish() {
    for (int l = 0; l < lanes; ++l) s->overflow_out[first + l] = overflow[l];
  }
};

template <typename T, int Lanes>
void RunGroup(const Sweep<T>* s, int64_t first, int64_t count) {
  thread_local uint64_t stamps = 0;
  Group<T, Lanes> group;
  group.Init(s, first, count, ++stamps);
  for (int64_t t = 0; t < s->draws; ++t) {
    for (int64_t r = 0; r < s->thin; ++r) {
      const int64_t sweep = t * s->thin + r;
      group.NewSweep(sweep);
      group.Points();
      if (s->n >= 2)
        for (int64_t move = 0; move < s->split_merge; ++move) group.SplitMerge(sweep, move);
      // The collapsed chain never reads its means: draw them for the record only.
      if (s->draw_means && (!s->collapsed || r == s->thin - 1)) group.DrawMeans(sweep);
    }
    group.Record(t);
  }
  group.Finish();
}

template <typename T>
ffi::Error SweepImpl(ffi::ThreadPool pool, ffi::AnyBuffer X, ffi::Buffer<ffi::S32> labels,
                     ffi::AnyBuffer counts, ffi::AnyBuffer sums, ffi::AnyBuffer means, ffi::AnyBuffer log_alpha, ffi::AnyBuffer sigma2,
                     ffi::AnyBuffer rho2, ffi::Buffer<ffi::U32> seeds, ffi::AnyBuffer u,
                     ffi::AnyBuffer z, ffi::Buffer<ffi::S32> n_valid,
                     ffi::Result<ffi::Buffer<ffi::S32>> labels_out,
                     ffi::Result<ffi::AnyBuffer> counts_out, ffi::Result<ffi::AnyBuffer> sums_out,
                     ffi::Result<ffi::AnyBuffer> means_out,
                     ffi::Result<ffi::Buffer<ffi::S32>> overflow_out,
                     ffi::Result<ffi::Buffer<ffi::S32>> accepted_out, int32_t collapsed,
                     int64_t draws, int64_t thin, int32_t draw_means, int64_t split_merge) {
  auto xd = X.dimensions();
  auto ld = labels.dimensions();
  auto md = means.dimensions();
  if (xd.size() != 2 || ld.size() != 2 || md.size() != 3 || ld[1] != xd[0] ||
      md[0] != ld[0] || md[2] != xd[1])
    return ffi::Error::InvalidArgument(
        "gibbs_sweep: X must be (n, d), labels (C, n) and means (C, K, d)");
  auto sweep = std::make_shared<Sweep<T>>();
  Sweep<T>& s = *sweep;
  s.X = static_cast<const T*>(X.untyped_data());
  s.stride = xd[0];
  s.n = n_valid.typed_data()[0];
  if (s.n < 0 || s.n > s.stride)
    return ffi::Error::InvalidArgument("gibbs_sweep: n_valid must be in [0, rows of X]");
  s.d = xd[1];
  s.C = ld[0];
  s.K = md[1];
  s.labels_in = labels.typed_data();
  s.counts_in = static_cast<const T*>(counts.untyped_data());
  s.sums_in = static_cast<const T*>(sums.untyped_data());
  s.means_in = static_cast<const T*>(means.untyped_data());
  s.log_alpha = static_cast<const T*>(log_alpha.untyped_data());
  s.sigma2 = static_cast<const T*>(sigma2.untyped_data());
  s.rho2 = static_cast<const T*>(rho2.untyped_data())[0];
  s.seeds = seeds.typed_data();
  s.u_in = u.element_count() > 0 ? static_cast<const T*>(u.untyped_data()) : nullptr;
  s.z_in = z.element_count() > 0 ? static_cast<const T*>(z.untyped_data()) : nullptr;
  s.collapsed = collapsed != 0;
  s.draws = draws;
  s.thin = thin;
  s.draw_means = draw_means != 0;
  s.split_merge = split_merge;
  if (split_merge < 0)
    return ffi::Error::InvalidArgument("gibbs_sweep: split_merge must be >= 0");
  if (split_merge > 0 && (s.u_in != nullptr || s.z_in != nullptr))
    return ffi::Error::InvalidArgument("gibbs_sweep: split-merge moves draw their own numbers");
  if (draws < 1 || thin < 1)
    return ffi::Error::InvalidArgument("gibbs_sweep: draws and thin must be >= 1");
  if ((s.u_in != nullptr || s.z_in != nullptr) && draws * thin != 1)
    return ffi::Error::InvalidArgument("gibbs_sweep: given u and z serve one sweep only");
  s.labels_out = labels_out->typed_data();
  s.counts_out = static_cast<T*>(counts_out->untyped_data());
  s.sums_out = static_cast<T*>(sums_out->untyped_data());
  s.means_out = static_cast<T*>(means_out->untyped_data());
  s.overflow_out = overflow_out->typed_data();
  s.accepted_out = accepted_out->typed_data();
  if (s.C == 0) return ffi::Error::Success();
  if (s.n == 0) {  // nothing moves; means are not drawn
    const int64_t slots = s.C * draws * s.K;
    std::fill(s.labels_out, s.labels_out + s.C * draws * s.stride, -1);
    std::fill(s.counts_out, s.counts_out + slots, T(0));
    std::fill(s.sums_out, s.sums_out + slots * s.d, T(0));
    for (int64_t c = 0; c < s.C; ++c)
      for (int64_t t = 0; t < draws; ++t)
        std::memcpy(s.means_out + (c * draws + t) * s.K * s.d, s.means_in + c * s.K * s.d,
                    s.K * s.d * sizeof(T));
    std::fill(s.overflow_out, s.overflow_out + s.C, 0);
    std::fill(s.accepted_out, s.accepted_out + s.C * draws, 0);
    return ffi::Error::Success();
  }
  // Groups of chains, one per lane of an AVX register (up to 8 float / 4
  // double chains), shared out to the threads; fewer chains than threads *
  // lanes are spread over the threads (a step costs the same with one lane in
  // use as with all).  (Two registers per vector -- 64-byte GCC vectors --
  // compiled to far slower code; two groups interleaved point by point gained
  // little: a step is bound by its instruction count, not by its latency.)
  constexpr int kLanes = 32 / sizeof(T);
  bayesclust::ForChainGroups(pool, s.C, kLanes, [sweep](int64_t first, int64_t count) {
    RunGroup<T, kLanes>(sweep.get(), first, count);
  });
  return ffi::Error::Success();
}

}  // namespace

#define BAYESCLUST_BIND_GIBBS                                  \
  ffi::Ffi::Bind()                                             \
      .Ctx<ffi::ThreadPool>()                                  \
      .Arg<ffi::AnyBuffer>()        /* X (n, d) */             \
      .Arg<ffi::Buffer<ffi::S32>>() /* labels (C, n) */        \
      .Arg<ffi::AnyBuffer>()        /* counts (C, K) */        \
      .Arg<ffi::AnyBuffer>()        /* sums (C, K, d) */       \
      .Arg<ffi::AnyBuffer>()        /* means (C, K, d) */      \
      .Arg<ffi::AnyBuffer>()        /* log_alpha (C,) */       \
      .Arg<ffi::AnyBuffer>()        /* sigma2 (C,) */          \
      .Arg<ffi::AnyBuffer>()        /* rho2 () */              \
      .Arg<ffi::Buffer<ffi::U32>>() /* seeds (C, 2) */         \
      .Arg<ffi::AnyBuffer>()        /* u (C, n) or empty */    \
      .Arg<ffi::AnyBuffer>()        /* z (C, n, d) or empty */ \
      .Arg<ffi::Buffer<ffi::S32>>() /* n_valid (): rows that move */ \
      .Ret<ffi::Buffer<ffi::S32>>() /* labels (C, T, n) */     \
      .Ret<ffi::AnyBuffer>()        /* counts (C, T, K) */     \
      .Ret<ffi::AnyBuffer>()        /* sums (C, T, K, d) */    \
      .Ret<ffi::AnyBuffer>()        /* means (C, T, K, d) */   \
      .Ret<ffi::Buffer<ffi::S32>>() /* overflow (C,) */        \
      .Ret<ffi::Buffer<ffi::S32>>() /* accepted (C, T) */      \
      .Attr<int32_t>("collapsed")                              \
      .Attr<int64_t>("draws")                                  \
      .Attr<int64_t>("thin")                                   \
      .Attr<int32_t>("draw_means")                             \
      .Attr<int64_t>("split_merge")

XLA_FFI_DEFINE_HANDLER_SYMBOL(BayesclustGibbsSweepF32, SweepImpl<float>, BAYESCLUST_BIND_GIBBS);
XLA_FFI_DEFINE_HANDLER_SYMBOL(BayesclustGibbsSweepF64, SweepImpl<double>, BAYESCLUST_BIND_GIBBS);
