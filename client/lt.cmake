# libtorrent adapters and the toast-client executable: see client/CMakeLists.txt
add_library(toast_client_lt STATIC
  lt/ejecting_disk_io.cpp
  lt/engine.cpp
  lt/http_fetcher.cpp
  lt/http_request.cpp
  lt/http_stream.cpp
  lt/lt_events.cpp
  lt/peer_credentials.cpp
  lt/plan_applier.cpp
  lt/session_factory.cpp
  lt/stats_file.cpp
  lt/stream_session.cpp
  lt/swarm_control.cpp
  lt/toast_peer_plugin.cpp
  lt/toast_plugin.cpp
  lt/swarm_reader.cpp
  lt/title_playback.cpp
  lt/server_access.cpp
  lt/server_fallback.cpp
  lt/telemetry_sender.cpp
  lt/title_stream.cpp
  lt/torrent_file.cpp)
target_include_directories(toast_client_lt PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(toast_client_lt
  PUBLIC toast_common toast_asio LibtorrentRasterbar::torrent-rasterbar OpenSSL::SSL OpenSSL::Crypto
  PRIVATE toast_peer_certs toast_warnings)
if(TARGET toast_client_core)
  target_link_libraries(toast_client_lt PUBLIC toast_client_core)
endif()
# play: the local player endpoint and the player launcher.
target_link_libraries(toast_client_lt PUBLIC toast_client_http)

add_executable(toast-client app/main.cpp)
target_link_libraries(toast-client PRIVATE toast_client_lt toast_warnings)

if(BUILD_TESTING)
  # The server + tracker fixture of the end-to-end tests, shared with client_playback_tests (http.cmake). It
  # publishes where the three executables are, so the tests that link it know them too.
  add_library(client_test_fixture STATIC tests/swarm_fixture.cpp)
  target_link_libraries(client_test_fixture
    PUBLIC toast_testing toast_client_core
    PRIVATE nlohmann_json::nlohmann_json Catch2::Catch2 toast_warnings toast_test_options)
  target_compile_definitions(client_test_fixture PUBLIC
    TOAST_CLIENT_BIN="$<TARGET_FILE:toast-client>"
    TOAST_SERVER_BIN="$<TARGET_FILE:toast-server>"
    TOAST_TRACKER_BIN="$<TARGET_FILE:toast-tracker>")

  add_executable(client_tests
    tests/access_integration_test.cpp
    tests/client_integration_test.cpp
    tests/client_operator_test.cpp
    tests/lt_http_fetcher_test.cpp
    tests/lt_range_server.cpp
    tests/lt_session_test.cpp
    tests/lt_swarm_test.cpp
    tests/lt_test_support.cpp
    tests/lt_tier_test.cpp
    tests/lt_torrent_file_test.cpp)
  target_link_libraries(client_tests
    PRIVATE toast_client_lt client_test_fixture toast_testing toast_warnings Catch2::Catch2WithMain
    toast_test_options)
  add_dependencies(client_tests toast-client toast-server toast-tracker)
  # A stock libtorrent seed (Debian's python3-libtorrent, visible only to /usr/bin/python3).
  target_compile_definitions(client_tests PRIVATE STOCK_SEED_PY="${CMAKE_CURRENT_SOURCE_DIR}/tests/stock_seed.py"
    STOCK_WEBSEED_PY="${CMAKE_CURRENT_SOURCE_DIR}/tests/stock_webseed.py")
  catch_discover_tests(client_tests EXTRA_ARGS --warn NoTests TEST_PREFIX "client." PROPERTIES TIMEOUT 120)
endif()

if(BUILD_TESTING)
  # Private swarms end to end: passkeys, certificates, stock clients kept out (aria2 and Debian's
  # python3-libtorrent), and what libtorrent does with a private torrent.
  find_program(TOAST_ARIA2C aria2c)
  set(aria2c_bin "")
  if(TOAST_ARIA2C)
    set(aria2c_bin "${TOAST_ARIA2C}")
  endif()
  add_executable(client_private_tests
    tests/lt_private_torrent_test.cpp
    tests/lt_test_support.cpp
    tests/private_access_test.cpp
    tests/private_swarm_test.cpp
    tests/ssl_interop_test.cpp)
  target_link_libraries(client_private_tests
    PRIVATE toast_client_lt client_test_fixture toast_testing toast_warnings Catch2::Catch2WithMain
    toast_test_options)
  target_compile_definitions(client_private_tests PRIVATE
    SSL_PEER_PY="${CMAKE_CURRENT_SOURCE_DIR}/tests/ssl_peer.py" ARIA2C_BIN="${aria2c_bin}")
  add_dependencies(client_private_tests toast-client toast-server toast-tracker)
  catch_discover_tests(client_private_tests EXTRA_ARGS --warn NoTests TEST_PREFIX "client.private."
    PROPERTIES TIMEOUT 240)
endif()

if(BUILD_TESTING)
  # Interop with a stock Transmission 3.00 seed. The test exits 77 (skipped) when transmission-daemon is
  # missing; scripts/install-deps.sh installs it.
  find_program(TOAST_TRANSMISSION_DAEMON transmission-daemon)
  set(transmission_daemon_bin "")
  if(TOAST_TRANSMISSION_DAEMON)
    set(transmission_daemon_bin "${TOAST_TRANSMISSION_DAEMON}")
  endif()
  add_executable(client_interop_tests tests/interop_transmission_test.cpp)
  target_link_libraries(client_interop_tests
    PRIVATE client_test_fixture toast_testing toast_warnings nlohmann_json::nlohmann_json Catch2::Catch2
    toast_test_options)
  target_compile_definitions(client_interop_tests
    PRIVATE TRANSMISSION_DAEMON_BIN="${transmission_daemon_bin}")
  # It defines CATCH_CONFIG_RUNNER before including Catch2, which a precompiled Catch2 would come before.
  set_target_properties(client_interop_tests PROPERTIES DISABLE_PRECOMPILE_HEADERS ON)
  add_dependencies(client_interop_tests toast-client toast-server toast-tracker)
  add_test(NAME client.interop.transmission_seed COMMAND client_interop_tests)
  set_tests_properties(client.interop.transmission_seed PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 180)
endif()
