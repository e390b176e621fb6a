#include <catch2/catch.hpp>

#include "toast/common/qoe_report.hpp"

using namespace toast;

namespace {

QoeReport sample() {
    QoeReport q;
    q.session = "3f9c0a7d5e21b864";
    q.sequence = 2;
    q.title = "movie.v2";
    q.final = true;
    q.startup_seconds = 1.25;
    q.stall_count = 3;
    q.stall_seconds = 4.5;
    q.stall_durations = {0.5, 4.0};
    q.seeks = 1;
    q.played_seconds = 60;
    q.bytes_from_peers = 1048576;
    q.bytes_from_server = 524288;
    q.bytes_uploaded = 2097152;
    return q;
}

std::string error_of(const std::string& body, std::size_t max = 8192) {
    auto p = parse_qoe_report(body, max);
    CHECK_FALSE(p.report);
    return p.error;
}

// The sample's JSON with `key`'s value replaced by `value` (raw JSON text).
std::string with(const std::string& key, const std::string& value) {
    auto text = format_qoe_report(sample());
    const auto at = text.find("\"" + key + "\":");
    REQUIRE(at != std::string::npos);
    const auto start = at + key.size() + 3;
    auto end = start;
    int depth = 0;
    while (end < text.size() && (depth > 0 || (text[end] != ',' && text[end] != '}'))) {
        if (text[end] == '[') ++depth;
        if (text[end] == ']') --depth;
        ++end;
    }
    return text.substr(0, start) + value + text.substr(end);
}

}  // namespace

TEST_CASE("a QoE report round-trips through its JSON", "[common][qoe]") {
    const auto text = format_qoe_report(sample());
    CHECK(text ==
          R"({"v":1,"session":"3f9c0a7d5e21b864","seq":2,"title":"movie.v2","final":true,"startup_s":1.25,)"
          R"("stall_count":3,"stall_s":4.5,"stall_durations_s":[0.5,4.0],"seeks":1,"played_s":60.0,)"
          R"("bytes_peers":1048576,"bytes_server":524288,"bytes_uploaded":2097152})");
    auto p = parse_qoe_report(text, 8192);
    REQUIRE(p.report);
    CHECK(*p.report == sample());

    auto no_startup = sample();
    no_startup.startup_seconds.reset();
    auto q = parse_qoe_report(format_qoe_report(no_startup), 8192);
    REQUIRE(q.report);
    CHECK_FALSE(q.report->startup_seconds);
}

TEST_CASE("a QoE report outside its bounds is refused naming the field", "[common][qoe]") {
    CHECK(error_of(format_qoe_report(sample()), 100) == "report larger than 100 bytes");
    CHECK(error_of("not json") == "report is not JSON");
    CHECK(error_of("[1]") == "report is not a JSON object");
    CHECK(error_of("[[[[[[[[]]]]]]]]") == "report nested deeper than 2");
    CHECK(error_of(with("v", "2")) == "field 'v': unsupported version (expected 1)");
    CHECK(error_of(with("session", "\"short\"")) == "field 'session': expected 8-64 characters of its set");
    CHECK(error_of(with("session", "\"has space in it\"")) ==
          "field 'session': expected 8-64 characters of its set");
    CHECK(error_of(with("title", "\"a/b\"")) == "field 'title': expected 1-128 characters of its set");
    CHECK(error_of(with("seq", "-1")) == "field 'seq': expected a whole number from 0 to 1000000000");
    CHECK(error_of(with("final", "1")) == "field 'final': expected true or false");
    CHECK(error_of(with("startup_s", "-0.5")) == "field 'startup_s': expected seconds from 0 to 604800");
    CHECK(error_of(with("stall_s", "1e300")) == "field 'stall_s': expected seconds from 0 to 604800");
    CHECK(error_of(with("stall_count", "1.5")) ==
          "field 'stall_count': expected a whole number from 0 to 1000000");
    CHECK(error_of(with("stall_count", "1")) == "field 'stall_durations_s': more durations than stall_count");
    CHECK(error_of(with("stall_durations_s", "[4.0,4.0]")) ==
          "field 'stall_durations_s': add up to more than stall_s");
    CHECK(error_of(with("stall_durations_s", "[\"1\"]")) ==
          "field 'stall_durations_s': expected seconds from 0 to 604800");
    CHECK(error_of(with("bytes_peers", "1125899906842625")) ==
          "field 'bytes_peers': expected a whole number from 0 to 1125899906842624");
    CHECK(error_of(R"({"v":1})") == "field 'session': missing");
    auto extra = format_qoe_report(sample());
    extra.insert(extra.size() - 1, ",\"who\":1");
    CHECK(error_of(extra) == "field 'who': unknown field");
    std::string many = "[";
    for (int i = 0; i < 65; ++i)
        many += std::string(i ? "," : "") + "0";
    CHECK(error_of(with("stall_durations_s", many + "]")) ==
          "field 'stall_durations_s': expected an array of at most 64 durations");
}
