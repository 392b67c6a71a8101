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

# hetero_headers_with_kokkos(<out> <include dir> <header>...): those of the headers that include
# <Kokkos_Core.hpp> unconditionally, themselves or through the hetero headers they include
# unconditionally (outside every #if but the include guard, which every header opens with).
function(hetero_headers_with_kokkos out include_dir)
  file(GLOB_RECURSE all RELATIVE "${include_dir}" CONFIGURE_DEPENDS "${include_dir}/hetero/*.hpp")
  set(stems)
  foreach(header IN LISTS all)
    string(MAKE_C_IDENTIFIER "${header}" stem)
    list(APPEND stems ${stem})
    file(STRINGS "${include_dir}/${header}" lines REGEX "^[ \t]*#[ \t]*(if|endif|include)")
    set(depth 0)
    set(kokkos_${stem} OFF)
    set(uses_${stem})
    foreach(line IN LISTS lines)
      if(line MATCHES "^[ \t]*#[ \t]*if")
        math(EXPR depth "${depth} + 1")
      elseif(line MATCHES "^[ \t]*#[ \t]*endif")
        math(EXPR depth "${depth} - 1")
      elseif(depth EQUAL 1 AND line MATCHES "^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"]")
        set(included "${CMAKE_MATCH_1}")  # the next MATCHES clears CMAKE_MATCH_1
        if(included STREQUAL "Kokkos_Core.hpp")
          set(kokkos_${stem} ON)
        elseif(included MATCHES "^hetero/")
          string(MAKE_C_IDENTIFIER "${included}" used)
          list(APPEND uses_${stem} ${used})
        endif()
      endif()
    endforeach()
  endforeach()
  # Through the includes, until nothing changes (at most the depth of the include graph).
  set(changed ON)
  while(changed)
    set(changed OFF)
    foreach(stem IN LISTS stems)
      if(NOT kokkos_${stem})
        foreach(used IN LISTS uses_${stem})
          if(kokkos_${used})
            set(kokkos_${stem} ON)
            set(changed ON)
            break()
          endif()
        endforeach()
      endif()
    endforeach()
  endwhile()
  set(result)
  foreach(header IN LISTS ARGN)
    string(MAKE_C_IDENTIFIER "${header}" stem)
    if(kokkos_${stem})
      list(APPEND result "${header}")
    endif()
  endforeach()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

# hetero_add_header_check(<target> <include dir>): an object library with one translation unit
# per public header, each including only that header (twice, to check its include guard).
# Headers under a `backend/` folder are checked only when their backend is enabled. The test
# command builds it once (release build), not again in the sanitizer build.
#
# <Kokkos_Core.hpp> comes precompiled to the units of the headers that include it anyway (without
# a condition, themselves or through other hetero headers): parsing it was about a third of
# such a unit's time (hetero/comm.hpp: 6.3 s, 4.1 s with it precompiled). For those the check is
# the same: a header's own code follows all its includes, so it sees the same declarations
# whether Kokkos comes first or later; what it uses but does not include is still missing unless
# Kokkos brings it, as without the precompiled header. The other headers (those that need no
# Kokkos) are checked without it, so that none of them can lean on what Kokkos includes.
function(hetero_add_header_check target include_dir)
  hetero_public_headers(headers "${include_dir}")
  hetero_headers_with_kokkos(with_kokkos "${include_dir}" ${headers})
  set(sources)
  set(plain)
  foreach(header IN LISTS headers)
    string(MAKE_C_IDENTIFIER "${header}" stem)
    set(source "${CMAKE_CURRENT_BINARY_DIR}/${target}/${stem}.cpp")
    hetero_write_generated("${source}" "#include <${header}>\n#include <${header}>\n")
    list(APPEND sources "${source}")
    if(NOT header IN_LIST with_kokkos)
      list(APPEND plain "${source}")
    endif()
  endforeach()
  add_library(${target} OBJECT ${sources})
  target_precompile_headers(${target} PRIVATE <Kokkos_Core.hpp>)
  if(plain)
    set_source_files_properties(${plain} TARGET_DIRECTORY ${target} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
  endif()
  list(LENGTH headers count)
  list(LENGTH with_kokkos kokkos_count)
  message(STATUS "hetero: header check of ${count} headers, ${kokkos_count} with <Kokkos_Core.hpp> precompiled")
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
