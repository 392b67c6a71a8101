/// @file
/// What a collective accepts as a buffer: a contiguous Kokkos View (host or device memory), a
/// contiguous sized range (`std::vector`, `std::array`, `std::span`, ...) or one trivially
/// copyable value; and `buffer_ref`, the (pointer, size, memory space) the algorithms work on.
#ifndef HETERO_COMM_BUFFER_HPP
#define HETERO_COMM_BUFFER_HPP

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <memory>
#include <ranges>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "hetero/core/error.hpp"

namespace hetero {

/// An element type a collective can move: its bytes are copied, never constructed. Pointers
/// are refused (an address means nothing in another process).
template <class T>
concept transferable = std::is_trivially_copyable_v<T> && std::is_object_v<T> && !std::is_pointer_v<T>;

/// A Kokkos View of any rank, layout and memory space.
template <class B>
concept kokkos_view = Kokkos::is_view<std::remove_cvref_t<B>>::value;

/// A host range whose elements are contiguous and counted (`std::vector`, `std::array`, ...).
template <class B>
concept contiguous_host_range = !kokkos_view<B> && std::ranges::contiguous_range<B> &&
                                std::ranges::sized_range<B> && transferable<std::ranges::range_value_t<B>>;

/// One value that is not a range: collectives treat it as a buffer of one element.
template <class B>
concept single_value = !kokkos_view<B> && !std::ranges::range<B> && transferable<std::remove_cvref_t<B>>;

/// Anything a collective takes as a buffer.
template <class B>
concept comm_buffer = (kokkos_view<B> && transferable<typename std::remove_cvref_t<B>::non_const_value_type>) ||
                      contiguous_host_range<B> || single_value<B>;

/// A buffer reduced to what the algorithms need: `size` elements of `T` at `data`, in
/// `MemorySpace`. `T` is const for buffers that are only read.
template <class T, class MemorySpace>
struct buffer_ref {
  using value_type = T;                         ///< The element type as seen through `data` (const if read-only).
  using element_type = std::remove_const_t<T>;  ///< The element type without const.
  using memory_space = MemorySpace;             ///< The Kokkos memory space `data` points into.
  /// True when the host may read and write `data` directly.
  static constexpr bool host_accessible = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible;

  T* data = nullptr;     ///< The first element (null for an empty buffer).
  std::size_t size = 0;  ///< The number of elements (not bytes).

  /// The same buffer, read-only.
  [[nodiscard]] buffer_ref<const element_type, MemorySpace> as_const() const noexcept { return {data, size}; }
  /// Read-only access converts implicitly.
  template <class U = T>
  requires(!std::is_const_v<U>) operator buffer_ref<const U, MemorySpace>() const noexcept { return {data, size}; }
};

namespace detail {

template <class B>
struct buffer_traits;

template <kokkos_view B>
struct buffer_traits<B> {
  using view = std::remove_cvref_t<B>;
  using value_type = typename view::value_type;  // const for views of const
  using element_type = typename view::non_const_value_type;
  using memory_space = typename view::memory_space;
};

template <contiguous_host_range B>
struct buffer_traits<B> {
  using value_type = std::remove_reference_t<std::ranges::range_reference_t<B>>;
  using element_type = std::remove_cv_t<value_type>;
  using memory_space = Kokkos::HostSpace;
};

template <single_value B>
struct buffer_traits<B> {
  using value_type = std::remove_reference_t<B>;
  using element_type = std::remove_cvref_t<B>;
  using memory_space = Kokkos::HostSpace;
};

template <class B>
using buffer_element_t = typename buffer_traits<B>::element_type;
template <class B>
using buffer_space_t = typename buffer_traits<B>::memory_space;

/// The (pointer, size) of a buffer argument; `collective` and `argument` name it in error
/// messages (built only on error: this runs on every call). Throws `invalid_argument` for a
/// View that is not contiguous.
template <class B>
auto as_buffer(B& buffer, std::string_view collective, std::string_view argument) {
  using traits = buffer_traits<B>;
  using ref = buffer_ref<typename traits::value_type, typename traits::memory_space>;
  if constexpr (kokkos_view<B>) {
    if (!buffer.span_is_contiguous())
      raise<invalid_argument>(collective, ": ", argument, ": the View \"", buffer.label(),
                              "\" is not contiguous (its ", buffer.size(), " elements span ", buffer.span(),
                              "); pass a contiguous View");
    return ref{buffer.data(), buffer.size()};
  } else if constexpr (contiguous_host_range<B>) {
    return ref{std::ranges::data(buffer), static_cast<std::size_t>(std::ranges::size(buffer))};
  } else {
    return ref{std::addressof(buffer), 1};
  }
}

/// Checks that a buffer holds at least `needed` elements.
template <class T, class M>
void require_size(const buffer_ref<T, M>& b, std::size_t needed, std::string_view collective,
                  std::string_view what, std::string_view why = {}) {
  if (b.size < needed)
    raise<invalid_argument>(collective, ": ", what, " holds ", b.size, " element(s) but ", needed, " are needed",
                            why.empty() ? "" : " (", why, why.empty() ? "" : ")", "; pass a larger buffer");
}

/// A new buffer of `n` elements shaped like the argument `like`: a 1-D View in the same memory
/// space for a View, a `std::vector` for a range, and, when `n` is 1, a plain value for a value.
template <class B>
auto make_result(const B& like, std::size_t n, std::string_view label) {
  using element = buffer_element_t<B>;
  static_assert(kokkos_view<B> || !std::is_same_v<element, bool>,
                "hetero: a collective cannot return bools in a std::vector<bool> (its elements are bits, not "
                "contiguous bools): pass recv_buf(...) with a std::array<bool, N>, a std::span<bool> or a "
                "Kokkos::View<bool*>, or send std::uint8_t or char instead of bool");
  (void)like;
  if constexpr (kokkos_view<B>) {
    return Kokkos::View<element*, buffer_space_t<B>>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), n);
  } else {
    return std::vector<element>(n);
  }
}

}  // namespace detail
}  // namespace hetero

#endif  // HETERO_COMM_BUFFER_HPP
