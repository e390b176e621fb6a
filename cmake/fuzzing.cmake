# TOAST_FUZZ=ON builds the libFuzzer targets in fuzz/ (scripts/fuzz drives them). It needs clang
# (CXX=clang++-14, Debian's clang-14 with libclang-rt-14-dev) and compiles everything with ASan + UBSan and
# libFuzzer's coverage instrumentation; only the fuzz targets and what they link are meant to be built.
option(TOAST_FUZZ "Build the libFuzzer targets (clang only)" OFF)
if(TOAST_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "TOAST_FUZZ=ON needs clang: configure with CXX=clang++-14 (scripts/fuzz does)")
  endif()
  if(TOAST_SANITIZE)
    message(FATAL_ERROR "TOAST_FUZZ already builds with ASan + UBSan; leave TOAST_SANITIZE off")
  endif()
  # Undefined behaviour stops the run like a crash, so libFuzzer records the input.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
    -fno-omit-frame-pointer -gline-tables-only)
  add_link_options(-fsanitize=address,undefined)
endif()
