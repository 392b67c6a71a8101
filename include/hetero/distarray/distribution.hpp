/// @file
/// How an index range is split over the processes of one grid axis (XcalableMP's
/// `distribute` clause): block, cyclic, block-cyclic(w), gen-block; and the queries on one
/// distributed axis: owner of an index, local sizes and ranges, global <-> local maps.
#ifndef HETERO_DISTARRAY_DISTRIBUTION_HPP
#define HETERO_DISTARRAY_DISTRIBUTION_HPP

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/distarray/detail/axis_map.hpp"

namespace hetero {

/// The kinds of distribution.
enum class distribution_kind {
  block,         ///< one contiguous block per part; sizes differ by at most one
  cyclic,        ///< index i on part i mod P
  block_cyclic,  ///< blocks of w indices dealt round-robin
  gen_block      ///< one contiguous block per part, sizes given
};

/// "block", "cyclic", "block_cyclic" or "gen_block".
inline const char* to_string(distribution_kind kind) noexcept {
  switch (kind) {
    case distribution_kind::block: return "block";
    case distribution_kind::cyclic: return "cyclic";
    case distribution_kind::block_cyclic: return "block_cyclic";
    case distribution_kind::gen_block: return "gen_block";
  }
  return "unknown";
}

namespace detail {

/// The balanced block formula, hetero's only one: part `p` of `parts` starts at index
/// p * (n / parts) + min(p, n % parts), so sizes differ by at most one and the first
/// n % parts parts hold the larger blocks. `p` may equal `parts` (gives `n`).
constexpr std::int64_t block_begin(std::int64_t n, int parts, int p) noexcept {
  return p * (n / parts) + std::min<std::int64_t>(p, n % parts);
}

/// The part whose balanced block holds index `g` of `n`.
constexpr int block_owner(std::int64_t n, int parts, std::int64_t g) noexcept {
  const std::int64_t q = n / parts, r = n % parts, boundary = r * (q + 1);
  return static_cast<int>(g < boundary ? g / (q + 1) : r + (g - boundary) / q);
}

}  // namespace detail

/// A distribution format, not yet bound to an extent or a number of parts.
/// <!-- snippet: fragment -->
/// @code
/// auto rows = hetero::distribution::block();
/// auto cols = hetero::distribution::block_cyclic(16);
/// auto uneven = hetero::distribution::gen_block({300, 100, 624});
/// @endcode
class distribution {
 public:
  /// Block, the default.
  distribution() noexcept = default;
  /// Balanced blocks: part p of P gets N/P indices, plus one when p < N mod P (so no part is
  /// empty while N >= P, unlike the ceil(N/P) blocks of XcalableMP).
  static distribution block() noexcept { return distribution(distribution_kind::block, 0, {}); }
  /// Index i goes to part i mod P.
  static distribution cyclic() noexcept { return distribution(distribution_kind::cyclic, 1, {}); }
  /// Blocks of `width` indices dealt round-robin: index i goes to part (i / width) mod P.
  static distribution block_cyclic(std::int64_t width) {
    HETERO_EXPECTS(width >= 1, "block_cyclic width is ", width, "; allowed: 1 or more");
    return distribution(distribution_kind::block_cyclic, width, {});
  }
  /// Explicit block sizes, one per part in part order (zeros allowed); they must add up to
  /// the extent of the axis it distributes.
  static distribution gen_block(std::vector<std::int64_t> sizes) {
    for (std::size_t p = 0; p < sizes.size(); ++p)
      HETERO_EXPECTS(sizes[p] >= 0, "gen_block size of part ", p, " is ", sizes[p], "; sizes must be >= 0");
    return distribution(distribution_kind::gen_block, 0, std::move(sizes));
  }

  /// The kind.
  [[nodiscard]] distribution_kind kind() const noexcept { return m_kind; }
  /// The block width: w for block_cyclic, 1 for cyclic, 0 for the contiguous kinds.
  [[nodiscard]] std::int64_t width() const noexcept { return m_width; }
  /// The sizes of a gen_block distribution (empty for the other kinds).
  [[nodiscard]] const std::vector<std::int64_t>& sizes() const noexcept { return m_sizes; }

  /// Equal when the kind, the width and the gen_block sizes are equal.
  friend bool operator==(const distribution&, const distribution&) = default;

 private:
  distribution(distribution_kind kind, std::int64_t width, std::vector<std::int64_t> sizes)
      : m_kind(kind), m_width(width), m_sizes(std::move(sizes)) {}

  distribution_kind m_kind = distribution_kind::block;
  std::int64_t m_width = 0;
  std::vector<std::int64_t> m_sizes;
};

/// One axis of `extent` indices distributed over `parts` parts. Every query is O(1), except
/// owner_of on a gen-block axis (O(log parts)).
/// <!-- snippet: fragment -->
/// @code
/// hetero::axis_distribution axis(10, 3, hetero::distribution::block());  // sizes 4, 3, 3
/// int owner = axis.owner_of(5);             // 1
/// std::int64_t local = axis.to_local(5);    // 1
/// @endcode
class axis_distribution {
 public:
  /// Binds `format` to an extent and a number of parts; throws `distribution_error` when a
  /// gen-block does not fit (wrong number of sizes, sum other than `extent`).
  axis_distribution(std::int64_t extent, int parts, distribution format) : m_format(std::move(format)) {
    HETERO_EXPECTS(extent >= 0, "axis extent is ", extent, "; allowed: 0 or more");
    HETERO_EXPECTS(parts >= 1, "number of parts is ", parts, "; allowed: 1 or more");
    m_extent = extent;
    m_parts = parts;
    if (kind() == distribution_kind::block) {
      m_offsets.resize(static_cast<std::size_t>(parts) + 1);
      for (int p = 0; p <= parts; ++p)
        m_offsets[static_cast<std::size_t>(p)] = detail::block_begin(extent, parts, p);
    } else if (kind() == distribution_kind::gen_block) {
      const auto& sizes = m_format.sizes();
      if (sizes.size() != static_cast<std::size_t>(parts))
        detail::raise<distribution_error>("gen_block has ", sizes.size(),
                                          " sizes but the axis is distributed over ", parts,
                                          " parts; give one size per part");
      const std::int64_t sum = std::accumulate(sizes.begin(), sizes.end(), std::int64_t{0});
      if (sum != extent)
        detail::raise<distribution_error>("gen_block sizes sum to ", sum, " but the axis has ", extent,
                                          " indices; the sizes must add up to the extent");
      m_offsets.assign(1, 0);
      for (auto s : sizes) m_offsets.push_back(m_offsets.back() + s);
    }
  }

  /// The number of indices.
  [[nodiscard]] std::int64_t extent() const noexcept { return m_extent; }
  /// The number of parts.
  [[nodiscard]] int parts() const noexcept { return m_parts; }
  /// The distribution format.
  [[nodiscard]] const distribution& format() const noexcept { return m_format; }
  /// The kind of distribution.
  [[nodiscard]] distribution_kind kind() const noexcept { return m_format.kind(); }
  /// Whether every part owns one contiguous interval (block, gen-block): only such axes may
  /// have shadows.
  [[nodiscard]] bool is_contiguous() const noexcept { return m_format.width() == 0; }

  /// The part that owns global index `g`.
  [[nodiscard]] int owner_of(std::int64_t g) const {
    check_index(g);
    if (kind() == distribution_kind::gen_block)
      return static_cast<int>(std::upper_bound(m_offsets.begin(), m_offsets.end(), g) - m_offsets.begin()) - 1;
    if (kind() == distribution_kind::block) return detail::block_owner(m_extent, m_parts, g);
    return static_cast<int>((g / m_format.width()) % m_parts);
  }

  /// How many indices part `p` owns.
  [[nodiscard]] std::int64_t local_size(int p) const {
    check_part(p);
    if (is_contiguous())
      return m_offsets[static_cast<std::size_t>(p) + 1] - m_offsets[static_cast<std::size_t>(p)];
    return owned_below(p, m_extent);
  }

  /// The local index of global index `g` in its owner's block.
  [[nodiscard]] std::int64_t to_local(std::int64_t g) const {
    check_index(g);
    return map(owner_of(g)).to_local(g);
  }

  /// The global index of local index `l` of part `p`.
  [[nodiscard]] std::int64_t to_global(int p, std::int64_t l) const {
    const std::int64_t size = local_size(p);
    HETERO_EXPECTS(l >= 0 && l < size, "local index ", l, " is outside part ", p, "'s block of ", size,
                   " indices; allowed: 0 to ", size - 1);
    return map(p).to_global(l);
  }

  /// How many global indices below `g` part `p` owns (g is clamped to [0, extent]); the local
  /// index of the first owned index at or above `g`.
  [[nodiscard]] std::int64_t owned_below(int p, std::int64_t g) const {
    check_part(p);
    g = std::clamp<std::int64_t>(g, 0, m_extent);
    if (is_contiguous()) {
      const auto begin = m_offsets[static_cast<std::size_t>(p)], end = m_offsets[static_cast<std::size_t>(p) + 1];
      return std::clamp<std::int64_t>(g, begin, end) - begin;
    }
    const std::int64_t w = m_format.width(), cycle = w * m_parts;
    return (g / cycle) * w + std::clamp<std::int64_t>(g % cycle - p * w, 0, w);
  }

  /// The local indices [first, last) of the indices part `p` owns in the global range
  /// [begin, end): owned indices in any interval are a contiguous run of local indices.
  [[nodiscard]] std::pair<std::int64_t, std::int64_t> local_range(int p, std::int64_t begin,
                                                                  std::int64_t end) const {
    HETERO_EXPECTS(begin <= end, "global range [", begin, ", ", end, ") is reversed");
    return {owned_below(p, begin), owned_below(p, end)};
  }

  /// The global interval [begin, end) part `p` owns on a contiguous axis (block, gen-block);
  /// throws `distribution_error` on a cyclic axis, whose parts own no interval.
  [[nodiscard]] std::pair<std::int64_t, std::int64_t> block_range(int p) const {
    check_part(p);
    if (!is_contiguous())
      detail::raise<distribution_error>("block_range: a ", to_string(kind()),
                                        " axis gives each part no single interval; use local_range");
    return {m_offsets[static_cast<std::size_t>(p)], m_offsets[static_cast<std::size_t>(p) + 1]};
  }

  /// The index map of part `p`, for use inside kernels.
  [[nodiscard]] detail::axis_map map(int p) const {
    check_part(p);
    detail::axis_map m;
    m.width = m_format.width();
    m.parts = m_parts;
    m.part = p;
    if (is_contiguous()) m.offset = m_offsets[static_cast<std::size_t>(p)];
    return m;
  }

  /// Equal when the extent, the number of parts and the distribution are equal.
  friend bool operator==(const axis_distribution& a, const axis_distribution& b) {
    return a.m_extent == b.m_extent && a.m_parts == b.m_parts && a.m_format == b.m_format;
  }

 private:
  void check_index(std::int64_t g) const {
    HETERO_EXPECTS(g >= 0 && g < m_extent, "global index ", g, " is outside the axis [0, ", m_extent, ")");
  }
  void check_part(int p) const {
    HETERO_EXPECTS(p >= 0 && p < m_parts, "part ", p, " is outside [0, ", m_parts, ")");
  }

  distribution m_format;
  std::int64_t m_extent = 0;
  int m_parts = 1;
  std::vector<std::int64_t> m_offsets;  // contiguous kinds: first global index of each part, and the extent
};

}  // namespace hetero

#endif  // HETERO_DISTARRAY_DISTRIBUTION_HPP
