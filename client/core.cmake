# Pure client core: see client/CMakeLists.txt. No libtorrent, sockets, clocks or threads in here.
add_library(toast_client_core STATIC
  core/adaptive_tuner.cpp
  core/buffer_planner.cpp
  core/choker.cpp
  core/cancel_ledger.cpp
  core/client_help.cpp
  core/client_options.cpp
  core/fallback_planner.cpp
  core/held_pieces.cpp
  core/fidelity.cpp
  core/give_up_horizon.cpp
  core/mp4_layout.cpp
  core/mpv_messages.cpp
  core/operator_tier.cpp
  core/peer_admission.cpp
  core/piece_policy.cpp
  core/piece_types.cpp
  core/plan_applier.cpp
  core/qoe_reporter.cpp
  core/resume_point.cpp
  core/server_pool.cpp
  core/server_request.cpp
  core/stats.cpp
  core/status_line.cpp
  core/stream_controller.cpp
  core/stream_controller_fetches.cpp
  core/stream_watcher.cpp
  core/swarm_sample.cpp
  core/tier_routes.cpp
  core/title_geometry.cpp
  core/token_renewal.cpp
  core/tracker_url.cpp)
target_include_directories(toast_client_core PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(toast_client_core PUBLIC toast_common PRIVATE toast_warnings)

if(BUILD_TESTING)
  add_executable(client_core_tests
    tests/adaptive_tuner_test.cpp
    tests/buffer_planner_test.cpp
    tests/cancel_ledger_test.cpp
    tests/choker_test.cpp
    tests/client_options_test.cpp
    tests/fallback_planner_test.cpp
    tests/fidelity_test.cpp
    tests/horizon_test.cpp
    tests/mpv_messages_test.cpp
    tests/operator_tier_test.cpp
    tests/peer_admission_test.cpp
    tests/piece_policy_test.cpp
    tests/plan_applier_test.cpp
    tests/qoe_reporter_test.cpp
    tests/server_request_test.cpp
    tests/stats_test.cpp
    tests/stream_controller_test.cpp
    tests/stream_controller_newcomer_test.cpp
    tests/stream_controller_await_test.cpp
    tests/stream_controller_refusal_test.cpp
    tests/stream_controller_operator_test.cpp
    tests/stream_watcher_test.cpp
    tests/tier_routes_test.cpp
    tests/tracker_url_test.cpp)
  target_link_libraries(client_core_tests PRIVATE toast_client_core toast_warnings Catch2::Catch2WithMain
      toast_test_options)
  # The stats test checks common/docs/client-stats.md against the code.
  target_compile_definitions(client_core_tests PRIVATE TOAST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  catch_discover_tests(client_core_tests EXTRA_ARGS --warn NoTests TEST_PREFIX "client.")
endif()
