// Random programs of tasks that read and write task data, for the data tests: each piece holds
// integers; a task hashes every element of what it reads, in clause order, and fills what it
// writes from that hash (updates mix in the old value), so a task that saw a wrong version, or
// a piece left stale anywhere, changes the end result. The reference runs the same program
// sequentially on plain vectors. `minimum_moves` counts the moves the graph needs when every
// task's side is fixed: a copy moves only when it is stale where a task reads it, and
// the host copy once at the end when a device holds the newest version.
#pragma once

#include <hetero/task.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace data_test {

using word = std::uint64_t;
using host_view = Kokkos::View<word*, Kokkos::HostSpace>;

inline word mix(word x) noexcept {
  x ^= x >> 31;
  x *= 0x7fb5d329728ea185ULL;
  x ^= x >> 27;
  x *= 0x81dadef4bc2dd44dULL;
  return x ^ (x >> 33);
}

enum class side { host, device, either };
enum class mode { read, write, update };

struct access {
  int piece;
  mode how;
};

struct task {
  side where = side::host;
  int pinned = -1;         // device(k), or -1
  std::vector<int> ranks;  // on(...), empty: the default (the owner of a written tile, else every rank)
  std::vector<access> uses;
};

// The body: hashes the inputs (reads and updates, in clause order), then writes the outputs.
// `Views` are the task's data Views in clause order, matching `t.uses`.
template <class... Views>
word run_task(int index, const task& t, Views... views) {
  word h = mix(static_cast<word>(index) + 1);
  std::size_t k = 0;
  const auto hash = [&](const auto& v) {
    if (t.uses[k].how != mode::write)
      for (std::size_t e = 0; e < v.extent(0); ++e) h = mix(h ^ v(e));
    ++k;
  };
  (hash(views), ...);
  k = 0;
  const auto write = [&](const auto& v) {
    if constexpr (!std::is_const_v<typename std::remove_cvref_t<decltype(v)>::value_type>) {
      if (t.uses[k].how != mode::read)
        for (std::size_t e = 0; e < v.extent(0); ++e)
          v(e) = mix(h + e + (t.uses[k].how == mode::update ? v(e) : 0));
    }
    ++k;
  };
  (write(views), ...);
  return h;
}

class program {
 public:
  // `pieces` pieces of 1..64 words (all of `fixed_size` words when it is given); `tasks` tasks
  // of 1..3 accesses; sides drawn from `sides` (forced ones only when `sides` excludes either),
  // device tasks pinned to one of `devices` devices or not. With `ranks` > 1 the pieces are
  // tiles owned cyclically, and tasks that only read run on random sets of ranks.
  program(std::mt19937_64& rng, int pieces, int tasks, std::vector<side> sides, int ranks = 1, int devices = 1,
          int fixed_size = 0)
      : m_ranks(ranks) {
    std::uniform_int_distribution<int> size(1, 64), which(0, pieces - 1), count(1, 3), how(0, 2);
    std::uniform_int_distribution<std::size_t> pick(0, sides.size() - 1);
    std::uniform_int_distribution<int> device(-1, devices - 1), rank(0, ranks - 1), coin(0, 1);
    for (int p = 0; p < pieces; ++p) m_sizes.push_back(fixed_size > 0 ? fixed_size : size(rng));
    for (int i = 0; i < tasks; ++i) {
      task t;
      t.where = sides[pick(rng)];
      if (t.where == side::device) t.pinned = device(rng);
      const int k = count(rng);
      for (int a = 0; a < k; ++a) {
        const int p = which(rng);
        bool seen = false;
        for (const auto& u : t.uses) seen = seen || u.piece == p;
        if (!seen) t.uses.push_back({p, static_cast<mode>(how(rng))});
      }
      // A task writing tiles of two owners cannot run anywhere: keep the first written tile's owner.
      int writer = -1;
      for (auto& u : t.uses) {
        if (u.how == mode::read) continue;
        if (writer < 0) writer = owner(u.piece);
        if (owner(u.piece) != writer) u.how = mode::read;
      }
      if (writer < 0 && ranks > 1 && coin(rng)) {
        std::set<int> chosen{rank(rng), rank(rng)};
        t.ranks.assign(chosen.begin(), chosen.end());
      }
      m_tasks.push_back(std::move(t));
    }
    // The sequential meaning.
    for (int p = 0; p < pieces; ++p) m_expected.push_back(initial(p));
    for (int i = 0; i < tasks; ++i) {
      const task& t = m_tasks[static_cast<std::size_t>(i)];
      std::vector<std::vector<word>*> v;
      for (const auto& u : t.uses) v.push_back(&m_expected[static_cast<std::size_t>(u.piece)]);
      m_hash.push_back(reference_task(i, t, v));
    }
  }

  [[nodiscard]] int pieces() const noexcept { return static_cast<int>(m_sizes.size()); }
  [[nodiscard]] int tasks() const noexcept { return static_cast<int>(m_tasks.size()); }
  [[nodiscard]] int size(int p) const { return m_sizes[static_cast<std::size_t>(p)]; }
  [[nodiscard]] const task& at(int i) const { return m_tasks[static_cast<std::size_t>(i)]; }
  [[nodiscard]] int owner(int p) const noexcept { return p % m_ranks; }
  [[nodiscard]] word initial_word(int p, int e) const noexcept {
    return mix(static_cast<word>(p) * 1000003 + static_cast<word>(e));
  }
  [[nodiscard]] std::vector<word> initial(int p) const {
    std::vector<word> v(static_cast<std::size_t>(size(p)));
    for (int e = 0; e < size(p); ++e) v[static_cast<std::size_t>(e)] = initial_word(p, e);
    return v;
  }
  [[nodiscard]] const std::vector<word>& expected(int p) const { return m_expected[static_cast<std::size_t>(p)]; }
  [[nodiscard]] word expected_hash(int i) const { return m_hash[static_cast<std::size_t>(i)]; }
  // Whether rank `r` runs task `i`.
  [[nodiscard]] bool runs_on(int i, int r) const {
    const task& t = at(i);
    if (!t.ranks.empty()) {
      for (int x : t.ranks)
        if (x == r) return true;
      return false;
    }
    for (const auto& u : t.uses)
      if (u.how != mode::read) return owner(u.piece) == r || m_ranks == 1;
    return true;
  }

  // The moves rank `me` needs with every side fixed (no either) and no cap: to the device, to
  // the host, received from owners, sent to readers.
  /// `from_owner` (if given): per owner rank, how many of the tiles received here it owns.
  /// `read_through` (if given): per owner rank, how many received versions of its tiles a host
  /// task here read first.
  [[nodiscard]] std::array<std::uint64_t, 4> minimum_moves(
      int me, std::vector<std::uint64_t>* from_owner = nullptr,
      std::vector<std::uint64_t>* read_through = nullptr) const {
    if (from_owner) from_owner->assign(static_cast<std::size_t>(m_ranks), 0);
    if (read_through) read_through->assign(static_cast<std::size_t>(m_ranks), 0);
    std::vector<bool> unread(m_sizes.size(), false);         // received, no host task read it since
    std::vector<std::uint64_t> version(m_sizes.size(), 0);   // writes declared so far
    std::vector<std::array<bool, 2>> valid(m_sizes.size());  // host, device on this rank
    std::vector<std::uint64_t> fetched(m_sizes.size(), ~0ULL);
    std::set<std::tuple<int, std::uint64_t, int>> sent;
    for (std::size_t p = 0; p < m_sizes.size(); ++p) valid[p] = {owner(static_cast<int>(p)) == me, false};
    std::array<std::uint64_t, 4> moves{};
    for (int i = 0; i < tasks(); ++i) {
      const task& t = at(i);
      for (const auto& u : t.uses) {  // moves across ranks, declared before the task
        if (u.how == mode::write || m_ranks == 1) continue;
        const auto p = static_cast<std::size_t>(u.piece);
        for (int r = 0; r < m_ranks; ++r) {
          if (!runs_on(i, r) || r == owner(u.piece)) continue;
          if (me == owner(u.piece) && sent.insert({u.piece, version[p], r}).second) {
            ++moves[3];
            if (!valid[p][0]) {
              ++moves[1];
              valid[p][0] = true;
            }
          }
          if (me == r && fetched[p] != version[p]) {
            ++moves[2];
            if (from_owner) ++(*from_owner)[static_cast<std::size_t>(owner(u.piece))];
            fetched[p] = version[p];
            valid[p] = {true, false};
            unread[p] = true;
          }
        }
      }
      if (runs_on(i, me)) {
        const std::size_t place = t.where == side::device ? 1 : 0;
        for (const auto& u : t.uses) {
          const auto p = static_cast<std::size_t>(u.piece);
          if (u.how != mode::write && !valid[p][place]) {
            ++moves[place == 1 ? 0 : 1];
            valid[p][place] = true;
          }
          if (u.how != mode::write && place == 0 && unread[p]) {
            if (read_through) ++(*read_through)[static_cast<std::size_t>(owner(u.piece))];
            unread[p] = false;
          }
          if (u.how != mode::read) valid[p] = {place == 0, place == 1};
        }
      }
      for (const auto& u : t.uses)
        if (u.how != mode::read) ++version[static_cast<std::size_t>(u.piece)];
    }
    for (std::size_t p = 0; p < m_sizes.size(); ++p)
      if (owner(static_cast<int>(p)) == me && !valid[p][0]) ++moves[1];
    return moves;
  }

 private:
  static word reference_task(int index, const task& t, std::vector<std::vector<word>*>& v) {
    word h = mix(static_cast<word>(index) + 1);
    for (std::size_t k = 0; k < t.uses.size(); ++k)
      if (t.uses[k].how != mode::write)
        for (word x : *v[k]) h = mix(h ^ x);
    for (std::size_t k = 0; k < t.uses.size(); ++k) {
      if (t.uses[k].how == mode::read) continue;
      auto& out = *v[k];
      for (std::size_t e = 0; e < out.size(); ++e)
        out[e] = mix(h + e + (t.uses[k].how == mode::update ? out[e] : 0));
    }
    return h;
  }

  int m_ranks;
  std::vector<int> m_sizes;
  std::vector<task> m_tasks;
  std::vector<std::vector<word>> m_expected;
  std::vector<word> m_hash;
};

// Calls `f` with the task data of `t`'s uses as clauses (reads/writes/updates of one piece
// each), in order: f(clauses...). Up to 3 uses.
template <class Data, class F>
void with_clauses(const task& t, const Data& data, F&& f) {
  const auto clause = [&](const access& u) { return std::make_pair(u.how, data(u.piece)); };
  const auto one = [&](const access& u, auto&& next) {
    const auto [how, d] = clause(u);
    switch (how) {
      case mode::read: return next(hetero::reads(d));
      case mode::write: return next(hetero::writes(d));
      default: return next(hetero::updates(d));
    }
  };
  switch (t.uses.size()) {
    case 1: one(t.uses[0], [&](auto a) { f(a); }); break;
    case 2: one(t.uses[0], [&](auto a) { one(t.uses[1], [&](auto b) { f(a, b); }); }); break;
    default:
      one(t.uses[0],
          [&](auto a) { one(t.uses[1], [&](auto b) { one(t.uses[2], [&](auto c) { f(a, b, c); }); }); });
  }
}

// Declares task `i` of `prog` on `graph` with the pieces `data(p)`; the hash the body computes
// goes to `hashes[i]` (on the ranks that run it).
template <class Graph, class Data>
void declare_task(Graph& graph, const program& prog, int i, const Data& data, std::vector<word>& hashes) {
  using space = typename Graph::device_space;
  const task& t = prog.at(i);
  word* out = &hashes[static_cast<std::size_t>(i)];
  const auto host_body = [out, i, &t](auto... views) { *out = run_task(i, t, views...); };
  const auto device_body = [out, i, &t](const space&, auto... views) { *out = run_task(i, t, views...); };
  with_clauses(t, data, [&](auto... clauses) {
    const std::string label = t.where == side::host ? "host" : t.where == side::device ? "device" : "either";
    if (!t.ranks.empty()) {
      const hetero::rank_set ranks(t.ranks);
      if (t.where == side::host) graph.spawn(label, hetero::on(ranks), clauses..., host_body);
      if (t.where == side::device)
        graph.spawn(label, hetero::on(ranks), hetero::device(t.pinned), clauses..., device_body);
      if (t.where == side::either)
        graph.spawn(label, hetero::on(ranks), clauses..., hetero::host_or_device(host_body, device_body));
      return;
    }
    if (t.where == side::host) graph.spawn(label, clauses..., host_body);
    if (t.where == side::device) graph.spawn(label, hetero::device(t.pinned), clauses..., device_body);
    if (t.where == side::either) graph.spawn(label, clauses..., hetero::host_or_device(host_body, device_body));
  });
}

}  // namespace data_test
