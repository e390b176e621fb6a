// The box's passkey written into tracker URLs (client/core/tracker_url.hpp).
#include <catch2/catch.hpp>

#include "client/core/tracker_url.hpp"

using namespace toast::client;

namespace {
const std::string kKey = "box1box1box1box1box1box1box1box1";
}

TEST_CASE("a passkey is appended to an /announce path, over HTTP and UDP", "[client][passkey]") {
    CHECK(with_passkey("http://tracker.example:6969/announce", kKey) ==
          "http://tracker.example:6969/announce/" + kKey);
    CHECK(with_passkey("udp://tracker.example:6969/announce", kKey) ==
          "udp://tracker.example:6969/announce/" + kKey);
    CHECK(with_passkey("https://t.example/x/announce?team=7", kKey) ==
          "https://t.example/x/announce/" + kKey + "?team=7");
    CHECK(with_passkey("http://[2001:db8::1]:6969/announce#frag", kKey) ==
          "http://[2001:db8::1]:6969/announce/" + kKey + "#frag");
}

TEST_CASE("a passkey already in the URL is replaced where it is", "[client][passkey]") {
    CHECK(with_passkey("http://t:6969/announce/oldoldoldoldoldold", kKey) ==
          "http://t:6969/announce/" + kKey);
    CHECK(with_passkey("http://t:6969/announce/", kKey) == "http://t:6969/announce/" + kKey);
    CHECK(with_passkey("http://t:6969/announce?passkey=old&x=1", kKey) ==
          "http://t:6969/announce?passkey=" + kKey + "&x=1");
    CHECK(with_passkey("http://t:6969/tracker.php?x=1&passkey=old", kKey) ==
          "http://t:6969/tracker.php?x=1&passkey=" + kKey);
    // Applying it twice changes nothing more.
    const auto once = with_passkey("udp://t:6969/announce", kKey);
    CHECK(with_passkey(once, kKey) == once);
}

TEST_CASE("other paths get a passkey query parameter", "[client][passkey]") {
    CHECK(with_passkey("http://t:6969/tracker.php", kKey) == "http://t:6969/tracker.php?passkey=" + kKey);
    CHECK(with_passkey("http://t:6969/tracker.php?x=1", kKey) ==
          "http://t:6969/tracker.php?x=1&passkey=" + kKey);
    CHECK(with_passkey("udp://t:6969", kKey) == "udp://t:6969?passkey=" + kKey);
    CHECK(with_passkey("udp://t:6969/", kKey) == "udp://t:6969/?passkey=" + kKey);
}

TEST_CASE("a box's passkey is 16 to 128 URL-safe characters", "[client][passkey]") {
    CHECK(valid_passkey(kKey));
    CHECK(valid_passkey("A-_z09A-_z09A-_z"));
    CHECK_FALSE(valid_passkey("short"));
    CHECK_FALSE(valid_passkey(std::string(129, 'a')));
    CHECK_FALSE(valid_passkey("aaaaaaaaaaaaaaa/"));
    CHECK_FALSE(valid_passkey("aaaaaaaaaaaaaaa?"));
}
