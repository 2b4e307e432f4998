// Fused nearest-centre assignment for XLA:CPU (an XLA FFI custom call).
//
// For every row x_i of X (n x d) and the visible centres of C (k x d) it
// returns the index of the nearest centre and the exact squared distance
// |x_i - c|^2 to it, without ever writing the n x k score matrix: rows are
// processed in tiles of kRows, centres in packed panels of kLanes, and the
// running minimum lives in a few vector registers (the BLIS "6 x 16" layout
// for AVX2).  This is the fusion scikit-learn's Lloyd k-means gets from
// 256-row chunks; XLA:CPU cannot express it (its GEMM writes the scores to
// memory, and a loop of small GEMMs runs single-threaded).
//
// Semantics are those of bayesclust.kernels.nearest_center (the XLA path):
//   * centre j is visible to row i iff valid[j] != 0 and
//     birth[j] <= row_offset + i;
//   * d <= 4: scores are the exact differences sum_t (x_t - c_t)^2;
//     d > 4: scores are |c|^2 - 2 x.c (|x|^2 cannot change the argmin);
//   * the lowest index wins ties; the winner's distance is recomputed
//     exactly by direct differences; a row that sees no centre gets
//     (inf, 0).
//
// Rows are shared out in blocks to XLA's intra-op thread pool; the calling
// thread works too and can finish every block alone, so the call never
// waits on a pool thread that has not started.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <thread>
#include <vector>

#include "parallel.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

constexpr int kRows = 6;          // rows per register tile
constexpr int kRowVecs = 4;       // vectors of rows per rows-on-lanes tile
constexpr int kBlockRows = 384;   // rows per unit of work shared between threads
constexpr int kDirectMaxFeatures = 4;
// Up to this many features the rows sit on the vector lanes and the centres
// are looped over (no horizontal reductions, no spills); above it the
// centres sit on the lanes in packed panels (the register-blocked GEMM
// layout, which needs fewer loads per FMA).
constexpr int kRowsOnLanesMaxFeatures = 32;

template <typename T>
struct Vec;
template <>
struct Vec<float> {
  typedef float V __attribute__((vector_size(32)));
  typedef int32_t M __attribute__((vector_size(32)));
  static constexpr int W = 8;
};
template <>
struct Vec<double> {
  typedef double V __attribute__((vector_size(32)));
  typedef int64_t M __attribute__((vector_size(32)));
  static constexpr int W = 4;
};

template <typename T>
struct Problem {
  using V = typename Vec<T>::V;
  using M = typename Vec<T>::M;
  static constexpr int W = Vec<T>::W;
  static constexpr int kLanes = 2 * W;  // centres per packed panel
  using Lane = typename std::conditional<sizeof(T) == 4, int32_t, int64_t>::type;

  const T* X;
  const T* C;
  int64_t n, d;
  int32_t row_offset;
  bool direct, masked;
  int64_t n_panels;
  int32_t min_birth;              // earliest birth of a valid centre
  std::vector<int32_t> cols;      // compacted (valid) centre -> buffer index
  // Valid centre c (compacted order) of the layout the call uses: rows on
  // the lanes read `compact`, centre panels read `packed`.
  T* packed = nullptr;            // n_panels x d x kLanes, 32-byte aligned (d > 32)
  std::vector<T> compact;         // kv x d (d <= 32)
  std::vector<T> offset;          // n_panels x kLanes: |c|^2 (GEMM) or 0; +inf on padding
  std::vector<Lane> birth;        // n_panels x kLanes; never visible on padding
  T* out_dist;
  int32_t* out_index;
  // Optional per-cluster statistics of the assignment (sum_i w_i and
  // sum_i w_i x_i), accumulated per part of the rows in compacted centre
  // order and summed over the parts in order: the same bits whatever the
  // number of threads.
  const T* w = nullptr;
  int64_t blocks_per_part = 1;
  std::vector<T> part_weight;  // n_parts x kv
  std::vector<T> part_sums;    // n_parts x kv x d

  ~Problem() { std::free(packed); }

  void Pack(const int32_t* valid, const int32_t* birth_in, int64_t k) {
    for (int64_t j = 0; j < k; ++j)
      if (valid[j]) cols.push_back(static_cast<int32_t>(j));
    const int64_t kv = static_cast<int64_t>(cols.size());
    n_panels = (kv + kLanes - 1) / kLanes;
    const bool panels = d > kRowsOnLanesMaxFeatures;
    if (panels) {
      const size_t bytes = std::max<size_t>(32, n_panels * d * kLanes * sizeof(T));
      packed = static_cast<T*>(std::aligned_alloc(32, (bytes + 31) / 32 * 32));
      std::memset(packed, 0, bytes);
    } else {
      compact.reserve(kv * d);
    }
    offset.assign(n_panels * kLanes, std::numeric_limits<T>::infinity());
    birth.assign(n_panels * kLanes, std::numeric_limits<int32_t>::max());
    min_birth = std::numeric_limits<int32_t>::max();
    int32_t max_birth = std::numeric_limits<int32_t>::min();
    for (int64_t c = 0; c < kv; ++c) {
      const T* src = C + static_cast<int64_t>(cols[c]) * d;
      T sq = 0;
      for (int64_t p = 0; p < d; ++p) sq += src[p] * src[p];
      offset[c] = direct ? T(0) : sq;
      if (panels) {
        T* dst = packed + (c / kLanes) * d * kLanes + (c % kLanes);
        for (int64_t p = 0; p < d; ++p) dst[p * kLanes] = src[p];
      } else {
        compact.insert(compact.end(), src, src + d);
      }
      birth[c] = birth_in[cols[c]];
      min_birth = std::min(min_birth, birth_in[cols[c]]);
      max_birth = std::max(max_birth, birth_in[cols[c]]);
    }
    // Birth masks cost a compare per score; skip them when every valid
    // centre is visible to every row of this call.
    masked = kv > 0 && max_birth > row_offset;
  }

  // GEMM scores of one tile of kRows rows against one packed panel (d > 32
  // only, so never the exact-difference form), folded into the running
  // (best, index) of every lane.  kVecs = 1 handles a last panel holding at
  // most W centres (half the multiply-adds of a full, mostly padded panel).
  template <int kVecs>
  inline void Panel(const T* rows, int64_t pan, int32_t first_row, V (&best)[kRows][2],
                    M (&index)[kRows][2]) const {
    const T* cp = packed + pan * d * kLanes;
    V acc[kRows][kVecs];
    for (int r = 0; r < kRows; ++r)
      for (int v = 0; v < kVecs; ++v) acc[r][v] = V{};
    for (int64_t p = 0; p < d; ++p) {
      V c[kVecs];
      for (int v = 0; v < kVecs; ++v) c[v] = *reinterpret_cast<const V*>(cp + p * kLanes + v * W);
#pragma GCC unroll 6
      for (int r = 0; r < kRows; ++r) {
        const T x = rows[r * d + p];
        for (int v = 0; v < kVecs; ++v) acc[r][v] += x * c[v];
      }
    }
    const V inf = V{} + std::numeric_limits<T>::infinity();
    for (int v = 0; v < kVecs; ++v) {
      V off;  // std::vector storage is not 32-byte aligned
      std::memcpy(&off, &offset[pan * kLanes + v * W], sizeof(V));
      M lane, born{};
      for (int l = 0; l < W; ++l) {
        lane[l] = static_cast<Lane>(pan * kLanes + v * W + l);
        if (masked) born[l] = birth[pan * kLanes + v * W + l];
      }
#pragma GCC unroll 6
      for (int r = 0; r < kRows; ++r) {
        V s = off - T(2) * acc[r][v];
        if (masked) s = born <= M{} + static_cast<Lane>(first_row + r) ? s : inf;
        const M better = s < best[r][v];
        best[r][v] = better ? s : best[r][v];
        index[r][v] = better ? lane : index[r][v];
      }
    }
  }

  void Tile(int64_t start, T* weight, T* sums) const {
    const int64_t count = std::min<int64_t>(kRows, n - start);
    const T* rows = X + start * d;
    std::vector<T> pad;
    if (count < kRows) {  // last partial tile: zero rows, results dropped
      pad.assign(kRows * d, T(0));
      std::memcpy(pad.data(), rows, count * d * sizeof(T));
      rows = pad.data();
    }
    const V inf = V{} + std::numeric_limits<T>::infinity();
    V best[kRows][2];
    M index[kRows][2];
    for (int r = 0; r < kRows; ++r) {
      best[r][0] = best[r][1] = inf;
      index[r][0] = index[r][1] = M{};
    }
    // The next tile's rows: six interleaved streams the hardware prefetcher
    // does not follow far enough ahead on its own.
    const int64_t ahead = std::min<int64_t>(n - start - count, kRows) * d;
    for (int64_t off = 0; off < ahead; off += 64 / sizeof(T))
      __builtin_prefetch(X + (start + count) * d + off);
    const int32_t first_row = row_offset + static_cast<int32_t>(start);
    const int64_t last_lanes = static_cast<int64_t>(cols.size()) - (n_panels - 1) * kLanes;
    for (int64_t pan = 0; pan < n_panels; ++pan) {
      if (pan == n_panels - 1 && last_lanes <= W)
        Panel<1>(rows, pan, first_row, best, index);
      else
        Panel<2>(rows, pan, first_row, best, index);
    }
    for (int64_t r = 0; r < count; ++r) {
      T b = std::numeric_limits<T>::infinity();
      int64_t bi = 0;
      for (int h = 0; h < 2; ++h)
        for (int l = 0; l < W; ++l) {
          const T s = best[r][h][l];
          const int64_t i = index[r][h][l];
          if (s < b || (s == b && i < bi)) {
            b = s;
            bi = i;
          }
        }
      Finish(start + r, bi, weight, sums);
    }
  }

  // |x - c|^2 by direct differences.  Vector partial sums: a scalar loop
  // is one dependent chain of d FMAs (about 5 cycles each), which at
  // d = 128 cost more than the row's share of the whole GEMM.
  inline T SquaredDistance(const T* x, const T* c) const {
    V acc0{}, acc1{};
    int64_t p = 0;
    for (; p + 2 * W <= d; p += 2 * W) {
      V x0, x1, c0, c1;
      std::memcpy(&x0, x + p, sizeof(V));
      std::memcpy(&x1, x + p + W, sizeof(V));
      std::memcpy(&c0, c + p, sizeof(V));
      std::memcpy(&c1, c + p + W, sizeof(V));
      const V t0 = x0 - c0, t1 = x1 - c1;
      acc0 += t0 * t0;
      acc1 += t1 * t1;
    }
    acc0 += acc1;
    T exact = 0;
    for (int l = 0; l < W; ++l) exact += acc0[l];
    for (; p < d; ++p) {
      const T diff = x[p] - c[p];
      exact += diff * diff;
    }
    return exact;
  }

  // Row `row` is assigned to compacted centre `bi`: write its index and
  // exact distance (or (inf, 0) when it sees no centre).
  inline void Finish(int64_t row, int64_t bi, T* weight, T* sums) const {
    if (cols.empty() || row_offset + row < min_birth) {
      out_dist[row] = std::numeric_limits<T>::infinity();
      out_index[row] = 0;
      return;
    }
    const int32_t col = cols[bi];
    const T* x = X + row * d;
    const T* c = C + static_cast<int64_t>(col) * d;
    out_dist[row] = SquaredDistance(x, c);
    out_index[row] = col;
    if (weight != nullptr) {
      const T wi = w[row];
      weight[bi] += wi;
      T* s = sums + bi * d;
      for (int64_t p = 0; p < d; ++p) s[p] += wi * x[p];
    }
  }

  // Rows on the lanes: a tile of kRowVecs x W rows, transposed to (d, rows),
  // against every valid centre in turn (D = d when d is a small constant).
  template <bool kDirect, bool kMasked, int D>
  void RowTile(int64_t start, T* weight, T* sums) const {
    constexpr int TR = kRowVecs * W;
    const int64_t dd = D > 0 ? D : d;
    const int64_t count = std::min<int64_t>(TR, n - start);
    alignas(32) T xt[kRowsOnLanesMaxFeatures * TR];
    for (int64_t p = 0; p < dd; ++p)
      for (int64_t i = 0; i < TR; ++i) xt[p * TR + i] = i < count ? X[(start + i) * dd + p] : T(0);
    const V inf = V{} + std::numeric_limits<T>::infinity();
    V best[kRowVecs];
    M index[kRowVecs], row[kRowVecs];
    for (int r = 0; r < kRowVecs; ++r) {
      best[r] = inf;
      index[r] = M{};
      for (int l = 0; l < W; ++l) row[r][l] = row_offset + start + r * W + l;
    }
    const int64_t kv = static_cast<int64_t>(cols.size());
    for (int64_t j = 0; j < kv; ++j) {
      const T* c = compact.data() + j * dd;
      V acc[kRowVecs];
      for (int r = 0; r < kRowVecs; ++r) acc[r] = V{};
      for (int64_t p = 0; p < dd; ++p) {
        const V cv = V{} + c[p];
#pragma GCC unroll 4
        for (int r = 0; r < kRowVecs; ++r) {
          const V x = *reinterpret_cast<const V*>(xt + p * TR + r * W);
          if (kDirect) {
            const V t = x - cv;
            acc[r] += t * t;
          } else {
            acc[r] += x * cv;
          }
        }
      }
      const M jv = M{} + static_cast<Lane>(j);
#pragma GCC unroll 4
      for (int r = 0; r < kRowVecs; ++r) {
        V s = kDirect ? acc[r] : offset[j] - T(2) * acc[r];
        if (kMasked) s = (M{} + birth[j]) <= row[r] ? s : inf;
        const M better = s < best[r];
        best[r] = better ? s : best[r];
        index[r] = better ? jv : index[r];
      }
    }
    for (int64_t i = 0; i < count; ++i) Finish(start + i, index[i / W][i % W], weight, sums);
  }

  template <bool kDirect, bool kMasked>
  void RowTiles(int64_t first, int64_t last, T* weight, T* sums) const {
    constexpr int TR = kRowVecs * W;
    for (int64_t start = first; start < last; start += TR) {
      switch (d) {
        case 1: RowTile<kDirect, kMasked, 1>(start, weight, sums); break;
        case 2: RowTile<kDirect, kMasked, 2>(start, weight, sums); break;
        case 3: RowTile<kDirect, kMasked, 3>(start, weight, sums); break;
        case 4: RowTile<kDirect, kMasked, 4>(start, weight, sums); break;
        default: RowTile<kDirect, kMasked, 0>(start, weight, sums);
      }
    }
  }

  // One part of the rows: blocks_per_part blocks of kBlockRows rows.
  void Part(int64_t part) {
    const int64_t first = part * blocks_per_part * kBlockRows;
    const int64_t last = std::min<int64_t>(n, first + blocks_per_part * kBlockRows);
    const int64_t kv = static_cast<int64_t>(cols.size());
    T* weight = w == nullptr ? nullptr : part_weight.data() + part * kv;
    T* sums = w == nullptr ? nullptr : part_sums.data() + part * kv * d;
    if (d <= kRowsOnLanesMaxFeatures) {
      if (direct)
        masked ? RowTiles<true, true>(first, last, weight, sums)
               : RowTiles<true, false>(first, last, weight, sums);
      else
        masked ? RowTiles<false, true>(first, last, weight, sums)
               : RowTiles<false, false>(first, last, weight, sums);
      return;
    }
    for (int64_t start = first; start < last; start += kRows) Tile(start, weight, sums);
  }
};

// Parts of the rows a call with statistics splits into, up to trailing
// zero-weight rows (each holds a kv x d partial sum; a function of the rows
// and weights only, never of the thread count).
constexpr int64_t kMaxParts = 16;

template <typename T>
ffi::Error Run(ffi::ThreadPool& pool, ffi::AnyBuffer& X, ffi::AnyBuffer& C,
               ffi::Buffer<ffi::S32>& valid, ffi::Buffer<ffi::S32>& birth,
               ffi::Buffer<ffi::S32>& row_offset, ffi::Result<ffi::AnyBuffer>& dist,
               ffi::Result<ffi::Buffer<ffi::S32>>& index, const T* w, T* out_weight,
               T* out_sums) {
  auto xd = X.dimensions();
  auto cd = C.dimensions();
  if (xd.size() != 2 || cd.size() != 2 || xd[1] != cd[1])
    return ffi::Error::InvalidArgument("nearest_center: X must be (n, d) and C (k, d)");
  auto problem = std::make_shared<Problem<T>>();
  Problem<T>& pr = *problem;
  pr.X = static_cast<const T*>(X.untyped_data());
  pr.C = static_cast<const T*>(C.untyped_data());
  pr.n = xd[0];
  pr.d = xd[1];
  pr.row_offset = row_offset.typed_data()[0];
  pr.direct = pr.d <= kDirectMaxFeatures;
  pr.out_dist = static_cast<T*>(dist->untyped_data());
  pr.out_index = index->typed_data();
  pr.Pack(valid.typed_data(), birth.typed_data(), cd[0]);
  const int64_t kv = static_cast<int64_t>(pr.cols.size());
  const int64_t n_blocks = (pr.n + kBlockRows - 1) / kBlockRows;
  int64_t n_parts = n_blocks;
  if (w != nullptr) {
    pr.w = w;
    // The parts are sized from the rows up to the last one of nonzero weight:
    // trailing zero-weight rows (a fit padded to a shape bucket) then only add
    // exact zeros, in extra parts or at the end of the last one, and the sums
    // equal those of the unpadded rows bit for bit.
    int64_t n_weighted = pr.n;
    while (n_weighted > 0 && w[n_weighted - 1] == T(0)) --n_weighted;
    const int64_t weighted_blocks = std::max<int64_t>(1, (n_weighted + kBlockRows - 1) / kBlockRows);
    pr.blocks_per_part = std::max<int64_t>(1, (weighted_blocks + kMaxParts - 1) / kMaxParts);
    n_parts = (n_blocks + pr.blocks_per_part - 1) / pr.blocks_per_part;
    pr.part_weight.assign(n_parts * kv, T(0));
    pr.part_sums.assign(n_parts * kv * pr.d, T(0));
  }
  if (pr.n > 0) {
    bayesclust::ParallelFor(pool, n_parts, [problem](int64_t part) { problem->Part(part); });
  }
  if (w != nullptr) {
    const int64_t d = pr.d;
    std::fill(out_weight, out_weight + cd[0], T(0));
    std::fill(out_sums, out_sums + cd[0] * d, T(0));
    for (int64_t part = 0; part < n_parts; ++part)
      for (int64_t c = 0; c < kv; ++c) {
        out_weight[pr.cols[c]] += pr.part_weight[part * kv + c];
        const T* src = pr.part_sums.data() + (part * kv + c) * d;
        T* dst = out_sums + static_cast<int64_t>(pr.cols[c]) * d;
        for (int64_t p = 0; p < d; ++p) dst[p] += src[p];
      }
  }
  return ffi::Error::Success();
}

template <typename T>
ffi::Error NearestCenterImpl(ffi::ThreadPool pool, ffi::AnyBuffer X, ffi::AnyBuffer C,
                             ffi::Buffer<ffi::S32> valid, ffi::Buffer<ffi::S32> birth,
                             ffi::Buffer<ffi::S32> row_offset, ffi::Result<ffi::AnyBuffer> dist,
                             ffi::Result<ffi::Buffer<ffi::S32>> index) {
  return Run<T>(pool, X, C, valid, birth, row_offset, dist, index, nullptr, nullptr, nullptr);
}

template <typename T>
ffi::Error NearestCenterStatsImpl(ffi::ThreadPool pool, ffi::AnyBuffer X, ffi::AnyBuffer C,
                                  ffi::Buffer<ffi::S32> valid, ffi::Buffer<ffi::S32> birth,
                                  ffi::Buffer<ffi::S32> row_offset,
                                  ffi::Result<ffi::AnyBuffer> dist,
                                  ffi::Result<ffi::Buffer<ffi::S32>> index, ffi::AnyBuffer w,
                                  ffi::Result<ffi::AnyBuffer> weight,
                                  ffi::Result<ffi::AnyBuffer> sums) {
  return Run<T>(pool, X, C, valid, birth, row_offset, dist, index,
                static_cast<const T*>(w.untyped_data()), static_cast<T*>(weight->untyped_data()),
                static_cast<T*>(sums->untyped_data()));
}

}  // namespace

// The stats variant binds the same operands, then the weights and the two
// statistics (XLA FFI decodes arguments and results by their own positions).
#define BAYESCLUST_BIND_NEAREST                   \
  ffi::Ffi::Bind()                                \
      .Ctx<ffi::ThreadPool>()                     \
      .Arg<ffi::AnyBuffer>()   /* X (n, d) */     \
      .Arg<ffi::AnyBuffer>()   /* C (k, d) */     \
      .Arg<ffi::Buffer<ffi::S32>>() /* valid */   \
      .Arg<ffi::Buffer<ffi::S32>>() /* birth */   \
      .Arg<ffi::Buffer<ffi::S32>>() /* offset */  \
      .Ret<ffi::AnyBuffer>()   /* dist (n,) */    \
      .Ret<ffi::Buffer<ffi::S32>>() /* index */
#define BAYESCLUST_BIND_NEAREST_STATS             \
  BAYESCLUST_BIND_NEAREST                         \
      .Arg<ffi::AnyBuffer>()   /* w (n,) */       \
      .Ret<ffi::AnyBuffer>()   /* weight (k,) */  \
      .Ret<ffi::AnyBuffer>()   /* sums (k, d) */

XLA_FFI_DEFINE_HANDLER_SYMBOL(BayesclustNearestCenterF32, NearestCenterImpl<float>,
                              BAYESCLUST_BIND_NEAREST);
XLA_FFI_DEFINE_HANDLER_SYMBOL(BayesclustNearestCenterF64, NearestCenterImpl<double>,
                              BAYESCLUST_BIND_NEAREST);
XLA_FFI_DEFINE_HANDLER_SYMBOL(BayesclustNearestCenterStatsF32, NearestCenterStatsImpl<float>,
                              BAYESCLUST_BIND_NEAREST_STATS);
XLA_FFI_DEFINE_HANDLER_SYMBOL(BayesclustNearestCenterStatsF64, NearestCenterStatsImpl<double>,
                              BAYESCLUST_BIND_NEAREST_STATS);
