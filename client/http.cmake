# Local playback endpoint: see client/CMakeLists.txt
add_library(toast_client_http STATIC
  http/local_server.cpp
  http/mpv_ipc.cpp
  http/player_endpoint.cpp
  http/player_launcher.cpp
  http/player_request.cpp)
target_include_directories(toast_client_http PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(toast_client_http PUBLIC toast_client_core toast_common toast_asio PRIVATE toast_warnings)

if(BUILD_TESTING)
  add_executable(client_http_tests
    tests/http_endpoint_test.cpp
    tests/http_local_server_test.cpp
    tests/http_mpv_ipc_test.cpp
    tests/http_player_launcher_test.cpp
    tests/http_player_request_test.cpp
    tests/playback_core_test.cpp)
  target_link_libraries(client_http_tests PRIVATE toast_client_http toast_testing toast_warnings Catch2::Catch2WithMain
      toast_test_options)
  catch_discover_tests(client_http_tests EXTRA_ARGS --warn NoTests TEST_PREFIX "client." PROPERTIES TIMEOUT 60)
endif()

# End-to-end playback: toast-client play with the real server and tracker, decoded by ffmpeg.
if(BUILD_TESTING)
  find_program(TOAST_FFMPEG ffmpeg)
  if(TOAST_FFMPEG)
    add_executable(client_playback_tests tests/playback_integration_test.cpp)
    # client_test_fixture (lt.cmake): the server + tracker fixture, and where the executables are.
    target_link_libraries(client_playback_tests
      PRIVATE toast_client_core client_test_fixture toast_asio toast_testing toast_warnings Catch2::Catch2WithMain
      toast_test_options)
    target_compile_definitions(client_playback_tests PRIVATE FFMPEG_BIN="${TOAST_FFMPEG}")
    # The real-player test drives mpv through its JSON IPC.
    find_program(TOAST_MPV mpv)
    if(TOAST_MPV)
      target_compile_definitions(client_playback_tests PRIVATE MPV_BIN="${TOAST_MPV}")
    else()
      message(STATUS "mpv not found: the real-player playback test is not built (scripts/install-deps.sh installs it)")
    endif()
    add_dependencies(client_playback_tests toast-client toast-server toast-tracker)
    catch_discover_tests(client_playback_tests EXTRA_ARGS --warn NoTests TEST_PREFIX "client." PROPERTIES TIMEOUT 120)
  else()
    message(STATUS "ffmpeg not found: the playback tests are not built (scripts/install-deps.sh installs it)")
  endif()
endif()
