// The known-defect list of core/mpi/known_defects.hpp against the installed MPI: the reproducer
// of each listed defect (and of every unsigned integer type under MPI_MIN and MPI_MAX) runs on
// plain MPI and its result is checked against the serial answer. A wrong result the list does
// not know fails the test (hetero would pass it on); a listed defect the library no longer has
// is reported (hetero then combines on its own where it need not, which is correct, only slower).
#include <hetero/core/mpi/known_defects.hpp>

#include <catch2/catch_test_macros.hpp>

#include <cstdint>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>

using namespace hetero;

TEST_CASE("the MPI library's name and version are read from its version text", "[core][mpi]") {
  const auto mpich = detail::parse_mpi_library("MPICH Version:\t4.0.2\nMPICH Release date:\tThu Apr  7 2022\n");
  CHECK(mpich.name == "MPICH");
  CHECK(mpich.version == std::array<int, 3>{4, 0, 2});
  CHECK(mpich.text == "MPICH Version:\t4.0.2");
  const auto ompi = detail::parse_mpi_library("Open MPI v4.1.2, package: Debian OpenMPI, ident: 4.1.2");
  CHECK(ompi.name == "Open MPI");
  CHECK(ompi.version == std::array<int, 3>{4, 1, 2});
  const auto short_version = detail::parse_mpi_library("MPICH Version:      4.1");
  CHECK(short_version.version == std::array<int, 3>{4, 1, 0});
  const auto other = detail::parse_mpi_library("Intel(R) MPI Library 2021.10 for Linux* OS");
  CHECK(other.name == "Intel(R)");
  CHECK(other.version == std::array<int, 3>{0, 0, 0});
  for (const auto& defect : detail::known_mpi_defects()) {
    INFO(defect.report);
    CHECK_FALSE(detail::applies_to(defect, other));  // another library: nothing is assumed
    CHECK(defect.first <= defect.last);
  }
  CHECK(detail::applies_to(detail::known_mpi_defects()[0], mpich));
}

namespace {

// One element per rank: `low` on rank 0, `high` (top bit set) on the others; MPI_Allreduce and
// MPI_Reduce with `op`. True when MPI's result differs from the serial answer.
template <class T>
bool mpi_gets_wrong(MPI_Datatype type, MPI_Op op) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const T low = 5;
  const T high = static_cast<T>(std::numeric_limits<T>::max() - 7);
  const T mine = rank == 0 ? low : high;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const T expected = size == 1 ? mine : (op == MPI_MIN ? low : high);
  T all = 0, at_root = expected;
  MPI_Allreduce(&mine, &all, 1, type, op, MPI_COMM_WORLD);
  MPI_Reduce(&mine, &at_root, 1, type, op, 0, MPI_COMM_WORLD);
  int wrong = (all != expected || (rank == 0 && at_root != expected)) ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return wrong != 0;
}

struct probe_result {
  int wrong = 0, wrong_unlisted = 0, listed_but_right = 0, probed = 0;
  std::ostringstream lines;
};

template <class T>
void probe(probe_result& r, MPI_Datatype type, const char* type_name) {
  for (MPI_Op op : {MPI_MIN, MPI_MAX}) {
    const bool wrong = mpi_gets_wrong<T>(type, op);
    const auto* defect = detail::mpi_reduction_defect(op, type);
    ++r.probed;
    r.wrong += wrong;
    r.wrong_unlisted += wrong && defect == nullptr;
    r.listed_but_right += !wrong && defect != nullptr;
    if (wrong || defect)
      r.lines << "  " << (op == MPI_MIN ? "MPI_MIN" : "MPI_MAX") << " on " << type_name << ": "
              << (wrong ? "wrong" : "right") << ", "
              << (defect ? "guarded (" + std::string(defect->report) + ")" : std::string("NOT in hetero's list"))
              << "\n";
  }
}

}  // namespace

TEST_CASE("the installed MPI's wrong reductions are all in hetero's known-defect list", "[core][mpi]") {
  int size = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (size == 1) SKIP("one rank: MPI combines nothing");
  probe_result r;
  probe<std::uint8_t>(r, MPI_UINT8_T, "MPI_UINT8_T");
  probe<std::uint16_t>(r, MPI_UINT16_T, "MPI_UINT16_T");
  probe<std::uint32_t>(r, MPI_UINT32_T, "MPI_UINT32_T");
  probe<std::uint64_t>(r, MPI_UINT64_T, "MPI_UINT64_T");
  probe<unsigned char>(r, MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR");
  probe<unsigned short>(r, MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT");
  probe<unsigned>(r, MPI_UNSIGNED, "MPI_UNSIGNED");
  probe<unsigned long>(r, MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG");
  probe<unsigned long long>(r, MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG");
  if (rank == 0) {
    std::cout << "installed MPI: " << installed_mpi_library().text << "\n"
              << "MPI_MIN/MPI_MAX of unsigned integers, 5 against max-7 on " << size << " ranks: " << r.wrong
              << " of " << r.probed << " (op, type) pairs wrong; " << r.wrong_unlisted
              << " of them not in hetero's list; " << r.listed_but_right
              << " listed but right (the installed MPI no longer has the defect)\n"
              << r.lines.str() << std::flush;
  }
  CHECK(r.wrong_unlisted == 0);
  if (r.listed_but_right > 0)
    WARN(r.listed_but_right
         << " listed defect(s) not seen in this MPI: hetero combines on its own where it need not");
}
