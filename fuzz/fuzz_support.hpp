// Shared by the fuzz targets: feeding raw bytes through Beast's request parser as a session does, and the
// checks that turn a wrong answer (not only a crash) into a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string_view>

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

namespace toast::fuzz {

// A failed invariant: abort() so libFuzzer records the input as a crash, whatever the build type.
#define TOAST_FUZZ_CHECK(condition)                                                                  \
    do {                                                                                             \
        if (!(condition)) {                                                                          \
            std::fprintf(stderr, "fuzz check failed: %s (%s:%d)\n", #condition, __FILE__, __LINE__); \
            std::abort();                                                                            \
        }                                                                                            \
    } while (0)

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// True when a header name or value could not be written on one line of a response.
inline bool breaks_header_line(std::string_view s) {
    return s.find_first_of("\r\n") != std::string_view::npos || s.find('\0') != std::string_view::npos;
}

// Parses up to `max_requests` pipelined requests out of `bytes` with the limits a session sets, calling
// `on_request` for each complete one; stops at the first error or incomplete request, like a session that
// answers the error and closes. Returns the number of requests handled.
template <class Body>
std::size_t for_each_request(
    std::string_view bytes, std::uint32_t header_limit, std::uint64_t body_limit, std::size_t max_requests,
    const std::function<void(const boost::beast::http::request<Body>&)>& on_request) {
    namespace http = boost::beast::http;
    std::size_t handled = 0;
    while (!bytes.empty() && handled < max_requests) {
        http::request_parser<Body> parser;
        parser.header_limit(header_limit);
        parser.body_limit(body_limit);
        parser.eager(true);
        boost::beast::error_code ec;
        while (!bytes.empty() && !parser.is_done()) {
            auto used = parser.put(boost::asio::buffer(bytes.data(), bytes.size()), ec);
            bytes.remove_prefix(used);
            if (ec == http::error::need_more) {
                if (used == 0) return handled;  // incomplete: a session would wait for more bytes
                ec = {};
                continue;
            }
            if (ec) return handled;
        }
        if (!parser.is_done()) return handled;
        on_request(parser.get());
        ++handled;
    }
    return handled;
}

}  // namespace toast::fuzz
