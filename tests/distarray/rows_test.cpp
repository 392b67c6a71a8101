// The transfer unit under reflect and gmove: rows of random strided boxes enumerate exactly
// the boxes' elements in row-major order, contiguous boxes merge into one row, and every
// copy kernel (serial, one row per thread, one row per team as on devices) moves every element.
#include <hetero/distarray/detail/rows.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <numeric>
#include <vector>

#include "distarray_support.hpp"

using hetero::detail::row;
using hetero::detail::row_kernel;
using hetero::detail::row_list;
using hetero::detail::strided_box;

namespace {

// The storage offsets of a box's elements, in row-major order.
template <int R>
std::vector<std::int64_t> offsets_of(const strided_box<R>& b) {
  std::vector<std::int64_t> out;
  std::array<std::int64_t, R> i{};
  if (b.size() == 0) return out;
  while (true) {
    std::int64_t at = b.offset;
    for (int d = 0; d < R; ++d) at += i[d] * b.stride[d];
    out.push_back(at);
    int d = R - 1;
    for (; d >= 0; --d) {
      if (++i[d] < b.count[d]) break;
      i[d] = 0;
    }
    if (d < 0) break;
  }
  return out;
}

std::vector<std::int64_t> offsets_of(const std::vector<row>& rows) {
  std::vector<std::int64_t> out;
  for (const auto& r : rows) {
    REQUIRE(r.buffer_offset == static_cast<std::int64_t>(out.size()));
    for (std::int64_t i = 0; i < r.count; ++i) out.push_back(r.storage_offset + i * r.stride);
  }
  return out;
}

// A random box inside a row-major array of `extents`: start, counts and steps per axis.
template <int R, class Rng>
strided_box<R> random_box(Rng& rng, const std::array<std::int64_t, R>& extents) {
  strided_box<R> b;
  std::int64_t stride = 1;
  for (int d = R - 1; d >= 0; --d) {
    const std::int64_t step = dist_test::uniform(rng, 1, 3), begin = dist_test::uniform(rng, 0, extents[d] - 1);
    b.count[d] = dist_test::uniform(rng, 0, (extents[d] - 1 - begin) / step + 1);
    b.stride[d] = step * stride;
    b.offset += begin * stride;
    stride *= extents[d];
  }
  return b;
}

template <int R>
void check_random_boxes(std::uint64_t stream) {
  auto rng = hetero::testing::rng(stream);
  dist_test::mismatches wrong;
  for (int trial = 0; trial < 200; ++trial) {
    std::array<std::int64_t, R> extents{};
    for (auto& e : extents) e = dist_test::uniform(rng, 1, R == 1 ? 60 : 9);
    std::vector<strided_box<R>> boxes(static_cast<std::size_t>(dist_test::uniform(rng, 1, 3)));
    std::vector<std::int64_t> expected;
    for (auto& b : boxes) {
      b = random_box<R>(rng, extents);
      const auto o = offsets_of(b);
      expected.insert(expected.end(), o.begin(), o.end());
    }
    std::vector<row> rows;
    std::int64_t cursor = 0;
    for (const auto& b : boxes) hetero::detail::append_rows(b, rows, cursor, 0);
    wrong.expect(cursor == static_cast<std::int64_t>(expected.size()), "element count, trial ", trial);
    wrong.expect(offsets_of(rows) == expected, "row offsets, trial ", trial);
    wrong.expect(offsets_of(hetero::detail::split_long_rows(rows, 3)) == expected, "split rows, trial ", trial);
  }
  DIST_CHECK_NO_MISMATCH(wrong);
}

}  // namespace

TEST_CASE("rows enumerate random strided boxes in row-major order", "[dist][rows]") {
  check_random_boxes<1>(101);
  check_random_boxes<2>(102);
  check_random_boxes<3>(103);
}

TEST_CASE("contiguous boxes become one row, a message boundary stops merging", "[dist][rows]") {
  strided_box<2> whole{5, {4, 10}, {10, 1}};
  CHECK(whole.contiguous());
  std::vector<row> rows;
  std::int64_t cursor = 0;
  hetero::detail::append_rows(whole, rows, cursor, 0);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].count == 40);
  strided_box<2> column{3, {6, 1}, {10, 1}};  // one column: a single strided row
  CHECK_FALSE(column.contiguous());
  hetero::detail::append_rows(column, rows, cursor, rows.size());
  REQUIRE(rows.size() == 2);
  CHECK(rows[1].stride == 10);
  CHECK(rows[1].count == 6);
  CHECK(rows[1].buffer_offset == 40);
}

TEMPLATE_TEST_CASE("every copy kernel gathers and scatters every element", "[dist][rows]", double,
                   dist_test::particle) {
  auto rng = hetero::testing::rng(104);
  const std::array<std::int64_t, 3> extents{7, 9, 11};
  std::vector<TestType> storage(7 * 9 * 11);
  for (std::size_t i = 0; i < storage.size(); ++i)
    storage[i] = dist_test::value_at<TestType>(std::array<std::int64_t, 1>{static_cast<std::int64_t>(i)}, 1);
  dist_test::mismatches wrong;
  for (auto kernel : {row_kernel::serial, row_kernel::range, row_kernel::team, row_kernel::automatic}) {
    for (int trial = 0; trial < 20; ++trial) {
      const auto box = random_box<3>(rng, extents);
      std::vector<row> rows;
      std::int64_t n = 0;
      hetero::detail::append_rows(box, rows, n, 0);
      const row_list<Kokkos::HostSpace> list(rows);
      CHECK(list.elements() == n);
      std::vector<TestType> buffer(static_cast<std::size_t>(n));
      list.gather(storage.data(), buffer.data(), kernel);
      const auto offsets = offsets_of(box);
      for (std::size_t i = 0; i < offsets.size(); ++i)
        wrong.expect(buffer[i] == storage[static_cast<std::size_t>(offsets[i])], "gathered element ", i);
      std::vector<TestType> target(storage.size());
      list.scatter(target.data(), buffer.data(), kernel);
      for (std::size_t i = 0; i < offsets.size(); ++i)
        wrong.expect(target[static_cast<std::size_t>(offsets[i])] == buffer[i], "scattered element ", i);
    }
  }
  DIST_CHECK_NO_MISMATCH(wrong);
}
