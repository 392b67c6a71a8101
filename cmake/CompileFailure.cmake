# Compiles one compile-failure target (hetero_add_compile_failure) by itself, for its test:
#   cmake -DNINJA=<ninja> -DBUILD_DIR=<build folder> -DTARGET=<target> [-DEXPECT=<regexes>] -P CompileFailure.cmake
# The commands come from `ninja -t commands`, which reads the build file and writes nothing
# (neither ninja's log nor its dependency log), so several such tests can compile at once; the
# compiler's output is printed for the test's PASS_REGULAR_EXPRESSION. EXPECT: regular
# expressions joined by "@HETERO_SEP@", each of which the output must match; the script then says
# "all <n> expected messages found", or names those it missed.
foreach(v NINJA BUILD_DIR TARGET)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "CompileFailure.cmake needs -D${v}=...")
  endif()
endforeach()
execute_process(COMMAND "${NINJA}" -C "${BUILD_DIR}" -t commands "${TARGET}" OUTPUT_VARIABLE commands
                ERROR_VARIABLE why RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR commands STREQUAL "")
  message(FATAL_ERROR "ninja lists no commands for ${TARGET} (exit ${rc}): ${why}")
endif()
string(REPLACE "\n" ";" commands "${commands}")
foreach(command IN LISTS commands)
  if(command STREQUAL "")
    continue()
  endif()
  execute_process(COMMAND sh -c "${command}" WORKING_DIRECTORY "${BUILD_DIR}" RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message("${out}")
  if(NOT rc EQUAL 0 AND DEFINED EXPECT)
    string(REPLACE "@HETERO_SEP@" ";" expected "${EXPECT}")
    set(missed "")
    foreach(regex IN LISTS expected)
      if(NOT out MATCHES "${regex}")
        list(APPEND missed "${regex}")
      endif()
    endforeach()
    list(LENGTH expected count)
    if(missed STREQUAL "")
      message("all ${count} expected messages found")
    else()
      message(FATAL_ERROR "${TARGET}: the compiler did not say: ${missed}")
    endif()
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${TARGET}: the compile failed (exit ${rc})")
  endif()
endforeach()
message(FATAL_ERROR "${TARGET} compiled, but it must not")
