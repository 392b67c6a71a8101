/// @file
/// The origin side of a one-sided transfer: the contiguous memory MPI reads (put) or writes
/// (get), and how it reaches the local array's elements. MPI's memory is host memory when
/// the window is staged or the array lives on the host, else the array's own space; the local
/// elements are used directly when they are one run in memory MPI can use.
#ifndef HETERO_DISTARRAY_DETAIL_ORIGIN_HPP
#define HETERO_DISTARRAY_DETAIL_ORIGIN_HPP

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

#include "hetero/distarray/concepts.hpp"
#include "hetero/distarray/detail/rows.hpp"

namespace hetero::detail {

template <class T, class ArraySpace, class LocalSpace>
class origin_side {
 public:
  /// `n` elements; `local_run` is where they sit when the local side is one contiguous run
  /// (nullptr otherwise).
  origin_side(bool staged, T* local_run, std::size_t n, const char* label)
      : m_on_host(staged || host_addressable<ArraySpace>),
        m_same_side(m_on_host ? host_addressable<LocalSpace> : std::is_same_v<LocalSpace, ArraySpace>),
        m_n(n) {
    if (m_same_side && local_run != nullptr) {  // the fast path allocates nothing
      m_direct = true;
      m_origin = local_run;
      return;
    }
    const auto alloc = Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label));
    if (m_on_host) {
      m_host = Kokkos::View<T*, Kokkos::HostSpace>(alloc, n);
      m_origin = m_host.data();
    } else {
      m_device = Kokkos::View<T*, ArraySpace>(alloc, n);
      m_origin = m_device.data();
    }
    if (!m_same_side) m_local = Kokkos::View<T*, LocalSpace>(alloc, n);
  }

  /// Where MPI reads or writes.
  [[nodiscard]] T* data() const noexcept { return m_origin; }
  /// Whether MPI works on the local elements themselves.
  [[nodiscard]] bool direct() const noexcept { return m_direct; }

  /// After gets: scatters the origin into the local elements along `rows`.
  void to_local(const row_list<LocalSpace>& rows, T* local_data) const {
    if (m_direct) return;
    if (!m_same_side) exchange(true);
    rows.scatter(local_data, static_cast<const T*>(m_same_side ? m_origin : m_local.data()));
  }

  /// Before puts: gathers the local elements along `rows` into the origin.
  void from_local(const row_list<LocalSpace>& rows, const T* local_data) const {
    if (m_direct) return;
    rows.gather(local_data, m_same_side ? m_origin : m_local.data());
    if (!m_same_side) exchange(false);
  }

 private:
  void exchange(bool to_local) const {
    flat_view<T, LocalSpace> l(m_local.data(), m_n);
    if (m_on_host) {
      flat_view<T, Kokkos::HostSpace> o(m_origin, m_n);
      to_local ? Kokkos::deep_copy(l, o) : Kokkos::deep_copy(o, l);
    } else {
      flat_view<T, ArraySpace> o(m_origin, m_n);
      to_local ? Kokkos::deep_copy(l, o) : Kokkos::deep_copy(o, l);
    }
  }

  bool m_on_host;
  bool m_same_side;
  bool m_direct = false;
  std::size_t m_n;
  T* m_origin = nullptr;
  Kokkos::View<T*, Kokkos::HostSpace> m_host;
  Kokkos::View<T*, ArraySpace> m_device;
  Kokkos::View<T*, LocalSpace> m_local;
};

}  // namespace hetero::detail

#endif  // HETERO_DISTARRAY_DETAIL_ORIGIN_HPP
