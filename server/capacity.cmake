# Capacity: what the array can carry and who gets it. Pure decisions only (no sockets, files or clocks):
# block arithmetic, demand traces, stream schedules, admission arithmetic, start scheduling, disk queue order,
# the disk and seek model. The store and the HTTP layer build on it; it depends on neither.
add_library(toast_server_capacity STATIC
  core/admission.cpp
  core/block_math.cpp
  core/demand_trace.cpp
  core/demand_trace_mp4.cpp
  core/demand_trace_ts.cpp
  core/disk_model.cpp
  core/disk_orders.cpp
  core/disk_scheduler.cpp
  core/stream_schedule.cpp)
target_include_directories(toast_server_capacity PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(toast_server_capacity PUBLIC toast_server_config toast_common PRIVATE toast_warnings)

list(APPEND SERVER_TEST_SOURCES
  tests/admission_test.cpp
  tests/demand_trace_test.cpp
  tests/disk_order_test.cpp
  tests/trace_ingest_test.cpp)

# toast-loadgen: the benchmark's viewers (server/bench/loadgen). Its playback and workload units are pure.
add_library(toast_loadgen_core STATIC
  bench/loadgen/playback.cpp
  bench/loadgen/workload.cpp)
target_include_directories(toast_loadgen_core PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(toast_loadgen_core PUBLIC toast_common PRIVATE toast_warnings)

add_executable(toast-loadgen bench/loadgen/main.cpp bench/loadgen/trial.cpp bench/loadgen/direct_viewer.cpp)
target_link_libraries(toast-loadgen PRIVATE toast_loadgen_core toast_common toast_asio nlohmann_json::nlohmann_json
  toast_warnings)

list(APPEND SERVER_TEST_SOURCES
  tests/playback_test.cpp
  tests/workload_test.cpp)
