/// @file
/// The MPI library in use, and the one list of what released MPI libraries are known to
/// compute wrong: an (operation, datatype) pair of a library's version range, with the public
/// report that shows it. hetero asks `mpi_reduction_is_wrong` before it hands a built-in
/// operation to MPI, and combines with its own function where the answer is yes. The test
/// `core_known_defects_test` reruns each reproducer against the installed library.
#ifndef HETERO_CORE_MPI_KNOWN_DEFECTS_HPP
#define HETERO_CORE_MPI_KNOWN_DEFECTS_HPP

#include <mpi.h>

#include <array>
#include <charconv>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hetero {

/// The MPI library this program runs on, from `MPI_Get_library_version`.
struct mpi_library {
  std::string name;              ///< "MPICH", "Open MPI", or the first word of the version text
  std::array<int, 3> version{};  ///< major, minor, patch (0 where the text has none)
  std::string text;              ///< the first line of the library's own version text
};

/// The library in use (parsed once; MPI must be initialised).
const mpi_library& installed_mpi_library();

namespace detail {

/// A wrong result a released MPI library is known to give for a built-in operation.
struct mpi_known_defect {
  std::string_view library;  ///< `mpi_library::name` it applies to
  std::array<int, 3> first;  ///< first version with the defect
  std::array<int, 3> last;   ///< last version with it (inclusive)
  std::string_view what;     ///< what goes wrong, in words
  std::string_view report;   ///< the public report
  bool (*affects)(MPI_Op, MPI_Datatype);
};

inline bool is_min_or_max(MPI_Op op) { return op == MPI_MIN || op == MPI_MAX; }

inline bool is_unsigned_integer(MPI_Datatype type) {
  for (MPI_Datatype u : {MPI_UINT8_T, MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T, MPI_UNSIGNED_CHAR,
                         MPI_UNSIGNED_SHORT, MPI_UNSIGNED, MPI_UNSIGNED_LONG, MPI_UNSIGNED_LONG_LONG})
    if (type == u) return true;
  return false;
}

/// The list. Each entry is guarded for the whole version range its report gives; where the
/// report does not say which releases have the defect, the range is the widest it allows.
inline std::span<const mpi_known_defect> known_mpi_defects() {
  static const mpi_known_defect list[] = {
      {"MPICH",
       {4, 0, 0},
       {4, 0, 2},
       "MPI_MIN and MPI_MAX compare every unsigned integer type as signed",
       "https://github.com/pmodels/mpich/issues/6083",
       [](MPI_Op op, MPI_Datatype type) { return is_min_or_max(op) && is_unsigned_integer(type); }},
      {"MPICH",
       {4, 1, 0},
       {4, 3, 2},
       "MPI_MIN and MPI_MAX compare MPI_UNSIGNED_LONG_LONG as signed",
       "https://github.com/pmodels/mpich/issues/7507",
       [](MPI_Op op, MPI_Datatype type) { return is_min_or_max(op) && type == MPI_UNSIGNED_LONG_LONG; }},
      {"Open MPI",
       {4, 0, 7},
       {4, 1, 4},
       "MPI_MIN and MPI_MAX compare MPI_UNSIGNED_LONG as signed",
       "https://github.com/open-mpi/ompi/issues/10525",
       [](MPI_Op op, MPI_Datatype type) {
         return is_min_or_max(op) && (type == MPI_UNSIGNED_LONG || type == MPI_UINT64_T);
       }},
  };
  return list;
}

/// Whether `defect` applies to `library` (name and version range).
inline bool applies_to(const mpi_known_defect& defect, const mpi_library& library) {
  return defect.library == library.name && defect.first <= library.version && library.version <= defect.last;
}

/// The known defect of the installed library that makes MPI's `op` on `type` wrong, or null.
/// Asked by every reduction on MPI's path: the list is matched to the library once.
inline const mpi_known_defect* mpi_reduction_defect(MPI_Op op, MPI_Datatype type) {
  static const std::vector<const mpi_known_defect*> installed = [] {
    std::vector<const mpi_known_defect*> matching;
    for (const mpi_known_defect& defect : known_mpi_defects())
      if (applies_to(defect, installed_mpi_library())) matching.push_back(&defect);
    return matching;
  }();
  for (const mpi_known_defect* defect : installed)
    if (defect->affects(op, type)) return defect;
  return nullptr;
}

/// Whether MPI's built-in `op` on `type` gives a wrong result in the installed library.
inline bool mpi_reduction_is_wrong(MPI_Op op, MPI_Datatype type) {
  return mpi_reduction_defect(op, type) != nullptr;
}

/// Parses `MPI_Get_library_version`'s text: "MPICH Version:\t4.0.2 ...", "Open MPI v4.1.2, ...".
inline mpi_library parse_mpi_library(std::string_view text) {
  mpi_library library;
  library.text = std::string(text.substr(0, text.find('\n')));
  std::string_view rest = text;
  if (text.starts_with("MPICH")) {
    library.name = "MPICH";
    rest = text.substr(5);
  } else if (text.starts_with("Open MPI")) {
    library.name = "Open MPI";
    rest = text.substr(8);
  } else {
    library.name = std::string(text.substr(0, text.find_first_of(" \t\n")));
    return library;  // another library: no version is compared
  }
  const auto digit = rest.find_first_of("0123456789");
  if (digit == std::string_view::npos) return library;
  const char* p = rest.data() + digit;
  const char* end = rest.data() + rest.size();
  for (int& part : library.version) {
    const auto [next, ec] = std::from_chars(p, end, part);
    if (ec != std::errc{}) break;
    p = next;
    if (p == end || *p != '.') break;
    ++p;
  }
  return library;
}

}  // namespace detail

inline const mpi_library& installed_mpi_library() {
  static const mpi_library library = [] {
    char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int length = 0;
    MPI_Get_library_version(text, &length);
    return detail::parse_mpi_library(std::string_view(text, static_cast<std::size_t>(length)));
  }();
  return library;
}

}  // namespace hetero

#endif  // HETERO_CORE_MPI_KNOWN_DEFECTS_HPP
