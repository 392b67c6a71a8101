# Builds the API reference (cmake -DDOXYGEN=<doxygen> -DDIR=<build>/api -P ApiReference.cmake)
# and fails on any Doxygen warning, printing them: a public name without a comment, a broken
# reference. Passes with "API reference written: <DIR>/html/index.html".
file(REMOVE "${DIR}/warnings.log")
execute_process(COMMAND "${DOXYGEN}" "${DIR}/Doxyfile" WORKING_DIRECTORY "${DIR}" RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE out)
set(warnings "")
if(EXISTS "${DIR}/warnings.log")
  file(READ "${DIR}/warnings.log" warnings)
endif()
if(NOT rc EQUAL 0 OR NOT warnings STREQUAL "")
  message("${out}")
  message(FATAL_ERROR "Doxygen failed (exit ${rc}); every public name needs a /// comment and every reference a "
                      "target:\n${warnings}")
endif()
message("API reference written: ${DIR}/html/index.html")
