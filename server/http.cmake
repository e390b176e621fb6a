# HTTP front end: range parsing, pacing, the Beast server, /metrics and the admin endpoint.
add_library(toast_server_http INTERFACE)
target_link_libraries(toast_server_http INTERFACE toast_server_config toast_common toast_asio)
