# Turns an in-cluster Python script (lib/job/bootstrap.py, lib/backend/gke/auto_down.py) into a
# C++ source holding it as the string_view SYMBOL (run with cmake -P):
#   cmake -DINPUT=bootstrap.py -DOUTPUT=bootstrap_source.cpp -DSYMBOL=kBootstrapSource \
#     [-DPRELUDE=incluster_common.py] -P embed_python.cmake
# PRELUDE, when given, goes ahead of INPUT: the code the in-cluster scripts share
# (lib/job/incluster_common.py), so each still travels as one source and nothing is imported at
# run time. Comment lines and blank lines are dropped: the source travels in the Job or CronJob
# spec. The scripts have no triple-quoted strings, so a line whose first non-blank character is
# '#' is a comment.
cmake_minimum_required(VERSION 3.20)
if(NOT SYMBOL)
  message(FATAL_ERROR "embed_python.cmake: pass -DSYMBOL=NAME")
endif()
set(source "")
foreach(part IN ITEMS ${PRELUDE} ${INPUT})
  file(READ "${part}" text)
  # A triple-quoted string could hold a line starting with '#', which the stripping would drop.
  string(FIND "${text}" "\"\"\"" triple)
  if(NOT triple EQUAL -1)
    message(FATAL_ERROR "${part} has a triple-quoted string; write comments instead")
  endif()
  string(APPEND source "${text}\n")
endforeach()
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
  "// Generated from ${PRELUDE} ${INPUT} by cmake/embed_python.cmake; do not edit.\n"
  "#include <string_view>\n\nnamespace kinetic {\n\n"
  "extern const std::string_view ${SYMBOL};\n"
  "const std::string_view ${SYMBOL} = R\"PY(${source})PY\";\n\n}  // namespace kinetic\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
