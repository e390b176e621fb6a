# HTTP front end: range parsing, pacing, the Beast server, /metrics and the admin endpoint.
add_library(toast_server_http STATIC
  core/http_date.cpp
  core/pacer.cpp
  core/request_handler.cpp
  http/http_server.cpp
  http/http_session.cpp
  http/request_view.cpp)
target_include_directories(toast_server_http PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(toast_server_http PUBLIC toast_server_config toast_server_store toast_common toast_asio
  PRIVATE toast_warnings)

list(APPEND SERVER_TEST_SOURCES
  tests/pacer_test.cpp
  tests/request_handler_test.cpp
  tests/http_server_test.cpp
  tests/server_integration_test.cpp)
