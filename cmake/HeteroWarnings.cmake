# hetero_warnings: warning flags (and sanitizers) for hetero's own tests, examples and
# benchmarks. Not exported: users of the installed library never see these flags.
#
# hetero_test_target(<target>): marks a test program (or an object library of one): it gets
# HETERO_TEST_COMPILE_OPTIONS, and the sanitizers when HETERO_SANITIZE_SCOPE is `tests`. The
# test command's main build uses that: its examples and benchmarks are optimised programs
# without sanitizers, its tests run under ASan + UBSan (hetero.sh).

add_library(hetero_warnings INTERFACE)
target_compile_options(hetero_warnings INTERFACE -Wall -Wextra -Wpedantic
                                                 $<$<BOOL:${HETERO_WARNINGS_AS_ERRORS}>:-Werror>)
add_library(hetero_test_flags INTERFACE)
target_link_libraries(hetero_test_flags INTERFACE hetero_warnings)

if(NOT HETERO_SANITIZE_SCOPE MATCHES "^(all|tests)$")
  message(FATAL_ERROR "HETERO_SANITIZE_SCOPE is '${HETERO_SANITIZE_SCOPE}'; allowed: 'all' or 'tests'")
endif()
if(HETERO_SANITIZE)
  list(JOIN HETERO_SANITIZE "," hetero_sanitizers)
  if(HETERO_SANITIZE_SCOPE STREQUAL "all")
    set(sanitized hetero_warnings)
  else()
    set(sanitized hetero_test_flags)
  endif()
  target_compile_options(${sanitized} INTERFACE -fsanitize=${hetero_sanitizers} -fno-omit-frame-pointer
                                                -fno-sanitize-recover=all)
  if(HETERO_SANITIZE_SKIP)
    # After -fsanitize: the compiler reads these flags in order.
    list(JOIN HETERO_SANITIZE_SKIP "," hetero_sanitize_skip)
    target_compile_options(${sanitized} INTERFACE -fno-sanitize=${hetero_sanitize_skip})
  endif()
  target_link_options(${sanitized} INTERFACE -fsanitize=${hetero_sanitizers})
endif()

function(hetero_test_target target)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "OBJECT_LIBRARY")
    target_link_libraries(${target} PUBLIC hetero_test_flags)
  else()
    target_link_libraries(${target} PRIVATE hetero_test_flags)
  endif()
  if(HETERO_TEST_COMPILE_OPTIONS)
    target_compile_options(${target} PRIVATE ${HETERO_TEST_COMPILE_OPTIONS})
  endif()
endfunction()
