/// @file
/// `hetero::distributed_csr`: a sparse matrix whose rows are split in balanced blocks over the
/// ranks of a communicator, stored in a Kokkos memory space, with the two products conjugate
/// gradients needs: against the whole vector (gathered on every rank, the simplest scheme) and
/// against this rank's block plus the few entries of other blocks its rows read (halo).
#ifndef HETERO_LINALG_DISTRIBUTED_CSR_HPP
#define HETERO_LINALG_DISTRIBUTED_CSR_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hetero/comm/communicator.hpp"
#include "hetero/core/error.hpp"
#include "hetero/core/mpi/owned_comm.hpp"
#include "hetero/core/mpi/wait.hpp"
#include "hetero/linalg/csr_matrix.hpp"
#include "hetero/linalg/detail/csr_halo_plan.hpp"
#include "hetero/linalg/detail/vector_kernels.hpp"
#include "hetero/linalg/row_block.hpp"

namespace hetero {

/// A matrix that can hand out any block of its rows (global column indices): a whole
/// `csr_matrix` read from a file, or a generator such as `poisson_matrix`.
template <class S>
concept row_source = requires(const S& s, std::int64_t i) {
  { s.global_rows() } -> std::convertible_to<std::int64_t>;
  { s.rows(i, i) } -> std::same_as<csr_matrix<double>>;
};

/// This rank's rows of a square sparse matrix distributed over a communicator, in the memory of
/// `ExecutionSpace`.
/// <!-- snippet: fragment -->
/// @code
/// hetero::communicator comm;
/// hetero::distributed_csr<> a(hetero::poisson_3d(64), comm);
/// auto x = a.make_halo_vector();   // this rank's rows, then room for the halo
/// auto y = a.make_vector();        // this rank's rows
/// a.multiply_halo(x, y);           // y = A x
/// @endcode
template <class ExecutionSpace = Kokkos::DefaultExecutionSpace>
class distributed_csr {
 public:
  using execution_space = ExecutionSpace;                      ///< Where the products run.
  using memory_space = typename ExecutionSpace::memory_space;  ///< Where the matrix and its vectors live.
  /// A vector in this matrix's memory space.
  using vector_type = Kokkos::View<double*, memory_space>;

  /// Takes this rank's balanced block of the rows of `source` (collective over `comm`, which the
  /// matrix shares: `comm()` is `comm`).
  template <row_source Source>
  distributed_csr(const Source& source, const communicator& comm) : m_comm(comm) {
    m_global_rows = static_cast<std::int64_t>(source.global_rows());
    m_rows = block_rows(m_global_rows, comm.size(), comm.rank());
    const csr_matrix<double> mine = source.rows(m_rows.begin, m_rows.end);
    HETERO_EXPECTS(mine.cols() == m_global_rows, "distributed_csr: the matrix is ", m_global_rows, " x ",
                   mine.cols(), "; it must be square");
    for (int r = 0; r < comm.size(); ++r) m_row_counts.push_back(block_rows(m_global_rows, comm.size(), r).size());
    build(mine);
  }

  /// The communicator first, as in 0.1.
  template <row_source Source>
  [[deprecated(
      "hetero: the communicator comes after what the object is made of: distributed_csr(source, comm); "
      "docs/conventions.md")]] distributed_csr(const communicator& comm, const Source& source)
      : distributed_csr(source, comm) {}

  distributed_csr(const distributed_csr&) = delete;
  distributed_csr& operator=(const distributed_csr&) = delete;

  /// The matrix's ranks, for hetero's collectives.
  [[nodiscard]] const communicator& comm() const noexcept { return m_comm; }
  /// The raw communicator of `comm()` (so a matrix is a `comm_ref` like the other handles).
  [[nodiscard]] MPI_Comm mpi_comm() const noexcept { return m_comm.mpi_comm(); }
  /// Rows (and columns) of the whole matrix.
  [[nodiscard]] std::int64_t global_rows() const noexcept { return m_global_rows; }
  /// This rank's rows.
  [[nodiscard]] row_block rows() const noexcept { return m_rows; }
  /// How many rows this rank holds (`rows().size()`).
  [[nodiscard]] std::size_t local_rows() const noexcept { return static_cast<std::size_t>(m_rows.size()); }
  /// Entries stored for this rank's rows.
  [[nodiscard]] std::size_t local_nonzeros() const noexcept { return m_values.extent(0); }
  /// Rows of every rank, in rank order (the counts of an allgatherv of a vector).
  [[nodiscard]] const std::vector<std::int64_t>& row_counts() const noexcept { return m_row_counts; }
  /// Entries of other ranks this rank's rows read.
  [[nodiscard]] std::size_t halo_size() const noexcept { return m_halo.ghosts(); }
  /// Messages of one halo exchange: ranks this rank receives from plus ranks it sends to (a rank that
  /// does both counts twice).
  [[nodiscard]] std::size_t neighbors() const noexcept { return m_halo.neighbors(); }
  /// `neighbors()`, spelled as in 0.1.
  [[deprecated(
      "hetero: one spelling per word, as MPI and Kokkos spell it: write neighbors(); "
      "docs/conventions.md")]] [[nodiscard]] std::size_t
  neighbours() const noexcept {
    return neighbors();
  }

  /// This rank's diagonal block (the entries whose columns are this rank's rows), in host
  /// memory with columns counted from the block's first row: what a block preconditioner
  /// factors.
  [[nodiscard]] csr_matrix<double> diagonal_block() const {
    const auto ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, m_row_ptr);
    const auto cols = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, m_local_cols);
    const auto values = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, m_values);
    const auto n = static_cast<std::int64_t>(local_rows());
    std::vector<std::int64_t> row_ptr{0}, block_cols;
    std::vector<double> block_values;
    // Room for every entry, halo ones too: growing by doubling moved and faulted in the arrays
    // again (a quarter of block_ic0's setup on Poisson 32^3).
    row_ptr.reserve(static_cast<std::size_t>(n) + 1);
    block_cols.reserve(static_cast<std::size_t>(ptr(static_cast<std::size_t>(n))));
    block_values.reserve(block_cols.capacity());
    for (std::int64_t r = 0; r < n; ++r) {
      for (auto k = ptr(static_cast<std::size_t>(r)); k < ptr(static_cast<std::size_t>(r) + 1); ++k)
        if (cols(static_cast<std::size_t>(k)) < n) {  // else a halo entry
          block_cols.push_back(cols(static_cast<std::size_t>(k)));
          block_values.push_back(values(static_cast<std::size_t>(k)));
        }
      row_ptr.push_back(static_cast<std::int64_t>(block_cols.size()));
    }
    return {n, n, 0, std::move(row_ptr), std::move(block_cols), std::move(block_values)};
  }

  /// A vector of this rank's rows.
  [[nodiscard]] vector_type make_vector(const char* label = "hetero::vector") const {
    return vector_type(std::string(label), local_rows());
  }
  /// A vector of this rank's rows followed by room for its halo (input of `multiply_halo`).
  [[nodiscard]] vector_type make_halo_vector(const char* label = "hetero::halo vector") const {
    return vector_type(std::string(label), local_rows() + halo_size());
  }

  /// y = A x; x holds this rank's rows and room for the halo, which is exchanged first. The
  /// kernels run on `Space` (default: the matrix's own), which must reach its memory: e.g.
  /// `Kokkos::Serial` for a matrix in host memory whose rows are too few to pay for threads.
  template <class Space = ExecutionSpace>
  void multiply_halo(const vector_type& x, const vector_type& y) const {
    HETERO_EXPECTS(x.extent(0) >= local_rows() + halo_size() && y.extent(0) >= local_rows(),
                   "distributed_csr::multiply_halo: x holds ", x.extent(0), " entries (",
                   local_rows() + halo_size(), " needed: rows and halo), y ", y.extent(0), " (", local_rows(),
                   " needed)");
    m_halo.template exchange<Space>(x);
    product<Space>(m_local_cols, x, y);
  }

  /// y = A x with the whole vector x on every rank (global_rows() entries), on `Space` as
  /// `multiply_halo`.
  template <class Space = ExecutionSpace>
  void multiply_global(const vector_type& x, const vector_type& y) const {
    HETERO_EXPECTS(static_cast<std::int64_t>(x.extent(0)) >= m_global_rows && y.extent(0) >= local_rows(),
                   "distributed_csr::multiply_global: x holds ", x.extent(0), " entries (", m_global_rows,
                   " needed), y ", y.extent(0), " (", local_rows(), " needed)");
    product<Space>(m_global_cols, x, y);
  }

 private:
  template <class Space, class Columns>
  void product(const Columns& cols, const vector_type& x, const vector_type& y) const {
    static_assert(Kokkos::SpaceAccessibility<Space, memory_space>::accessible,
                  "hetero: distributed_csr's products run on an execution space that can reach the matrix's "
                  "memory; use the matrix's own space, or Kokkos::Serial for a matrix in host memory");
    detail::spmv(
        Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(0, static_cast<std::int64_t>(local_rows())),
        m_row_ptr, cols, m_values, x, y);
    Space().fence();
  }

  void build(const csr_matrix<double>& mine) {
    const auto cols = mine.col_idx();
    // The ghosts: columns outside this rank's block, sorted (so grouped by owner).
    std::vector<std::int64_t> ghosts;
    for (std::int64_t c : cols)
      if (!m_rows.contains(c)) ghosts.push_back(c);
    std::sort(ghosts.begin(), ghosts.end());
    ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
    HETERO_EXPECTS(local_rows() + ghosts.size() < static_cast<std::size_t>(INT32_MAX),
                   "distributed_csr: ", local_rows() + ghosts.size(), " local and halo entries exceed int");
    std::vector<int> local(cols.size());
    for (std::size_t k = 0; k < cols.size(); ++k) {
      const std::int64_t c = cols[k];
      local[k] = m_rows.contains(c)
                     ? static_cast<int>(c - m_rows.begin)
                     : static_cast<int>(local_rows() +
                                        static_cast<std::size_t>(
                                            std::lower_bound(ghosts.begin(), ghosts.end(), c) - ghosts.begin()));
    }
    m_halo_comm = detail::duplicate_on_arrival(m_comm.mpi_comm(), detail::make_wait_policy(m_comm.mpi_comm()),
                                               "hetero::distributed_csr construction");
    m_halo = detail::csr_halo_plan<memory_space>(m_halo_comm.get(), m_global_rows, m_rows, ghosts);
    m_row_ptr = to_device<std::int64_t>(mine.row_ptr(), "hetero::csr row_ptr");
    m_global_cols = to_device<std::int64_t>(cols, "hetero::csr global columns");
    m_local_cols = to_device<int>(std::span<const int>(local), "hetero::csr local columns");
    m_values = to_device<double>(mine.values(), "hetero::csr values");
  }

  template <class T>
  static Kokkos::View<T*, memory_space> to_device(std::span<const T> host, const char* label) {
    Kokkos::View<T*, memory_space> v(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)),
                                     host.size());
    Kokkos::deep_copy(
        v, Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(host.data(), host.size()));
    return v;
  }

  communicator m_comm;
  detail::owned_comm m_halo_comm;  // its own, so halo messages never meet collectives
  std::int64_t m_global_rows = 0;
  row_block m_rows;
  std::vector<std::int64_t> m_row_counts;
  Kokkos::View<std::int64_t*, memory_space> m_row_ptr;
  Kokkos::View<std::int64_t*, memory_space> m_global_cols;
  Kokkos::View<int*, memory_space> m_local_cols;
  Kokkos::View<double*, memory_space> m_values;
  detail::csr_halo_plan<memory_space> m_halo;
};

}  // namespace hetero

#endif  // HETERO_LINALG_DISTRIBUTED_CSR_HPP
