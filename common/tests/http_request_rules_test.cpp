#include <catch2/catch.hpp>

#include <vector>

#include <boost/beast/http/empty_body.hpp>

#include "toast/common/beast_request_head.hpp"
#include "toast/common/http_request_rules.hpp"

using namespace toast;
using Catch::Matchers::Contains;
using Views = std::vector<std::string_view>;

TEST_CASE("HTTP/1.1 needs exactly one valid Host, HTTP/1.0 may omit it", "[common][http]") {
    CHECK_FALSE(host_problem(11, Views{"vod.example:8080"}));
    CHECK_FALSE(host_problem(11, Views{"127.0.0.1"}));
    CHECK_FALSE(host_problem(11, Views{"[::1]:8080"}));
    CHECK_FALSE(host_problem(11, Views{""}));  // an empty authority is a valid value
    CHECK_FALSE(host_problem(10, Views{}));
    CHECK(*host_problem(11, Views{}) == "HTTP/1.1 request without a Host header");
    CHECK(*host_problem(11, Views{"a", "a"}) == "more than one Host header");
    CHECK(*host_problem(10, Views{"a", "b"}) == "more than one Host header");
    CHECK_THAT(*host_problem(11, Views{"a b"}), Contains("invalid Host header 'a b'"));
    CHECK(host_problem(11, Views{"a/b"}));
    CHECK(host_problem(11, Views{"a:80x"}));
    CHECK(host_problem(11, Views{"[::1"}));
    CHECK(host_problem(11, Views{"a%zz"}));
    CHECK_THAT(*host_problem(11, Views{"x\x85y"}), Contains("x\\x85y"));
}

TEST_CASE("a request body may only be framed by a single final chunked coding", "[common][http]") {
    CHECK_FALSE(transfer_encoding_problem(11, Views{}));
    CHECK_FALSE(transfer_encoding_problem(10, Views{}));
    CHECK_FALSE(transfer_encoding_problem(11, Views{"chunked"}));
    CHECK_FALSE(transfer_encoding_problem(11, Views{" Chunked "}));
    CHECK_THAT(*transfer_encoding_problem(11, Views{"gzip"}),
               Contains("Transfer-Encoding 'gzip' is not supported"));
    CHECK(transfer_encoding_problem(11, Views{"gzip, chunked"}));
    CHECK(transfer_encoding_problem(11, Views{"chunked, chunked"}));
    CHECK(transfer_encoding_problem(11, Views{"chunked", "chunked"}));
    CHECK(transfer_encoding_problem(11, Views{""}));
    CHECK(*transfer_encoding_problem(10, Views{"chunked"}) == "Transfer-Encoding in an HTTP/1.0 request");
}

TEST_CASE("request framing checks Host before Transfer-Encoding", "[common][http]") {
    CHECK(*request_framing_problem(11, Views{}, Views{"gzip"}) == "HTTP/1.1 request without a Host header");
    CHECK(request_framing_problem(11, Views{"h"}, Views{"gzip"}));
    CHECK_FALSE(request_framing_problem(11, Views{"h"}, Views{"chunked"}));
}

TEST_CASE("a parsed request's Host and Transfer-Encoding lines are gathered in order", "[common][http]") {
    namespace http = boost::beast::http;
    http::request<http::empty_body> req{http::verb::get, "/", 10};
    req.insert(http::field::host, "a.example");
    req.insert(http::field::transfer_encoding, "gzip");
    req.insert(http::field::accept, "*/*");
    req.insert(http::field::host, "b.example:80");
    req.insert(http::field::transfer_encoding, "chunked");
    const RequestHead head = request_head_of(req);
    CHECK(head.version == 10);
    CHECK(head.hosts == Views{"a.example", "b.example:80"});
    CHECK(head.transfer_encodings == Views{"gzip", "chunked"});
    CHECK(*request_framing_problem(head) == "more than one Host header");

    http::request_header<> bare;
    bare.version(11);
    const RequestHead none = request_head_of(bare);
    CHECK(none.version == 11);
    CHECK(none.hosts.empty());
    CHECK(none.transfer_encodings.empty());
    CHECK(*request_framing_problem(none) == "HTTP/1.1 request without a Host header");
}
