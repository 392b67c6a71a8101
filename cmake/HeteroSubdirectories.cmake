# hetero_add_subdirectories([EXCLUDE <name>...]): adds every folder below the current source
# folder that has a CMakeLists.txt, so that a module's tests, benchmarks or examples join the
# build by existing, without an edit to a shared list.
function(hetero_add_subdirectories)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "" "EXCLUDE")
  file(GLOB children LIST_DIRECTORIES true "${CMAKE_CURRENT_SOURCE_DIR}/*")
  foreach(dir IN LISTS children)
    get_filename_component(name "${dir}" NAME)
    if(IS_DIRECTORY "${dir}" AND EXISTS "${dir}/CMakeLists.txt" AND NOT name IN_LIST arg_EXCLUDE)
      add_subdirectory("${dir}")
    endif()
  endforeach()
endfunction()
