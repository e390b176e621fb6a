# toast_embed_resource(TARGET INPUT SYMBOL) builds the file INPUT (relative to the calling CMakeLists.txt)
# into TARGET as `const std::string_view SYMBOL` ("ns::name", declared extern where it is used): a page or a
# script lives in a file of its own, and the binary needs no file at run time. The source is generated at
# build time by this same file in script mode, as a raw string literal; nothing is downloaded.
if(CMAKE_SCRIPT_MODE_FILE)
  # cmake -DINPUT=FILE -DOUTPUT=FILE.cpp -DSYMBOL=ns::name -P embed_resource.cmake
  file(READ "${INPUT}" content)
  set(delimiter "toast_resource")
  string(FIND "${content}" ")${delimiter}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${INPUT} contains ')${delimiter}\"', which would end the raw string literal")
  endif()
  if(NOT SYMBOL MATCHES "^(.+)::([A-Za-z_][A-Za-z0-9_]*)$")
    message(FATAL_ERROR "SYMBOL must be ns::name, got '${SYMBOL}'")
  endif()
  set(ns "${CMAKE_MATCH_1}")
  set(name "${CMAKE_MATCH_2}")
  file(WRITE "${OUTPUT}.tmp"
    "// Generated from ${INPUT} by cmake/embed_resource.cmake: edit that file, not this one.\n"
    "#include <string_view>\n\n"
    "namespace ${ns} {\n"
    "extern const std::string_view ${name};\n"
    "const std::string_view ${name} = R\"${delimiter}(${content})${delimiter}\";\n"
    "}  // namespace ${ns}\n")
  # Unchanged output keeps its time stamp: nothing that depends on it is rebuilt.
  file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
  file(REMOVE "${OUTPUT}.tmp")
  return()
endif()

set(TOAST_EMBED_SCRIPT "${CMAKE_CURRENT_LIST_FILE}")

function(toast_embed_resource target input symbol)
  string(MAKE_C_IDENTIFIER "${input}" id)
  set(output "${CMAKE_CURRENT_BINARY_DIR}/resources/${id}.cpp")
  add_custom_command(
    OUTPUT "${output}"
    COMMAND "${CMAKE_COMMAND}" "-DINPUT=${CMAKE_CURRENT_SOURCE_DIR}/${input}" "-DOUTPUT=${output}"
            "-DSYMBOL=${symbol}" -P "${TOAST_EMBED_SCRIPT}"
    DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/${input}" "${TOAST_EMBED_SCRIPT}"
    COMMENT "Embedding ${input}"
    VERBATIM)
  target_sources(${target} PRIVATE "${output}")
endfunction()
