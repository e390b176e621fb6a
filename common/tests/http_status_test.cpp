#include <catch2/catch.hpp>

#include "toast/common/http_status.hpp"

using namespace toast;

TEST_CASE("every status a Toast endpoint sends has its RFC 9110 reason phrase", "[common][http]") {
    CHECK(reason_phrase(200) == "OK");
    CHECK(reason_phrase(201) == "Created");
    CHECK(reason_phrase(206) == "Partial Content");
    CHECK(reason_phrase(304) == "Not Modified");
    CHECK(reason_phrase(400) == "Bad Request");
    CHECK(reason_phrase(403) == "Forbidden");
    CHECK(reason_phrase(404) == "Not Found");
    CHECK(reason_phrase(405) == "Method Not Allowed");
    CHECK(reason_phrase(408) == "Request Timeout");
    CHECK(reason_phrase(409) == "Conflict");
    CHECK(reason_phrase(412) == "Precondition Failed");
    CHECK(reason_phrase(413) == "Content Too Large");
    CHECK(reason_phrase(414) == "URI Too Long");
    CHECK(reason_phrase(415) == "Unsupported Media Type");
    CHECK(reason_phrase(416) == "Range Not Satisfiable");
    CHECK(reason_phrase(421) == "Misdirected Request");
    CHECK(reason_phrase(422) == "Unprocessable Content");
    CHECK(reason_phrase(429) == "Too Many Requests");
    CHECK(reason_phrase(431) == "Request Header Fields Too Large");
    CHECK(reason_phrase(500) == "Internal Server Error");
    CHECK(reason_phrase(501) == "Not Implemented");
    CHECK(reason_phrase(502) == "Bad Gateway");
    CHECK(reason_phrase(503) == "Service Unavailable");
    CHECK(reason_phrase(505) == "HTTP Version Not Supported");
    CHECK(reason_phrase(507) == "Insufficient Storage");
}

TEST_CASE("a status no endpoint sends gets a printable placeholder phrase", "[common][http]") {
    CHECK(reason_phrase(0) == "Unknown");
    CHECK(reason_phrase(299) == "Unknown");
    CHECK(reason_phrase(999) == "Unknown");
}
