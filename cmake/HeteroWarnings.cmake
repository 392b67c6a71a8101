# hetero_warnings: warning flags (and sanitizers) for hetero's own tests, examples and
# benchmarks. Not exported: users of the installed library never see these flags.

add_library(hetero_warnings INTERFACE)
target_compile_options(hetero_warnings INTERFACE -Wall -Wextra -Wpedantic
                                                 $<$<BOOL:${HETERO_WARNINGS_AS_ERRORS}>:-Werror>)

if(HETERO_SANITIZE)
  list(JOIN HETERO_SANITIZE "," hetero_sanitizers)
  target_compile_options(hetero_warnings INTERFACE -fsanitize=${hetero_sanitizers} -fno-omit-frame-pointer
                                                   -fno-sanitize-recover=all)
  target_link_options(hetero_warnings INTERFACE -fsanitize=${hetero_sanitizers})
endif()
