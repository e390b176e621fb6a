# The request handler without the sessions and the block store behind it: routes, access checks, the
# catalogue's answers. The fuzz targets (fuzz/) link it alone, so its objects are compiled once per build.
add_library(toast_server_handler STATIC
  core/access_check.cpp
  core/access_routes.cpp
  core/admin_routes.cpp
  core/catalog.cpp
  core/catalog_handler.cpp
  core/http_date.cpp
  core/push_routes.cpp
  core/request_handler.cpp
  core/torrent_token.cpp
  http/request_view.cpp)
target_include_directories(toast_server_handler PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(toast_server_handler PUBLIC toast_server_config toast_common toast_asio OpenSSL::Crypto
  LibtorrentRasterbar::torrent-rasterbar PRIVATE toast_warnings)

# HTTP front end: range parsing, pacing, the Beast server, /metrics and the admin endpoint.
add_library(toast_server_http STATIC
  core/body_plan.cpp
  core/pacer.cpp
  core/rate_limiter.cpp
  core/reload_plan.cpp
  core/stream_redirect.cpp
  http/http_service.cpp
  http/http_session.cpp
  http/http_session_log.cpp
  http/response_transfer.cpp
  http/send_chain.cpp
  http/qoe_metrics.cpp
  http/stream_admission.cpp
  http/server_shared.cpp
  http/tls_context.cpp)
target_include_directories(toast_server_http PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(toast_server_http PUBLIC toast_server_handler toast_server_config toast_server_store
  toast_server_push toast_common toast_asio OpenSSL::SSL OpenSSL::Crypto PRIVATE toast_warnings)

list(APPEND SERVER_TEST_SOURCES
  tests/access_check_test.cpp
  tests/access_routes_test.cpp
  tests/rate_limiter_test.cpp
  tests/body_plan_test.cpp
  tests/catalog_test.cpp
  tests/pacer_test.cpp
  tests/push_routes_test.cpp
  tests/reload_plan_test.cpp
  tests/admin_routes_test.cpp
  tests/request_handler_test.cpp
  tests/response_transfer_test.cpp
  tests/send_chain_test.cpp
  tests/http_server_test.cpp
  tests/http_stream_test.cpp
  tests/server_integration_test.cpp
  tests/operations_integration_test.cpp
  tests/access_integration_test.cpp
  tests/admission_integration_test.cpp)
