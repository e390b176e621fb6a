#include <catch2/catch.hpp>

#include "client/core/mpv_messages.hpp"

using namespace toast::client;
using namespace std::chrono_literals;

TEST_CASE("the client asks mpv to report time-pos, pause and paused-for-cache", "[client][mpv]") {
    CHECK(mpv_observe_commands() ==
          "{\"command\":[\"observe_property\",1,\"time-pos\"]}\n"
          "{\"command\":[\"observe_property\",2,\"pause\"]}\n"
          "{\"command\":[\"observe_property\",3,\"paused-for-cache\"]}\n");
}

TEST_CASE("mpv's lines become position, pause, seek and end events", "[client][mpv]") {
    CHECK(parse_mpv_line(R"({"event":"property-change","id":1,"name":"time-pos","data":12.5})") ==
          MpvEvent{MpvEventKind::position, 12'500ms});
    CHECK(parse_mpv_line(R"({"event":"property-change","id":2,"name":"pause","data":true})") ==
          MpvEvent{MpvEventKind::pause, {}, true});
    CHECK(parse_mpv_line(R"({"event":"property-change","id":3,"name":"paused-for-cache","data":false})") ==
          MpvEvent{MpvEventKind::cache_pause, {}, false});
    CHECK(parse_mpv_line(R"({"event":"seek"})") == MpvEvent{MpvEventKind::seek});
    CHECK(parse_mpv_line(R"({"event":"end-file","reason":"quit"})") == MpvEvent{MpvEventKind::end_file});
}

TEST_CASE("what mpv sends that the client does not act on, or that is malformed, is no event",
          "[client][mpv]") {
    for (const char* line : {
             R"({"data":null,"request_id":0,"error":"success"})",
             R"({"event":"property-change","id":1,"name":"time-pos"})",
             R"({"event":"property-change","id":1,"name":"time-pos","data":null})",
             R"({"event":"property-change","id":1,"name":"time-pos","data":-3})",
             R"({"event":"property-change","id":1,"name":"time-pos","data":1e300})",
             R"({"event":"property-change","id":1,"name":"time-pos","data":"12"})",
             R"({"event":"property-change","id":2,"name":"pause","data":1})",
             R"({"event":"property-change","id":9,"name":"volume","data":50})",
             R"({"event":"property-change","id":1.5,"data":3})",
             R"({"event":"playback-restart"})",
             R"({"event":7})",
             R"([1,2])",
             "not json",
             "",
         }) {
        INFO(line);
        CHECK_FALSE(parse_mpv_line(line));
    }
}

TEST_CASE("the picture stands still while the viewer paused or mpv waits for data", "[client][mpv]") {
    MpvPauseState s;
    CHECK_FALSE(s.paused());
    CHECK(s.on_event({MpvEventKind::pause, {}, false}) == std::nullopt);  // no change
    CHECK(s.on_event({MpvEventKind::cache_pause, {}, true}) == std::optional<bool>(true));
    CHECK(s.on_event({MpvEventKind::pause, {}, true}) == std::nullopt);  // still paused
    CHECK(s.on_event({MpvEventKind::cache_pause, {}, false}) == std::nullopt);
    CHECK(s.on_event({MpvEventKind::pause, {}, false}) == std::optional<bool>(false));
    CHECK(s.on_event({MpvEventKind::position, 3s}) == std::nullopt);
    CHECK_FALSE(s.paused());
}
