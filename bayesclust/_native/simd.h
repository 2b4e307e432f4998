// Helpers shared by the native Gibbs kernels (gibbs.cc, gibbs_gaussian.cc): a
// counter-based random stream (SplitMix64) and its uniforms,
// a vector type of one AVX register, exp of non-positive and log of
// at-least-one arguments lane by lane, and an any-lane test of a mask.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace bayesclust {

// ---- Random numbers: SplitMix64 on a counter ----------------------------

// Output j of the SplitMix64 stream started at `seed` (Steele, Lea & Flood
// 2014; Java's SplittableRandom): the state after j + 1 steps of the Weyl
// sequence, through the variant-13 finaliser.  A counter-based generator: any
// output is computed directly, so the draws do not depend on threading.
inline uint64_t SplitMix64(uint64_t seed, uint64_t j) {
  uint64_t z = seed + (j + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniforms on (0, 1]: the top 24 (float) or 53 (double) bits, plus one ulp.
template <typename T>
inline T Unit(uint64_t bits);
template <>
inline float Unit<float>(uint64_t bits) {
  return static_cast<float>((bits >> 40) + 1) * 0x1p-24f;
}
template <>
inline double Unit<double>(uint64_t bits) {
  return static_cast<double>((bits >> 11) + 1) * 0x1p-53;
}

// A vector of `Lanes` values of T (GCC vector extensions; the kernel uses 32
// bytes, one AVX register).
template <typename T, int Lanes>
struct Simd {
  static constexpr int W = Lanes;
  typedef T V __attribute__((vector_size(Lanes * sizeof(T))));
  typedef typename std::conditional<sizeof(T) == 4, int32_t, int64_t>::type Int;
  typedef Int I __attribute__((vector_size(Lanes * sizeof(T))));
};

// exp(x) for x <= 0 (-inf gives 0), float: Cephes' expf (Moshier) --
// x = k ln 2 + r, |r| <= ln(2)/2, k rounded to nearest by the 1.5 * 2^23
// shifter, exp(r) by its degree-6 polynomial, 2^k put into the exponent bits;
// relative error below 1e-7.  Below -87, where 2^k would leave the normal
// range, the result is 0 (e^-87 ~ 1.6e-38: not a weight a draw can see next
// to the largest, which is 1).
template <typename V, typename I>
__attribute__((always_inline)) inline V ExpNonPositiveF32(V x) {
  const I dead = x < -87.0f;
  const V shifter = V{} + 12582912.0f;  // 1.5 * 2^23
  const V big = x * 1.44269504088896341f + shifter;
  const V kf = big - shifter;
  V r = x - kf * 0.693359375f;
  r = r + kf * 2.12194440e-4f;
  V y = V{} + 1.9875691500e-4f;
  y = y * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * (r * r) + r + 1.0f;
  I bits;
  std::memcpy(&bits, &big, sizeof(bits));
  bits = (bits - (0x4B400000 - 127)) << 23;  // 2^k: k sits in big's low mantissa bits
  V scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return dead ? V{} : y * scale;
}

template <typename T, int Lanes>
__attribute__((always_inline)) inline typename Simd<T, Lanes>::V ExpNonPositive(
    typename Simd<T, Lanes>::V x) {
  if constexpr (sizeof(T) == 4) {
    return ExpNonPositiveF32<typename Simd<T, Lanes>::V, typename Simd<T, Lanes>::I>(x);
  } else {  // double: the library's exp lane by lane (exact, as XLA's)
    typename Simd<T, Lanes>::V y;
    for (int l = 0; l < Lanes; ++l) y[l] = std::exp(x[l]);
    return y;
  }
}

// Whether any lane of a comparison mask is set (movmskps on each AVX half).
template <typename I>
__attribute__((always_inline)) inline bool AnyTrue(I mask) {
  typedef float Half __attribute__((vector_size(32)));
  constexpr int kHalves = sizeof(I) / 32;
  Half h[kHalves];
  std::memcpy(h, &mask, sizeof(mask));
  int any = 0;
  for (int j = 0; j < kHalves; ++j) any |= __builtin_ia32_movmskps256(h[j]);
  return any != 0;
}

// log(x) for x >= 1 (the argument of a log1p written as log(1 + r), r >= 0),
// float: Cephes' logf (Moshier) -- x = m 2^e with m in [sqrt(1/2), sqrt(2)),
// log(m) by its degree-9 polynomial in m - 1, e ln 2 in two parts; relative
// error below 1e-7 (so an absolute error below 1e-7 log x).  Double: the
// library's log lane by lane.
template <typename V, typename I>
__attribute__((always_inline)) inline V LogAtLeastOneF32(V x) {
  I bits;
  std::memcpy(&bits, &x, sizeof(bits));
  I e = ((bits >> 23) & 0xff) - 126;
  const I mbits = (bits & 0x007fffff) | 0x3f000000;  // the mantissa in [0.5, 1)
  V m;
  std::memcpy(&m, &mbits, sizeof(m));
  const I small = m < 0.707106781186547524f;
  e = e + small;  // true lanes are -1
  m = small ? m + m - 1.0f : m - 1.0f;
  V ef = __builtin_convertvector(e, V);
  const V z = m * m;
  V y = V{} + 7.0376836292e-2f;
  y = y * m - 1.1514610310e-1f;
  y = y * m + 1.1676998740e-1f;
  y = y * m - 1.2420140846e-1f;
  y = y * m + 1.4249322787e-1f;
  y = y * m - 1.6668057665e-1f;
  y = y * m + 2.0000714765e-1f;
  y = y * m - 2.4999993993e-1f;
  y = y * m + 3.3333331174e-1f;
  y = y * m * z;
  y += ef * -2.12194440e-4f;
  y += z * -0.5f;
  return m + y + ef * 0.693359375f;
}

template <typename T, int Lanes>
__attribute__((always_inline)) inline typename Simd<T, Lanes>::V LogAtLeastOne(
    typename Simd<T, Lanes>::V x) {
  if constexpr (sizeof(T) == 4) {
    return LogAtLeastOneF32<typename Simd<T, Lanes>::V, typename Simd<T, Lanes>::I>(x);
  } else {
    typename Simd<T, Lanes>::V y;
    for (int l = 0; l < Lanes; ++l) y[l] = std::log(x[l]);
    return y;
  }
}

}  // namespace bayesclust
