/// @file
/// The inner loop of the io checksum: the mix of a run of elements whose global word indices
/// grow by a constant. Scalar everywhere; on x86-64 processors with AVX2 four words at a time,
/// chosen when the program runs, so that it needs no compiler flag. Both give the same value:
/// a 64-bit multiply done as three 32-bit ones is exact modulo 2^64, and the lanes' sums add up
/// to the scalar sum modulo 2^64. On this project's Xeon the scalar loop takes two to three
/// times a plain pass over the same memory (a 64-bit multiply per word, which compilers do not
/// vectorize without AVX-512), the AVX2 loop about 1.2 times (64 MiB on one core: 14-17 ms,
/// 8-10 ms, a pass 7-8 ms, 2026-12-02).
#ifndef HETERO_IO_DETAIL_CHECKSUM_RUN_HPP
#define HETERO_IO_DETAIL_CHECKSUM_RUN_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define HETERO_IO_CHECKSUM_AVX2 1
#include <immintrin.h>
#else
#define HETERO_IO_CHECKSUM_AVX2 0
#endif

namespace hetero::detail {

/// The factor that spreads a word's index over 64 bits before it meets the word.
inline constexpr std::uint64_t checksum_index_factor = 0x9e3779b97f4a7c15ULL;

/// The multiplier of the round that ends a word's mix.
inline constexpr std::uint64_t checksum_round_factor = 0xbf58476d1ce4e5b9ULL;

/// The multiply-xorshift round that ends a word's mix.
inline std::uint64_t checksum_finish(std::uint64_t x) {
  x *= checksum_round_factor;
  return x ^ (x >> 31);
}

/// The mix of one 8-byte word `word` of an element, `index` the word's global index (element
/// index times words per element, plus the word): one multiply-xorshift round, cheap next to a
/// file system's bandwidth, and a changed bit changes the sum.
inline std::uint64_t checksum_mix(std::uint64_t word, std::uint64_t index) {
  return checksum_finish(word ^ (index * checksum_index_factor));
}

/// Word `w` of the element of `size` bytes at `bytes`, zero-padded past its end.
inline std::uint64_t checksum_word(const unsigned char* bytes, std::size_t size, std::size_t w) {
  std::uint64_t word = 0;
  std::memcpy(&word, bytes + 8 * w, size - 8 * w < 8 ? size - 8 * w : 8);
  return word;
}

/// The scalar loop: the sum over elements k < n of `size` bytes from `bytes` of
/// checksum_finish(word w ^ (scaled + k * step + w * checksum_index_factor)), `scaled` being the
/// first element's first word index times checksum_index_factor.
inline std::uint64_t checksum_run_scalar(const unsigned char* bytes, std::int64_t n, std::size_t size,
                                         std::uint64_t scaled, std::uint64_t step) {
  const std::size_t words = (size + 7) / 8;
  std::uint64_t sum = 0;
  for (std::int64_t k = 0; k < n; ++k, scaled += step, bytes += size)
    for (std::size_t w = 0; w < words; ++w)
      sum += checksum_finish(checksum_word(bytes, size, w) ^ (scaled + w * checksum_index_factor));
  return sum;
}

#if HETERO_IO_CHECKSUM_AVX2

/// Whether this processor (and its operating system) runs AVX2.
inline bool checksum_has_avx2() {
  static const bool has = __builtin_cpu_supports("avx2") != 0;
  return has;
}

/// The mix of four words `word` with their indices times the index factor `index`. A word times
/// the round's factor modulo 2^64 is lo*lo + ((hi*lo + lo*hi) << 32) in 32-bit halves.
__attribute__((target("avx2"))) inline __m256i checksum_mix_avx2(__m256i word, __m256i index) {
  const __m256i low = _mm256_set1_epi64x(static_cast<long long>(checksum_round_factor & 0xffffffffULL));
  const __m256i high = _mm256_set1_epi64x(static_cast<long long>(checksum_round_factor >> 32));
  const __m256i x = _mm256_xor_si256(word, index);
  const __m256i cross =
      _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(x, 32), low), _mm256_mul_epu32(x, high));
  const __m256i product = _mm256_add_epi64(_mm256_mul_epu32(x, low), _mm256_slli_epi64(cross, 32));
  return _mm256_xor_si256(product, _mm256_srli_epi64(product, 31));
}

/// Four lanes, lane 0 first (_mm256_set_epi64x takes them from the highest).
__attribute__((target("avx2"))) inline __m256i checksum_lanes_avx2(std::uint64_t a, std::uint64_t b,
                                                                   std::uint64_t c, std::uint64_t d) {
  return _mm256_set_epi64x(static_cast<long long>(d), static_cast<long long>(c), static_cast<long long>(b),
                           static_cast<long long>(a));
}

/// checksum_run_scalar four words at a time, for elements of 4, 8 or 16 bytes (other sizes,
/// and the last elements: the scalar loop).
__attribute__((target("avx2"))) inline std::uint64_t checksum_run_avx2(const unsigned char* bytes, std::int64_t n,
                                                                       std::size_t size, std::uint64_t scaled,
                                                                       std::uint64_t step) {
  if (size != 4 && size != 8 && size != 16) return checksum_run_scalar(bytes, n, size, scaled, step);
  __m256i sum = _mm256_setzero_si256();
  std::int64_t k = 0;
  if (size == 16) {  // two elements a step, whose two words sit one index factor apart
    const std::uint64_t f = checksum_index_factor;
    __m256i index = checksum_lanes_avx2(scaled, scaled + f, scaled + step, scaled + step + f);
    const __m256i advance = _mm256_set1_epi64x(static_cast<long long>(2 * step));
    for (; k + 2 <= n; k += 2, index = _mm256_add_epi64(index, advance))
      sum = _mm256_add_epi64(
          sum, checksum_mix_avx2(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(bytes + k * 16)), index));
  } else {
    __m256i index = checksum_lanes_avx2(scaled, scaled + step, scaled + 2 * step, scaled + 3 * step);
    const __m256i advance = _mm256_set1_epi64x(static_cast<long long>(4 * step));
    if (size == 8) {
      for (; k + 4 <= n; k += 4, index = _mm256_add_epi64(index, advance))
        sum = _mm256_add_epi64(
            sum, checksum_mix_avx2(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(bytes + k * 8)), index));
    } else {  // 4 bytes, zero-extended to a word
      for (; k + 4 <= n; k += 4, index = _mm256_add_epi64(index, advance))
        sum = _mm256_add_epi64(
            sum,
            checksum_mix_avx2(
                _mm256_cvtepu32_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + k * 4))), index));
    }
  }
  alignas(32) std::uint64_t part[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(part), sum);
  return part[0] + part[1] + part[2] + part[3] +
         checksum_run_scalar(bytes + k * static_cast<std::int64_t>(size), n - k, size,
                             scaled + static_cast<std::uint64_t>(k) * step, step);
}

#endif  // HETERO_IO_CHECKSUM_AVX2

/// Whether checksum_run has a vector loop for this processor.
inline bool checksum_simd_available() {
#if HETERO_IO_CHECKSUM_AVX2
  return checksum_has_avx2();
#else
  return false;
#endif
}

/// The fastest loop this processor runs, when `simd`; the scalar one otherwise (tests compare
/// the two).
inline std::uint64_t checksum_run(const unsigned char* bytes, std::int64_t n, std::size_t size,
                                  std::uint64_t scaled, std::uint64_t step, bool simd) {
#if HETERO_IO_CHECKSUM_AVX2
  if (simd && checksum_has_avx2()) return checksum_run_avx2(bytes, n, size, scaled, step);
#else
  (void)simd;
#endif
  return checksum_run_scalar(bytes, n, size, scaled, step);
}

}  // namespace hetero::detail

#endif  // HETERO_IO_DETAIL_CHECKSUM_RUN_HPP
