/// @file
/// `hetero::comm_tuning`: for each collective, which algorithm carries a message of a given size.
/// The built-in defaults are thresholds chosen for a single node; run the tuning tool
/// `hetero_comm_tune` (tools/comm, docs/comm.md) on yours to measure it: it writes a small text
/// file that a communicator reads from `communicator_options::tuning_file` or the
/// `HETERO_COMM_TUNING` environment variable:
/// <!-- snippet: not compiled: the text format of a tuning file, not C++ -->
/// @code
/// # hetero communicator tuning
/// shape 2 1                 (ranks, nodes it was made for)
/// allreduce 16384 shm       (up to 16 KiB: shared memory)
/// allreduce inf mpi         (above: MPI's own call)
/// @endcode
#ifndef HETERO_COMM_TUNING_HPP
#define HETERO_COMM_TUNING_HPP

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "hetero/comm/algorithm.hpp"
#include "hetero/core/error.hpp"

namespace hetero {

/// Messages of up to `max_bytes` bytes (per rank for scatter, gather and allgather) use
/// `algorithm`.
struct tuning_rule {
  std::size_t max_bytes;  ///< The largest message (bytes) the rule covers; `comm_tuning::unbounded` for no limit.
  comm_algorithm algorithm;  ///< The algorithm for messages up to `max_bytes`.
  /// Equal when both fields are equal.
  friend bool operator==(const tuning_rule&, const tuning_rule&) = default;
};

/// Size thresholds that choose an algorithm for each collective.
class comm_tuning {
 public:
  /// "No upper bound" in a rule.
  static constexpr std::size_t unbounded = std::numeric_limits<std::size_t>::max();

  /// Every collective carried by MPI's own call.
  comm_tuning() = default;

  /// The built-in table for a communicator of `ranks` ranks: the shared-memory window up to
  /// 64 KiB per rank (less where every rank reads every rank's block: 256 KiB / ranks), MPI's
  /// call above. On 2 ranks, three of hetero's algorithms replace MPI's call above the window,
  /// where tuning runs found them faster by more than 15 % (docs/results/comm.md): binomial reduce up to
  /// 4 MiB, linear scatter from 256 KiB to 4 MiB and ring allgatherv. Other shapes keep MPI's
  /// call there; run `hetero_comm_tune` for thresholds that fit your machine. `node_aware`: the
  /// ranks span several nodes and some share one (`communicator::node_aware`): reduce and
  /// allreduce take the hierarchical algorithm at every size, broadcast up to the window's
  /// 64 KiB (measured on emulated nodes, docs/results/core.md).
  static comm_tuning defaults(int ranks = 2, bool node_aware = false) {
    comm_tuning t;
    constexpr std::size_t kib = 1024, mib = 1024 * kib;
    const auto p = static_cast<std::size_t>(std::max(ranks, 1));
    const std::size_t one_block = 64 * kib;
    const std::size_t every_block = std::clamp<std::size_t>(256 * kib / p, 4 * kib, 64 * kib);
    const bool two_ranks = ranks == 2;
    const auto shm_then = [](std::size_t limit, std::vector<tuning_rule> above) {
      above.insert(above.begin(), tuning_rule{limit, comm_algorithm::shm});
      return above;
    };
    const std::vector<tuning_rule> mpi{{unbounded, comm_algorithm::mpi}};
    t.set(collective::barrier, {{unbounded, comm_algorithm::shm}});
    t.set(collective::broadcast, shm_then(one_block, mpi));
    t.set(collective::scatter,
          shm_then(one_block, two_ranks ? std::vector<tuning_rule>{{256 * kib, comm_algorithm::mpi},
                                                                   {4 * mib, comm_algorithm::linear},
                                                                   {unbounded, comm_algorithm::mpi}}
                                        : mpi));
    t.set(collective::gather, shm_then(every_block, mpi));
    t.set(collective::reduce,
          shm_then(every_block, two_ranks ? std::vector<tuning_rule>{{4 * mib, comm_algorithm::binomial},
                                                                     {unbounded, comm_algorithm::mpi}}
                                          : mpi));
    t.set(collective::allgather, shm_then(every_block, mpi));
    t.set(collective::allgatherv,
          shm_then(every_block, two_ranks ? std::vector<tuning_rule>{{unbounded, comm_algorithm::ring}} : mpi));
    t.set(collective::allreduce, shm_then(every_block, mpi));
    // gatherv and scatterv are keyed on size 0 (only the root knows every count): inside the
    // shared-memory algorithm each block takes the window or a message by its own size.
    t.set(collective::gatherv, {{unbounded, comm_algorithm::shm}});
    t.set(collective::scatterv, {{unbounded, comm_algorithm::shm}});
    if (node_aware) {
      t.set(collective::broadcast, {{one_block, comm_algorithm::hierarchical}, {unbounded, comm_algorithm::mpi}});
      t.set(collective::reduce, {{unbounded, comm_algorithm::hierarchical}});
      t.set(collective::allreduce, {{unbounded, comm_algorithm::hierarchical}});
    }
    return t;
  }

  /// Replaces the rules of `c`: increasing `max_bytes`, the last one `unbounded`, each
  /// algorithm one that hetero implements for `c`.
  void set(collective c, std::vector<tuning_rule> rules) {
    check_rules(c, rules, "comm_tuning::set");
    m_rules[index(c)] = std::move(rules);
  }

  /// The rules of `c`, smallest messages first.
  [[nodiscard]] const std::vector<tuning_rule>& rules(collective c) const { return m_rules[index(c)]; }

  /// The algorithm for a message of `bytes` bytes.
  [[nodiscard]] comm_algorithm choose(collective c, std::size_t bytes) const noexcept {
    for (const tuning_rule& r : m_rules[index(c)])
      if (bytes <= r.max_bytes) return r.algorithm;
    return comm_algorithm::mpi;
  }

  /// The shape (ranks, nodes) the table was made for; 0 when it fits any.
  [[nodiscard]] int ranks() const noexcept { return m_ranks; }
  /// The node count of that shape; 0 when it fits any.
  [[nodiscard]] int nodes() const noexcept { return m_nodes; }
  /// Records the shape (ranks, nodes) the table was made for; 0 for either fits any.
  /// Throws `invalid_argument` on a negative count.
  void set_shape(int ranks, int nodes) {
    HETERO_EXPECTS(ranks >= 0 && nodes >= 0, "comm_tuning shape (", ranks, " ranks, ", nodes,
                   " nodes) must not be negative");
    m_ranks = ranks;
    m_nodes = nodes;
  }
  /// True when the table was made for a communicator of this shape (or for any).
  [[nodiscard]] bool fits(int ranks, int nodes) const noexcept {
    return (m_ranks == 0 || m_ranks == ranks) && (m_nodes == 0 || m_nodes == nodes);
  }

  /// The table in the text format `parse` reads.
  [[nodiscard]] std::string to_text() const {
    std::ostringstream out;
    out << "# hetero communicator tuning: <collective> <max bytes|inf> <algorithm>\n";
    if (m_ranks != 0 || m_nodes != 0) out << "shape " << m_ranks << ' ' << m_nodes << '\n';
    for (collective c : all_collectives)
      for (const tuning_rule& r : rules(c)) {
        out << to_string(c) << ' ';
        if (r.max_bytes == unbounded)
          out << "inf";
        else
          out << r.max_bytes;
        out << ' ' << to_string(r.algorithm) << '\n';
      }
    return out.str();
  }

  /// Reads the text format; `source` names the text in error messages ("<source>:<line>: ...").
  /// Collectives without rules keep MPI's call.
  static comm_tuning parse(std::string_view text, std::string_view source) {
    comm_tuning t;
    std::array<std::vector<tuning_rule>, all_collectives.size()> rules;
    std::istringstream in{std::string(text)};
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
      std::istringstream words(line);
      std::string first, second, third, extra;
      if (!(words >> first)) continue;
      words >> second >> third;
      auto fail = [&](const auto&... what) {
        detail::raise<invalid_argument>(source, ":", number, ": ", what...);
      };
      if (words >> extra) fail("unexpected '", extra, "' after three words");
      if (first == "shape") {
        const int ranks = parse_number<int>(second), nodes = parse_number<int>(third);
        if (ranks < 0 || nodes < 0) fail("expected 'shape <ranks> <nodes>' with counts >= 0, got '", line, "'");
        t.set_shape(ranks, nodes);
        continue;
      }
      const auto c = collective_from_string(first);
      if (!c) fail("unknown collective '", first, "' (allowed: barrier, broadcast, scatter, ..., allreduce)");
      if (third.empty()) fail("expected '<collective> <max bytes|inf> <algorithm>', got '", line, "'");
      const std::size_t bytes = second == "inf" ? unbounded : parse_number<std::size_t>(second);
      if (bytes == invalid_size) fail("'", second, "' is not a byte count (a number or 'inf')");
      const auto a = algorithm_from_string(third);
      if (!a || *a == comm_algorithm::automatic) fail("unknown algorithm '", third, "'");
      if (!implements(*c, *a)) fail(first, " cannot use algorithm '", third, "'");
      auto& list = rules[index(*c)];
      if (!list.empty() && bytes <= list.back().max_bytes)
        fail("rules of ", first, " must have increasing sizes (", bytes, " after ", list.back().max_bytes, ")");
      list.push_back({bytes, *a});
    }
    for (collective c : all_collectives) {
      auto& list = rules[index(c)];
      if (list.empty()) continue;
      if (list.back().max_bytes != unbounded) list.push_back({unbounded, comm_algorithm::mpi});
      t.set(c, std::move(list));
    }
    return t;
  }

  /// Reads a tuning file; throws `io_error` naming the file (and the line) when it cannot be read
  /// or is malformed, as for every file (docs/conventions.md).
  static comm_tuning load(const std::string& path) {
    std::ifstream in(path);
    if (!in) detail::raise_io_error(path, "cannot open the tuning file '", path, "'");
    std::ostringstream text;
    text << in.rdbuf();
    try {
      return parse(text.str(), path);
    } catch (const invalid_argument& e) {
      throw io_error(e.what(), path);
    }
  }

  /// Writes the table to `path`; throws `io_error` when it cannot be written.
  void save(const std::string& path) const {
    std::ofstream out(path);
    out << to_text();
    if (!out) detail::raise_io_error(path, "cannot write the tuning file '", path, "'");
  }

  /// Equal when the rules of every collective and the shape are equal.
  friend bool operator==(const comm_tuning&, const comm_tuning&) = default;

 private:
  static constexpr std::size_t invalid_size = unbounded - 1;

  static constexpr std::size_t index(collective c) noexcept { return static_cast<std::size_t>(c); }

  template <class Int>
  static Int parse_number(const std::string& word) {
    Int value{};
    const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
    if (ec != std::errc{} || end != word.data() + word.size() || word.empty()) {
      if constexpr (std::is_same_v<Int, std::size_t>) {
        return invalid_size;
      } else {
        return -1;
      }
    }
    return value;
  }

  static void check_rules(collective c, const std::vector<tuning_rule>& rules, std::string_view where) {
    HETERO_EXPECTS(!rules.empty() && rules.back().max_bytes == unbounded, where, ": the rules of ", to_string(c),
                   " must end with one for unbounded sizes");
    for (std::size_t i = 0; i < rules.size(); ++i) {
      HETERO_EXPECTS(implements(c, rules[i].algorithm) && rules[i].algorithm != comm_algorithm::automatic, where,
                     ": ", to_string(c), " cannot use algorithm ", to_string(rules[i].algorithm));
      HETERO_EXPECTS(i == 0 || rules[i - 1].max_bytes < rules[i].max_bytes, where, ": the rules of ", to_string(c),
                     " must have increasing sizes");
    }
  }

  std::array<std::vector<tuning_rule>, all_collectives.size()> m_rules{};
  int m_ranks = 0;
  int m_nodes = 0;
};

}  // namespace hetero

#endif  // HETERO_COMM_TUNING_HPP
