# toast_warnings: an INTERFACE target every project target links to get the same warning set.
add_library(toast_warnings INTERFACE)
target_compile_options(toast_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Woverloaded-virtual -Wimplicit-fallthrough)
if(TOAST_WARNINGS_AS_ERRORS)
  target_compile_options(toast_warnings INTERFACE -Werror)
endif()
