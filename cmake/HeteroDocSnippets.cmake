# Every C++ example of the docs compiles: hetero_add_doc_snippets(<target> <source dir>) gathers
# each ```cpp block of README.md and docs/*.md and each `/// @code` block of the public headers
# into one generated translation unit (each block in a namespace of its own, `#line` directives
# pointing back at the document), and builds it as <target>, an executable that prints how many
# blocks were compiled and which were left out. A block is one of:
#  - a program: it contains `int main(` (its main is renamed; its #includes go to the top);
#  - a fragment, marked so just above the block by an HTML comment (hidden by Markdown and
#    Doxygen alike) whose further lines, if any, declare what the fragment uses:
#        <!-- snippet: fragment
#        std::int64_t n = 64;
#        -->
#    The fragment is then the body of a function, after those lines;
#  - declarations, marked `<!-- snippet: declarations -->` (context lines as above): the block
#    sits at namespace scope;
#  - not compiled, marked `<!-- snippet: not compiled: <reason> -->`.
# In a header, the marker's lines are `///` comments like the block's. A block that is not a
# program and has no marker fails the build with an #error at its line that says how to mark it.
# The documents are configure dependencies: editing one regenerates the unit.

# The characters CMake's lists would split or group on (\\ ; [ ]), by their codes, and what
# stands for each of them while the lines are a list.
set(_HDS_ASCII 92 59 91 93)
set(_HDS_CODES @HDS_BS@ @HDS_SEMI@ @HDS_LB@ @HDS_RB@)

# `text` with those characters replaced by their stand-ins (`restore`: the other way round).
function(_hds_escape text out_var restore)
  foreach(_ascii _code IN ZIP_LISTS _HDS_ASCII _HDS_CODES)
    string(ASCII ${_ascii} _char)
    if(restore)
      string(REPLACE "${_code}" "${_char}" text "${text}")
    else()
      string(REPLACE "${_char}" "${_code}" text "${text}")
    endif()
  endforeach()
  set(${out_var} "${text}" PARENT_SCOPE)
endfunction()

# Appends one block (its lines in the list variable named `body_var`, escaped, the first at line
# `first` of `file`; the marker's context lines in `context_var`) to the unit's parts in the
# caller: HDS_INCLUDES, HDS_CODE, and the counters HDS_INDEX, HDS_PROGRAMS, HDS_FRAGMENTS,
# HDS_DECLARATIONS, HDS_SKIPPED (a list of "file:line: reason").
function(_hds_emit file first kind context_var context_first body_var)
  # Each stored line starts with "|" (see _hds_scan), taken off where a line is used.
  math(EXPR HDS_INDEX "${HDS_INDEX} + 1")
  set(_is_program FALSE)
  foreach(_l IN LISTS ${body_var})
    if(_l MATCHES "int main\\(")
      set(_is_program TRUE)
    endif()
  endforeach()
  set(_needs_io FALSE)
  if("${file}" MATCHES "^(docs/io\\.md|include/hetero/io/)" OR "${${body_var}}" MATCHES "hetero/io\\.hpp")
    set(_needs_io TRUE)
  endif()
  if("${kind}" MATCHES "^not compiled")
    string(REGEX REPLACE "^not compiled:? *" "" _why "${kind}")
    list(APPEND HDS_SKIPPED "${file}:${first}: ${_why}")
  elseif(_needs_io AND NOT HDS_WITH_IO)
    list(APPEND HDS_SKIPPED "${file}:${first}: needs hetero::io, which this build has not (HETERO_ENABLE_IO is OFF)")
  elseif(NOT _is_program AND "${kind}" STREQUAL "")
    string(APPEND HDS_CODE "#line ${first} \"${file}\"\n#error \"a code block that is neither a program (int main) "
                           "nor marked: put <!-- snippet: fragment -->, <!-- snippet: declarations --> or "
                           "<!-- snippet: not compiled: <reason> --> above it (cmake/HeteroDocSnippets.cmake)\"\n")
  else()
    set(_lines "")
    foreach(_l IN LISTS ${body_var})
      string(SUBSTRING "${_l}" 1 -1 _l)
      if(_l MATCHES "^[ \t]*#[ \t]*include")
        list(APPEND HDS_INCLUDES "${_l}")
        set(_l "")
      endif()
      if(_is_program)
        string(REPLACE "int main(" "int snippet_main(" _l "${_l}")
      endif()
      string(APPEND _lines "${_l}\n")
    endforeach()
    set(_context_text "")
    foreach(_l IN LISTS ${context_var})
      string(SUBSTRING "${_l}" 1 -1 _l)
      string(APPEND _context_text "${_l}\n")
    endforeach()
    set(_context_line "")
    if(NOT "${_context_text}" STREQUAL "")
      set(_context_line "#line ${context_first} \"${file}\"\n")
    endif()
    string(APPEND HDS_CODE "namespace hetero_doc_snippet_${HDS_INDEX} {\n")
    if(_is_program OR "${kind}" STREQUAL "declarations")  # at namespace scope
      if(_is_program)
        math(EXPR HDS_PROGRAMS "${HDS_PROGRAMS} + 1")
      else()
        math(EXPR HDS_DECLARATIONS "${HDS_DECLARATIONS} + 1")
      endif()
      string(APPEND HDS_CODE "${_context_line}${_context_text}#line ${first} \"${file}\"\n${_lines}")
    elseif("${kind}" STREQUAL "fragment")
      math(EXPR HDS_FRAGMENTS "${HDS_FRAGMENTS} + 1")
      string(APPEND HDS_CODE "[[maybe_unused]] void fragment() {\n${_context_line}${_context_text}"
                             "#line ${first} \"${file}\"\n${_lines}}\n")
    else()
      string(APPEND HDS_CODE "#line ${first} \"${file}\"\n#error \"unknown snippet marker '${kind}' (allowed: "
                             "fragment, declarations, not compiled: <reason>)\"\n")
    endif()
    string(APPEND HDS_CODE "}  // namespace hetero_doc_snippet_${HDS_INDEX}\n")
  endif()
  foreach(_v HDS_INDEX HDS_PROGRAMS HDS_FRAGMENTS HDS_DECLARATIONS HDS_SKIPPED HDS_INCLUDES HDS_CODE)
    set(${_v} "${${_v}}" PARENT_SCOPE)
  endforeach()
endfunction()

# Reads `path` (shown as `name`): Markdown when `markdown`, else a header's `///` comments.
macro(_hds_scan path name markdown)
  file(READ "${path}" _text)
  _hds_escape("${_text}" _all FALSE)
  string(REPLACE "\n" ";" _all "${_all}")
  set(_n 0)
  set(_in_block FALSE)
  set(_in_marker FALSE)
  set(_kind "")
  set(_context "")
  set(_context_first 0)
  set(_body "")
  set(_first 0)
  foreach(_raw IN LISTS _all)
    math(EXPR _n "${_n} + 1")
    string(REGEX REPLACE "\r$" "" _raw "${_raw}")
    if(${markdown})
      set(_t "${_raw}")
      set(_is_text TRUE)
    elseif(_raw MATCHES "^[ \t]*///")
      string(REGEX REPLACE "^[ \t]*/// ?" "" _t "${_raw}")
      set(_is_text TRUE)
    else()
      set(_t "")
      set(_is_text FALSE)
    endif()
    if(_in_block)
      if((${markdown} AND _t MATCHES "^```") OR (NOT ${markdown} AND _t MATCHES "^[ \t]*@endcode"))
        _hds_emit("${name}" ${_first} "${_kind}" _context ${_context_first} _body)
        set(_in_block FALSE)
        set(_kind "")
        set(_context "")
      else()
        list(APPEND _body "|${_t}")  # "|": an empty first line would vanish from the list
      endif()
    elseif(_in_marker)
      if((${markdown} AND _t MATCHES "^```") OR (NOT ${markdown} AND _t MATCHES "^[ \t]*@code"))
        message(FATAL_ERROR "${name}:${_n}: a code block starts inside the snippet marker opened at line "
                            "${_marker_line}; end the marker with a line starting with -->")
      elseif(_t MATCHES "^[ \t]*-->")
        set(_in_marker FALSE)
      else()
        list(APPEND _context "|${_t}")
      endif()
    elseif(_t MATCHES "^[ \t]*<!-- snippet: *(.*)$")
      set(_kind "${CMAKE_MATCH_1}")
      set(_context "")
      math(EXPR _context_first "${_n} + 1")
      set(_marker_line ${_n})
      if(_kind MATCHES "^(.*[^ ]) *-->[ \t]*$")
        set(_kind "${CMAKE_MATCH_1}")
      else()
        set(_in_marker TRUE)
      endif()
    elseif((${markdown} AND _t MATCHES "^```cpp[ \t]*$") OR (NOT ${markdown} AND _t MATCHES "^[ \t]*@code"))
      set(_in_block TRUE)
      set(_body "")
      set(_block_line ${_n})
      math(EXPR _first "${_n} + 1")
    elseif(NOT _is_text OR (${markdown} AND NOT _t STREQUAL ""))
      # A marker belongs to the block right below it: in Markdown with only blank lines between,
      # in a header within the same comment.
      set(_kind "")
      set(_context "")
    endif()
  endforeach()
  if(_in_block)
    message(FATAL_ERROR "${name}:${_block_line}: a code block that never ends")
  elseif(_in_marker)
    message(FATAL_ERROR "${name}:${_marker_line}: a snippet marker that never ends (no line starting with -->)")
  endif()
endmacro()

function(hetero_add_doc_snippets target source_dir)
  file(GLOB_RECURSE _docs CONFIGURE_DEPENDS "${source_dir}/docs/*.md")
  file(GLOB_RECURSE _headers CONFIGURE_DEPENDS "${source_dir}/include/hetero/*.hpp")
  list(SORT _docs)
  list(SORT _headers)
  set(HDS_INDEX 0)
  set(HDS_PROGRAMS 0)
  set(HDS_FRAGMENTS 0)
  set(HDS_DECLARATIONS 0)
  set(HDS_SKIPPED "")
  set(HDS_INCLUDES "")
  set(HDS_CODE "")
  set(HDS_WITH_IO FALSE)
  if(TARGET hetero_io)
    set(HDS_WITH_IO TRUE)
  endif()
  foreach(_doc IN LISTS _docs ITEMS "${source_dir}/README.md")
    file(RELATIVE_PATH _name "${source_dir}" "${_doc}")
    _hds_scan("${_doc}" "${_name}" TRUE)
  endforeach()
  foreach(_header IN LISTS _headers)
    file(RELATIVE_PATH _name "${source_dir}" "${_header}")
    _hds_scan("${_header}" "${_name}" FALSE)
  endforeach()
  # An edited document is gathered again (the globs alone see only added and removed files).
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_docs} ${_headers} "${source_dir}/README.md")

  list(REMOVE_DUPLICATES HDS_INCLUDES)
  string(CONCAT _top "// Generated by cmake/HeteroDocSnippets.cmake from the docs and the public headers: do not edit.\n"
         "#include <hetero/hetero.hpp>\n")
  foreach(_include IN LISTS HDS_INCLUDES)
    string(APPEND _top "${_include}\n")
  endforeach()
  list(LENGTH HDS_SKIPPED _skipped)
  math(EXPR _compiled "${HDS_PROGRAMS} + ${HDS_FRAGMENTS} + ${HDS_DECLARATIONS}")
  set(_report "")
  foreach(_s IN LISTS HDS_SKIPPED)
    string(REPLACE "\"" "\\\"" _s "${_s}")
    string(APPEND _report "  std::puts(\"  not compiled: ${_s}\");\n")
  endforeach()
  string(CONCAT _main "#include <cstdio>\nint main() {\n"
            "  std::puts(\"${_compiled} code blocks of the docs and headers compiled: ${HDS_PROGRAMS} programs, "
            "${HDS_FRAGMENTS} fragments, ${HDS_DECLARATIONS} declarations; ${_skipped} not compiled\");\n"
            "${_report}}\n")
  _hds_escape("${_top}${HDS_CODE}#line 1 \"doc_snippets.cpp\"\n${_main}" _unit TRUE)
  set(_out "${CMAKE_CURRENT_BINARY_DIR}/${target}.cpp")
  file(WRITE "${_out}.new" "${_unit}")
  configure_file("${_out}.new" "${_out}" COPYONLY)  # rewritten only when it changed
  add_executable(${target} "${_out}")
  target_link_libraries(${target} PRIVATE hetero)
  if(TARGET hetero_io)
    target_link_libraries(${target} PRIVATE hetero_io)
  endif()
  # Only whether it compiles matters: no optimisation, no warnings (a fragment's unused names).
  target_compile_options(${target} PRIVATE -O0 -w)
  add_test(NAME ${target} COMMAND ${target})
  set_tests_properties(${target} PROPERTIES LABELS "style" PASS_REGULAR_EXPRESSION "code blocks"
                                             ENVIRONMENT "${HETERO_TEST_ENVIRONMENT}")
  message(STATUS "hetero: ${_compiled} code blocks of the docs and headers compiled as ${target}; ${_skipped} not")
endfunction()
