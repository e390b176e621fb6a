# Catalogue demand and pre-placement ("push"). toast_server_push_core is pure (each title's decayed demand,
# the planner that stripes titles over idle boxes; only toast_common), so a simulator can link it alone;
# toast_server_push adds the coordinator that keeps the registered boxes and the current plan over the store.
add_library(toast_server_push_core STATIC
  core/push_planner.cpp
  core/title_demand.cpp)
target_include_directories(toast_server_push_core PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(toast_server_push_core PUBLIC toast_common PRIVATE toast_warnings)

add_library(toast_server_push STATIC io/push_coordinator.cpp)
target_include_directories(toast_server_push PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(toast_server_push PUBLIC toast_server_push_core toast_server_config toast_server_store
  toast_common nlohmann_json::nlohmann_json PRIVATE toast_warnings)

list(APPEND SERVER_TEST_SOURCES
  tests/push_planner_test.cpp
  tests/title_demand_test.cpp
  tests/push_coordinator_test.cpp)
