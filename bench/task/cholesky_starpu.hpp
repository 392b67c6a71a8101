// Block Cholesky with StarPU 1.3 (the peer of the task module's benchmark): the same tiles and
// the same four tile kernels as examples/cholesky, each tile a StarPU matrix handle, tasks
// submitted with starpu_task_insert and ordered by StarPU's implicit (sequential-consistency)
// dependences. Two orders:
// - right-looking, one b x b x b call per task, with critical-path priorities (the shape of
//   StarPU's own cholesky_implicit example, its best algorithm) or without;
// - left-looking with `width`-tile updates (a task reads `width` tiles of a row as one
//   handle array): hetero's own order, so that the schedulers are compared on the same graph.
// StarPU is started per measured case (start()/stop()) and shut down between them, so its
// workers never run beside another case's threads. The orders take a submitter, so that
// StarPU-MPI (cholesky_starpu_mpi.cpp, on Open MPI) runs the same ones with
// starpu_mpi_task_insert; this header needs neither MPI nor hetero. A benchmark dependency
// only: hetero never needs StarPU.
#ifndef HETERO_BENCH_TASK_CHOLESKY_STARPU_HPP
#define HETERO_BENCH_TASK_CHOLESKY_STARPU_HPP

#include <starpu.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels.hpp"

namespace cholesky::starpu {

/// Starts StarPU with `workers` CPU workers and no accelerator, scheduler `scheduler` (nullptr:
/// StarPU's default, or STARPU_SCHED when set, as its documentation says).
inline void start(int workers, const char* scheduler) {
  starpu_conf conf;
  starpu_conf_init(&conf);
  conf.ncpus = workers;
  conf.ncuda = 0;
  conf.nopencl = 0;
  conf.nmic = 0;
  if (scheduler != nullptr) conf.sched_policy_name = scheduler;
  const int status = starpu_init(&conf);
  if (status != 0) throw std::runtime_error("starpu_init failed with " + std::to_string(status));
}

inline void stop() { starpu_shutdown(); }

namespace detail {

template <real T>
T* tile_of(void* buffer) {
  return reinterpret_cast<T*>(STARPU_MATRIX_GET_PTR(buffer));
}

// The number of tiles each operand of the current update task spans (left-looking: the task
// has 2 * width + 1 buffers for a GEMM, width + 1 for a SYRK).
inline int buffers_of_current_task() {
  return static_cast<int>(STARPU_TASK_GET_NBUFFERS(starpu_task_get_current()));
}

// The tiles of one operand of an update: where they lie side by side in memory (a tile row of
// one rank, tiles.hpp), the first tile's address; otherwise (tiles StarPU-MPI received from
// another rank, each in its own buffer) they are copied side by side into `packed`, as hetero's
// tasklets fetch a remote row's tiles into one buffer.
template <real T>
const T* operand(void* buffers[], int first, int width, std::vector<T>& packed) {
  const T* start = tile_of<T>(buffers[first]);
  const auto b = static_cast<std::size_t>(STARPU_MATRIX_GET_NX(buffers[first])), elements = b * b;
  bool consecutive = true;
  for (int s = 1; s < width && consecutive; ++s)
    consecutive = tile_of<T>(buffers[first + s]) == start + static_cast<std::size_t>(s) * elements;
  if (consecutive) return start;
  packed.resize(static_cast<std::size_t>(width) * elements);
  for (int s = 0; s < width; ++s)
    std::copy_n(tile_of<T>(buffers[first + s]), elements, packed.data() + static_cast<std::size_t>(s) * elements);
  return packed.data();
}

template <real T>
void potrf_kernel(void* buffers[], void*) {
  potrf(tile_of<T>(buffers[0]), static_cast<int>(STARPU_MATRIX_GET_NX(buffers[0])));
}
template <real T>
void trsm_kernel(void* buffers[], void*) {
  trsm(tile_of<T>(buffers[0]), tile_of<T>(buffers[1]), static_cast<int>(STARPU_MATRIX_GET_NX(buffers[0])));
}
template <real T>
void syrk_kernel(void* buffers[], void*) {
  const int width = buffers_of_current_task() - 1;
  thread_local std::vector<T> packed;
  syrk(operand<T>(buffers, 0, width, packed), tile_of<T>(buffers[width]),
       static_cast<int>(STARPU_MATRIX_GET_NX(buffers[0])), width);
}
template <real T>
void gemm_kernel(void* buffers[], void*) {
  const int width = (buffers_of_current_task() - 1) / 2;
  thread_local std::vector<T> packed_i, packed_j;
  gemm(operand<T>(buffers, 0, width, packed_i), operand<T>(buffers, width, width, packed_j),
       tile_of<T>(buffers[2 * width]), static_cast<int>(STARPU_MATRIX_GET_NX(buffers[0])), width);
}

// One codelet per kernel and precision; history-based performance models, which the dm*
// schedulers need (they calibrate themselves in the first runs).
template <real T>
struct codelets {
  starpu_perfmodel models[4];
  starpu_codelet potrf_cl, trsm_cl, syrk_cl, gemm_cl;

  codelets() {
    const char* names[4] = {"hetero_bench_potrf", "hetero_bench_trsm", "hetero_bench_syrk", "hetero_bench_gemm"};
    starpu_codelet* cls[4] = {&potrf_cl, &trsm_cl, &syrk_cl, &gemm_cl};
    starpu_cpu_func_t functions[4] = {potrf_kernel<T>, trsm_kernel<T>, syrk_kernel<T>, gemm_kernel<T>};
    for (int c = 0; c < 4; ++c) {
      starpu_perfmodel_init(&models[c]);
      models[c].type = STARPU_HISTORY_BASED;
      symbols[c] = std::string(names[c]) + (sizeof(T) == 8 ? "_d" : "_s");
      models[c].symbol = symbols[c].c_str();
      starpu_codelet_init(cls[c]);
      cls[c]->cpu_funcs[0] = functions[c];
      cls[c]->model = &models[c];
      cls[c]->name = names[c];
    }
    potrf_cl.nbuffers = 1;
    potrf_cl.modes[0] = STARPU_RW;
    trsm_cl.nbuffers = 2;
    trsm_cl.modes[0] = STARPU_R;
    trsm_cl.modes[1] = STARPU_RW;
    syrk_cl.nbuffers = STARPU_VARIABLE_NBUFFERS;  // width tiles read, the diagonal tile written
    gemm_cl.nbuffers = STARPU_VARIABLE_NBUFFERS;  // 2 * width tiles read, one tile written
  }
  codelets(const codelets&) = delete;
  codelets& operator=(const codelets&) = delete;

 private:
  std::string symbols[4];
};

template <real T>
codelets<T>& codelets_of() {
  static codelets<T> instance;
  return instance;
}

}  // namespace detail

/// The lower tiles of an `nt` x `nt` tile matrix (tiles of b x b) registered with StarPU for the
/// lifetime of the object; StarPU must be started. `tile_of(i, k)` gives the address of tile
/// (i, k), i >= k, in main memory, or nullptr for a tile that lives on another rank (StarPU-MPI
/// then allocates a buffer when a task needs it).
template <real T>
class tile_handles {
 public:
  template <class TileOf>
  tile_handles(int nt, int b, TileOf&& tile_of) : m_nt(nt), m_handles(static_cast<std::size_t>(m_nt * m_nt)) {
    const auto side = static_cast<std::uint32_t>(b);
    for (int i = 0; i < m_nt; ++i)
      for (int k = 0; k <= i; ++k) {
        T* tile = tile_of(i, k);
        starpu_matrix_data_register(&at(i, k), tile != nullptr ? STARPU_MAIN_RAM : -1,
                                    reinterpret_cast<std::uintptr_t>(tile), side, side, side, sizeof(T));
      }
  }
  /// Every tile of `a` (a `cholesky::tiles` on one rank).
  template <class Tiles>
  explicit tile_handles(Tiles& a)
      : tile_handles(a.tiles_per_side(), a.tile_size(), [&a](int i, int k) { return a.local(i, k); }) {}
  ~tile_handles() {
    for (int i = 0; i < m_nt; ++i)
      for (int k = 0; k <= i; ++k) starpu_data_unregister(at(i, k));
  }
  tile_handles(const tile_handles&) = delete;
  tile_handles& operator=(const tile_handles&) = delete;

  starpu_data_handle_t& at(int i, int k) { return m_handles[static_cast<std::size_t>(i * m_nt + k)]; }
  [[nodiscard]] int tiles_per_side() const noexcept { return m_nt; }

 private:
  int m_nt;
  std::vector<starpu_data_handle_t> m_handles;
};

/// Whether the orders give their tasks critical-path priorities (StarPU's Cholesky examples do)
/// or leave every task at StarPU's default priority (measured faster here: docs/results/task.md).
enum class priority_mode { critical_path, none };

namespace detail {

// Priorities by distance from the end of the critical path (potrf k, trsm k+1, syrk k+1,
// potrf k+1, ...), the earlier the step, the higher: the distance itself where the scheduler's
// range holds it (StarPU 1.3's schedulers give INT_MIN..INT_MAX), otherwise scaled into the
// range. Computed in 64 bits: the range's width does not fit in an int.
class priorities {
 public:
  priorities(int nt, priority_mode mode)
      : m_nt(nt),
        m_on(mode == priority_mode::critical_path),
        m_min(starpu_sched_get_min_priority()),
        m_max(starpu_sched_get_max_priority()) {}
  [[nodiscard]] int of(int step, int distance) const {
    if (!m_on) return STARPU_DEFAULT_PRIO;
    const std::int64_t top = 3 * static_cast<std::int64_t>(m_nt),
                       value =
                           std::clamp<std::int64_t>(3 * static_cast<std::int64_t>(m_nt - step) - distance, 0, top);
    if (m_max - m_min >= top) return static_cast<int>(std::clamp<std::int64_t>(0, m_min, m_max - top) + value);
    return static_cast<int>(m_min + (m_max - m_min) * value / top);
  }

 private:
  int m_nt;
  bool m_on;
  std::int64_t m_min, m_max;
};

}  // namespace detail

/// Submits tasks to StarPU on one rank (starpu_task_insert) and waits for them.
struct local_submitter {
  void submit(starpu_codelet* cl, std::vector<starpu_data_descr>& operands, int priority) const {
    const int status = starpu_task_insert(cl, STARPU_DATA_MODE_ARRAY, operands.data(),
                                          static_cast<int>(operands.size()), STARPU_PRIORITY, priority, 0);
    if (status != 0) throw std::runtime_error("starpu_task_insert failed with " + std::to_string(status));
  }
  void wait() const { starpu_task_wait_for_all(); }
};

/// Right-looking, one b x b x b call per task (StarPU's cholesky_implicit order); returns when
/// every task has ended.
template <real T, class Submitter = local_submitter>
void factorize_right_looking(tile_handles<T>& h, priority_mode mode, const Submitter& to = {}) {
  auto& cl = detail::codelets_of<T>();
  const int nt = h.tiles_per_side();
  const detail::priorities prio(nt, mode);
  std::vector<starpu_data_descr> ops;
  for (int k = 0; k < nt; ++k) {
    ops = {{h.at(k, k), STARPU_RW}};
    to.submit(&cl.potrf_cl, ops, prio.of(k, 0));
    for (int i = k + 1; i < nt; ++i) {
      ops = {{h.at(k, k), STARPU_R}, {h.at(i, k), STARPU_RW}};
      to.submit(&cl.trsm_cl, ops, prio.of(k, i - k));
    }
    for (int i = k + 1; i < nt; ++i) {
      for (int j = k + 1; j < i; ++j) {
        ops = {{h.at(i, k), STARPU_R}, {h.at(j, k), STARPU_R}, {h.at(i, j), STARPU_RW}};
        to.submit(&cl.gemm_cl, ops, prio.of(k, i - k + j - k));
      }
      ops = {{h.at(i, k), STARPU_R}, {h.at(i, i), STARPU_RW}};
      to.submit(&cl.syrk_cl, ops, prio.of(k, 2 * (i - k)));
    }
  }
  to.wait();
}

/// Left-looking with updates of `width` tile columns per task (hetero's example and the OpenMP
/// baseline, cholesky_omp.hpp); returns when every task has ended.
template <real T, class Submitter = local_submitter>
void factorize_left_looking(tile_handles<T>& h, priority_mode mode, const Submitter& to = {},
                            int width = update_width) {
  auto& cl = detail::codelets_of<T>();
  const int nt = h.tiles_per_side();
  const detail::priorities prio(nt, mode);
  std::vector<starpu_data_descr> ops;
  for (int j = 0; j < nt; ++j) {
    for (int k = 0; k < j; k += width) {
      const int w = std::min(width, j - k);
      ops.clear();
      for (int s = 0; s < w; ++s) ops.push_back({h.at(j, k + s), STARPU_R});
      ops.push_back({h.at(j, j), STARPU_RW});
      to.submit(&cl.syrk_cl, ops, prio.of(j, 1));
    }
    ops = {{h.at(j, j), STARPU_RW}};
    to.submit(&cl.potrf_cl, ops, prio.of(j, 0));
    for (int i = j + 1; i < nt; ++i) {
      for (int k = 0; k < j; k += width) {
        const int w = std::min(width, j - k);
        ops.clear();
        for (int s = 0; s < w; ++s) ops.push_back({h.at(i, k + s), STARPU_R});
        for (int s = 0; s < w; ++s) ops.push_back({h.at(j, k + s), STARPU_R});
        ops.push_back({h.at(i, j), STARPU_RW});
        to.submit(&cl.gemm_cl, ops, prio.of(j, i - j + 1));
      }
      ops = {{h.at(j, j), STARPU_R}, {h.at(i, j), STARPU_RW}};
      to.submit(&cl.trsm_cl, ops, prio.of(j, i - j));
    }
  }
  to.wait();
}

}  // namespace cholesky::starpu

#endif  // HETERO_BENCH_TASK_CHOLESKY_STARPU_HPP
