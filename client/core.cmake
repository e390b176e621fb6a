# Pure client core: see client/CMakeLists.txt. No libtorrent, sockets, clocks or threads in here.
add_library(toast_client_core STATIC
  core/piece_policy.cpp
  core/piece_types.cpp
  core/stream_watcher.cpp
  core/title_geometry.cpp)
target_include_directories(toast_client_core PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(toast_client_core PUBLIC toast_common PRIVATE toast_warnings)

if(BUILD_TESTING)
  add_executable(client_core_tests
    tests/piece_policy_test.cpp
    tests/stream_watcher_test.cpp)
  target_link_libraries(client_core_tests PRIVATE toast_client_core toast_warnings Catch2::Catch2WithMain)
  catch_discover_tests(client_core_tests TEST_PREFIX "client.")
endif()
