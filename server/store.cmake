# Block store: placement policies, manifests, per-disk workers, ingest and verify.
add_library(toast_server_store STATIC
  io/open_file.cpp)
target_include_directories(toast_server_store PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(toast_server_store PUBLIC toast_server_config toast_common Threads::Threads
  PRIVATE toast_warnings)

list(APPEND SERVER_TEST_SOURCES
  tests/server_config_test.cpp)
