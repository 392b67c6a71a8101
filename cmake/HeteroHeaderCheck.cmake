# hetero_public_headers(<out var> <include dir>): the public headers (relative to the include
# dir), those of a `backend/` folder only when their backend is enabled in Kokkos.
function(hetero_public_headers out include_dir)
  file(GLOB_RECURSE headers RELATIVE "${include_dir}" CONFIGURE_DEPENDS "${include_dir}/hetero/*.hpp")
  set(enabled)
  foreach(header IN LISTS headers)
    if(header MATCHES "/backend/([a-z_]+)\\.hpp$")
      string(TOUPPER "${CMAKE_MATCH_1}" backend)
      if(NOT backend IN_LIST Kokkos_DEVICES)
        continue()
      endif()
    endif()
    # The io module's headers need parallel HDF5: checked only with it (hetero::io).
    if(header MATCHES "^hetero/io[/.]" AND NOT HETERO_ENABLE_IO)
      continue()
    endif()
    list(APPEND enabled "${header}")
  endforeach()
  set(${out} "${enabled}" PARENT_SCOPE)
endfunction()

# hetero_write_generated(<file> <text>): writes a generated source only when its text changed, so
# that configuring again rebuilds nothing.
function(hetero_write_generated file text)
  set(old "")
  if(EXISTS "${file}")
    file(READ "${file}" old)
  endif()
  if(NOT old STREQUAL text)
    file(WRITE "${file}" "${text}")
  endif()
endfunction()

# hetero_add_header_check(<target> <include dir>): an object library with one translation unit
# per public header, each including only that header (twice, to check its include guard).
# Headers under a `backend/` folder are checked only when their backend is enabled. The test
# command builds it once (release build), not again in the sanitizer build.
function(hetero_add_header_check target include_dir)
  hetero_public_headers(headers "${include_dir}")
  set(sources)
  foreach(header IN LISTS headers)
    string(MAKE_C_IDENTIFIER "${header}" stem)
    set(source "${CMAKE_CURRENT_BINARY_DIR}/${target}/${stem}.cpp")
    hetero_write_generated("${source}" "#include <${header}>\n#include <${header}>\n")
    list(APPEND sources "${source}")
  endforeach()
  add_library(${target} OBJECT ${sources})
  target_link_libraries(${target} PRIVATE hetero::hetero hetero_warnings)
  if(HETERO_ENABLE_IO)
    target_link_libraries(${target} PRIVATE hetero::io)
  endif()
  # Only whether each header compiles matters, not its code: no optimiser (the build's -O2
  # roughly doubled the time of this check, one translation unit per header).
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -O0)
  endif()
endfunction()
