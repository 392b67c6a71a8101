// The CG a user writes by hand with MPI and Kokkos, the baseline of the CG benchmark: this
// rank's block of rows in CSR (Kokkos Views), the direction vector gathered whole with
// MPI_Allgatherv before each product, dot products by Kokkos::parallel_reduce and MPI_Allreduce.
// Same rows per rank and the same SpMV loop as hetero's allgather variant; no hetero in the
// iteration (the matrix rows come from hetero's readers, as input data).
#ifndef HETERO_BENCH_LINALG_PLAIN_CG_HPP
#define HETERO_BENCH_LINALG_PLAIN_CG_HPP

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <hetero/linalg/csr_matrix.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

namespace plain {

using vector = Kokkos::View<double*>;

class cg {
 public:
  /// `mine`: this rank's rows (global columns); `counts`: rows per rank, in rank order.
  cg(MPI_Comm comm, const hetero::csr_matrix<double>& mine, std::vector<int> counts)
      : m_comm(comm), m_counts(std::move(counts)), m_rows(static_cast<std::size_t>(mine.local_rows())) {
    m_displs.resize(m_counts.size());
    for (std::size_t r = 1; r < m_counts.size(); ++r) m_displs[r] = m_displs[r - 1] + m_counts[r - 1];
    m_row_ptr = Kokkos::View<std::int64_t*>("row_ptr", m_rows + 1);
    m_cols = Kokkos::View<std::int64_t*>("cols", mine.col_idx().size());
    m_values = vector("values", mine.values().size());
    auto rp = Kokkos::create_mirror_view(m_row_ptr);
    auto c = Kokkos::create_mirror_view(m_cols);
    auto v = Kokkos::create_mirror_view(m_values);
    for (std::size_t i = 0; i <= m_rows; ++i) rp(i) = mine.row_ptr()[i];
    for (std::size_t k = 0; k < mine.col_idx().size(); ++k) {
      c(k) = mine.col_idx()[k];
      v(k) = mine.values()[k];
    }
    Kokkos::deep_copy(m_row_ptr, rp);
    Kokkos::deep_copy(m_cols, c);
    Kokkos::deep_copy(m_values, v);
    m_r = vector("r", m_rows);
    m_p = vector("p", m_rows);
    m_q = vector("q", m_rows);
    m_global = vector("p gathered", static_cast<std::size_t>(mine.cols()));
  }

  /// Exactly `iterations` CG iterations for A x = b from x = 0; returns ||r|| of the recurrence.
  double solve(const vector& b, const vector& x, int iterations) {
    Kokkos::deep_copy(x, 0.0);
    Kokkos::deep_copy(m_r, b);
    Kokkos::deep_copy(m_p, b);
    double rho = dot(m_r, m_r);
    for (int k = 0; k < iterations; ++k) {
      multiply();
      const double alpha = rho / dot(m_p, m_q);
      const auto p = m_p, q = m_q, r = m_r;
      Kokkos::parallel_for(
          "plain cg update", m_rows, KOKKOS_LAMBDA(const std::size_t i) {
            x(i) += alpha * p(i);
            r(i) -= alpha * q(i);
          });
      const double rho_next = dot(m_r, m_r);
      const double beta = rho_next / rho;
      Kokkos::parallel_for(
          "plain cg direction", m_rows, KOKKOS_LAMBDA(const std::size_t i) { p(i) = r(i) + beta * p(i); });
      rho = rho_next;
    }
    Kokkos::fence();
    return std::sqrt(rho);
  }

  // (Public: nvcc refuses device lambdas in private member functions.)
  /// q = A p: gather p whole, then each row's sum.
  void multiply() {
    Kokkos::fence();
    MPI_Allgatherv(m_p.data(), static_cast<int>(m_rows), MPI_DOUBLE, m_global.data(), m_counts.data(),
                   m_displs.data(), MPI_DOUBLE, m_comm);
    const auto row_ptr = m_row_ptr;
    const auto cols = m_cols;
    const auto values = m_values;
    const auto p = m_global, q = m_q;
    Kokkos::parallel_for(
        "plain cg spmv", m_rows, KOKKOS_LAMBDA(const std::size_t i) {
          double sum = 0;
          for (auto k = row_ptr(i); k < row_ptr(i + 1); ++k)
            sum += values(k) * p(static_cast<std::size_t>(cols(k)));
          q(i) = sum;
        });
  }

  /// The global dot product.
  double dot(const vector& u, const vector& v) const {
    double local = 0;
    Kokkos::parallel_reduce(
        "plain cg dot", m_rows, KOKKOS_LAMBDA(const std::size_t i, double& s) { s += u(i) * v(i); }, local);
    double sum = 0;
    MPI_Allreduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, m_comm);
    return sum;
  }

 private:
  MPI_Comm m_comm;
  std::vector<int> m_counts, m_displs;
  std::size_t m_rows;
  Kokkos::View<std::int64_t*> m_row_ptr, m_cols;
  vector m_values, m_r, m_p, m_q, m_global;
};

}  // namespace plain

#endif  // HETERO_BENCH_LINALG_PLAIN_CG_HPP
