// Files where the application initialised MPI with MPI_THREAD_FUNNELED: write_async, whose I/O
// thread calls MPI-IO, is refused on every rank before anything reaches the file; write() and
// read() from the caller's thread still run, and the file holds every element.
#include <hetero/io.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_exception.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "funneled.hpp"
#include "io_support.hpp"

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::MessageMatches;

TEST_CASE("under MPI_THREAD_FUNNELED write_async is refused and write runs", "[io][thread_level]") {
  if (hetero::testing::provided_multiple()) SKIP("MPI provided MPI_THREAD_MULTIPLE (more than asked)");
  const io_test::scratch dir("io-funneled");
  auto rng = hetero::testing::rng(57);
  using array2 = hetero::distributed_array<double, 2, Kokkos::HostSpace>;
  const array2 a(
      io_test::random_space<2>(rng, {dist_test::uniform(rng, 8, 60), dist_test::uniform(rng, 3, 20)}, nullptr));
  const auto salt = rng();
  io_test::fill(a, salt);
  hetero::h5file out(dir.file("f.h5"), hetero::file_mode::create);
  CHECK_THROWS_MATCHES(
      out.write_async("a", a), hetero::runtime_error,
      MessageMatches(ContainsSubstring("hetero::h5file::write_async writes from the io module's I/O "
                                       "thread and needs MPI_THREAD_MULTIPLE, " +
                                       hetero::testing::provided_text()) &&
                     ContainsSubstring("or use write()")));
  CHECK_FALSE(out.contains("a"));  // refused before anything reached the file
  out.write("a", a);
  out.close();
  hetero::h5file in(dir.file("f.h5"), hetero::file_mode::read);
  array2 back(hetero::index_space<2>(a.space().extents(), hetero::process_grid<2>()));
  in.read("a", back);
  CHECK(io_test::wrong_elements(back, salt) == 0);
}
