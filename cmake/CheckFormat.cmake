# Fails when a C++ file of the project differs from what the pinned .clang-format makes of it.
# Run as: cmake -DCLANG_FORMAT=<exe> -DSOURCE_DIR=<project> -P CheckFormat.cmake
file(GLOB_RECURSE files "${SOURCE_DIR}/include/*.hpp" "${SOURCE_DIR}/tests/*.hpp" "${SOURCE_DIR}/tests/*.cpp"
     "${SOURCE_DIR}/bench/*.hpp" "${SOURCE_DIR}/bench/*.cpp" "${SOURCE_DIR}/examples/*.hpp"
     "${SOURCE_DIR}/examples/*.cpp")
execute_process(COMMAND "${CLANG_FORMAT}" --version OUTPUT_VARIABLE version)
string(STRIP "${version}" version)
message(STATUS "checking with ${version}")
execute_process(
  COMMAND "${CLANG_FORMAT}" --style=file --dry-run --Werror ${files}
  WORKING_DIRECTORY "${SOURCE_DIR}"
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "files differ from .clang-format (above); fix with: ${CLANG_FORMAT} -i <file>")
endif()
list(LENGTH files count)
message(STATUS "${count} files formatted as .clang-format says")
