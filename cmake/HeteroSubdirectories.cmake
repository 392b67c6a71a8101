# hetero_add_subdirectories([FIRST <name>...] [EXCLUDE <name>...]): adds every folder below the
# current source folder that has a CMakeLists.txt, so that a module's tests, benchmarks or
# examples join the build by existing, without an edit to a shared list. The FIRST folders come
# first, in the order given, the others after them by name: Ninja starts the jobs that are ready in
# the order the build file lists them, so a folder whose compile is long goes first and does not
# end the build alone on one core.
function(hetero_add_subdirectories)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "" "FIRST;EXCLUDE")
  file(GLOB children LIST_DIRECTORIES true "${CMAKE_CURRENT_SOURCE_DIR}/*")
  list(REMOVE_DUPLICATES arg_FIRST)
  set(ordered)
  foreach(name IN LISTS arg_FIRST)
    if(NOT EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/${name}/CMakeLists.txt")
      message(FATAL_ERROR "hetero_add_subdirectories: FIRST names '${name}', which is not a folder with a "
                          "CMakeLists.txt in ${CMAKE_CURRENT_SOURCE_DIR}")
    endif()
    list(APPEND ordered "${CMAKE_CURRENT_SOURCE_DIR}/${name}")
  endforeach()
  foreach(dir IN LISTS children)
    get_filename_component(name "${dir}" NAME)
    if(NOT name IN_LIST arg_FIRST)
      list(APPEND ordered "${dir}")
    endif()
  endforeach()
  foreach(dir IN LISTS ordered)
    get_filename_component(name "${dir}" NAME)
    if(IS_DIRECTORY "${dir}" AND EXISTS "${dir}/CMakeLists.txt" AND NOT name IN_LIST arg_EXCLUDE)
      add_subdirectory("${dir}")
    endif()
  endforeach()
endfunction()
