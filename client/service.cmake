# The set-top-box service (`toast-client serve`): one session for every title, the control API, the piece
# map. Its decisions are pure core units (core/service_*.cpp, in toast_client_service_core); the adapters in
# service/ build on client/lt (StreamSession, TitleStream) and on Beast like client/http.
add_library(toast_client_service_core STATIC
  core/cache_policy.cpp
  core/push_assignment.cpp
  core/push_fetch_policy.cpp
  core/service_api.cpp
  core/service_options.cpp
  core/service_piece_map.cpp
  core/service_titles.cpp)
target_include_directories(toast_client_service_core PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(toast_client_service_core PUBLIC toast_client_core toast_common PRIVATE toast_warnings)

add_library(toast_client_service STATIC
  service/control_server.cpp
  service/piece_map.cpp
  service/push_agent.cpp
  service/serve_main.cpp
  service/server_link.cpp
  service/title_service.cpp
  service/title_service_push.cpp
  service/title_service_store.cpp
  service/title_status.cpp
  service/torrent_download.cpp)
target_include_directories(toast_client_service PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(toast_client_service
  PUBLIC toast_client_service_core toast_client_lt toast_common toast_asio PRIVATE toast_warnings)
# The piece map's page (HTML, CSS and script), built in.
toast_embed_resource(toast_client_service service/piece_map.html toast::client::resources::piece_map_html)
target_link_libraries(toast-client PRIVATE toast_client_service)

if(BUILD_TESTING)
  add_executable(client_service_core_tests tests/service_core_test.cpp tests/cache_policy_test.cpp
    tests/push_assignment_test.cpp tests/push_fetch_policy_test.cpp tests/network_options_test.cpp)
  target_link_libraries(client_service_core_tests
    PRIVATE toast_client_service_core toast_warnings Catch2::Catch2WithMain toast_test_options)
  catch_discover_tests(client_service_core_tests EXTRA_ARGS --warn NoTests TEST_PREFIX "client.service.")

  add_executable(client_service_tests tests/service_integration_test.cpp tests/service_box_test.cpp
    tests/service_access_test.cpp tests/service_private_test.cpp tests/service_push_test.cpp)
  target_link_libraries(client_service_tests
    PRIVATE client_test_fixture toast_testing toast_warnings nlohmann_json::nlohmann_json Catch2::Catch2WithMain
    toast_test_options)
  add_dependencies(client_service_tests toast-client toast-server toast-tracker)
  if(TOAST_FFMPEG)
    target_compile_definitions(client_service_tests PRIVATE FFMPEG_BIN="${TOAST_FFMPEG}")
  endif()
  find_program(TOAST_CHROMIUM chromium)
  if(TOAST_CHROMIUM)
    target_compile_definitions(client_service_tests PRIVATE CHROMIUM_BIN="${TOAST_CHROMIUM}")
  endif()
  catch_discover_tests(client_service_tests EXTRA_ARGS --warn NoTests TEST_PREFIX "client.service." PROPERTIES TIMEOUT 180)
endif()

# The cache policies against each other in a fluid model of a catalogue evening (docs/results.md); a
# seconds-long smoke in CI.
add_executable(toast-cache-sim bench/cache_sim.cpp)
target_link_libraries(toast-cache-sim PRIVATE toast_client_service_core toast_warnings)
if(BUILD_TESTING)
  add_test(NAME client.bench.cache_sim_smoke
    COMMAND toast-cache-sim --boxes 30 --titles 8 --evening-s 300 --title-s 60 --seeds 1)
  set_tests_properties(client.bench.cache_sim_smoke PROPERTIES TIMEOUT 60
    PASS_REGULAR_EXPRESSION "popularity +[0-9.-]+%")
endif()
