# Catalogue demand and pre-placement ("push"): each title's decayed demand, the pure planner that stripes
# titles over idle boxes, and the coordinator that keeps the registered boxes and the current plan.
add_library(toast_server_push STATIC
  core/push_planner.cpp
  core/title_demand.cpp
  io/push_coordinator.cpp)
target_include_directories(toast_server_push PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(toast_server_push PUBLIC toast_server_config toast_server_store toast_common
  nlohmann_json::nlohmann_json PRIVATE toast_warnings)

list(APPEND SERVER_TEST_SOURCES
  tests/push_planner_test.cpp
  tests/title_demand_test.cpp
  tests/push_coordinator_test.cpp)
