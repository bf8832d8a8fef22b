# Turns lib/job/bootstrap.py into a C++ source holding it as a string (run with cmake -P):
#   cmake -DINPUT=bootstrap.py -DOUTPUT=bootstrap_source.cpp -P embed_bootstrap.cmake
# Comment lines and blank lines are dropped: the source travels in every Job's spec. The .py has
# no triple-quoted strings, so a line whose first non-blank character is '#' is a comment.
cmake_minimum_required(VERSION 3.20)
file(READ "${INPUT}" source)
string(PREPEND source "\n")
string(REGEX REPLACE "\n[ \t]*#[^\n]*" "" source "${source}")
# Each pass drops every other blank line of a run: repeat until none is left.
while(TRUE)
  string(REGEX REPLACE "\n[ \t]*\n" "\n" stripped "${source}")
  if(stripped STREQUAL source)
    break()
  endif()
  set(source "${stripped}")
endwhile()
string(REGEX REPLACE "^\n+" "" source "${source}")
string(FIND "${source}" ")PY\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter )PY\"")
endif()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from lib/job/bootstrap.py by cmake/embed_bootstrap.cmake; do not edit.\n"
  "#include <string_view>\n\nnamespace kinetic {\n\n"
  "extern const std::string_view kBootstrapSource;\n"
  "const std::string_view kBootstrapSource = R\"PY(${source})PY\";\n\n}  // namespace kinetic\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
