// The passkey store, the gate, and where requests carry their key (tracker/core/passkeys.hpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "tracker/core/passkeys.hpp"

using namespace toast::tracker;

namespace {

const std::string kA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";  // 32 characters
const std::string kB = "B-b_0123456789abcdef";              // 20 characters
const std::string kC = "cccccccccccccccc";                  // 16, the shortest

PasskeyStore store_of(std::string_view text) {
    auto parsed = parse_passkey_file(text);
    REQUIRE(parsed.ok());
    return parsed.value();
}

std::string error_of(std::string_view text) {
    auto parsed = parse_passkey_file(text);
    REQUIRE_FALSE(parsed.ok());
    return "line " + std::to_string(parsed.error().line) + ": " + parsed.error().message;
}

}  // namespace

TEST_CASE("a passkey is 16 to 128 URL-safe characters", "[tracker][passkeys]") {
    CHECK(valid_passkey(kC));
    CHECK(valid_passkey(std::string(128, 'x')));
    CHECK(valid_passkey("AZaz09_-AZaz09_-"));
    CHECK_FALSE(valid_passkey(std::string(15, 'x')));
    CHECK_FALSE(valid_passkey(std::string(129, 'x')));
    CHECK_FALSE(valid_passkey("aaaaaaaaaaaaaaa/"));
    CHECK_FALSE(valid_passkey("aaaaaaaaaaaaaaa%"));
    CHECK_FALSE(valid_passkey("aaaaaaaaaaaaaaa="));
    CHECK_FALSE(valid_passkey("aaaaaaaa aaaaaaa"));
    CHECK_FALSE(valid_passkey(""));
}

TEST_CASE("the passkey file holds keys with optional labels, comments and blank lines",
          "[tracker][passkeys]") {
    auto s = store_of("# issued 2024-05-01\n\n" + kA + "  box 17, living room\r\n\t" + kB + "\n" + kC);
    CHECK(s.size() == 3);
    CHECK(s.contains(kA));
    CHECK(s.contains(kB));
    CHECK(s.contains(kC));
    CHECK_FALSE(s.contains("dddddddddddddddd"));
    CHECK(s.label(kA) == std::string_view("box 17, living room"));
    CHECK(s.label(kB) == std::string_view(""));
    CHECK_FALSE(s.label("dddddddddddddddd").has_value());
    CHECK(store_of("").size() == 0);
    CHECK(store_of("# nothing issued yet\n").size() == 0);
}

TEST_CASE("a bad passkey line names its number and never the key", "[tracker][passkeys]") {
    CHECK(error_of(kA + "\nshort\n") ==
          "line 2: a passkey is 16 to 128 characters of A-Z a-z 0-9 _ -, got 5 characters");
    CHECK(error_of("\n\nsecretsecret/secretsecret box\n") ==
          "line 3: a passkey is 16 to 128 characters of A-Z a-z 0-9 _ -, got 25 characters with others "
          "among them");
    CHECK(error_of(kA + " box 1\n" + kB + "\n" + kA + " box 2\n") ==
          "line 3: this passkey is already listed on an earlier line");
    CHECK(error_of(kA + "\n" + kA + "\n").find(kA) == std::string::npos);
}

TEST_CASE("missing_from lists exactly the keys a new file leaves out", "[tracker][passkeys]") {
    auto before = store_of(kA + "\n" + kB + "\n");
    auto after = store_of(kB + "\n" + kC + "\n");
    CHECK(before.missing_from(after) == std::vector<std::string>{kA});
    CHECK(after.missing_from(before) == std::vector<std::string>{kC});
    CHECK(before.missing_from(before).empty());
}

TEST_CASE("the gate admits everything while off and only its keys while on", "[tracker][passkeys]") {
    PasskeyGate gate(SipKey{7, 9});
    CHECK_FALSE(gate.enabled());
    CHECK(gate.admit(std::nullopt).value() == 0);
    CHECK(gate.admit(kA).value() == 0);

    auto c = gate.replace(store_of(kA + "\n" + kB + "\n"));
    CHECK(c.added == 2);
    CHECK(c.revoked == 0);
    CHECK(gate.enabled());
    CHECK(gate.size() == 2);
    REQUIRE(gate.admit(kA).ok());
    CHECK(gate.admit(kA).value() == gate.fingerprint(kA));
    CHECK(gate.admit(kA).value() != 0);
    CHECK(gate.admit(kA).value() != gate.admit(kB).value());
    CHECK(gate.admit(std::nullopt).error() == PasskeyRefusal::missing);
    CHECK(gate.admit(kC).error() == PasskeyRefusal::unknown);
}

TEST_CASE("a key a reload takes out is revoked at once, and issued again it is admitted again",
          "[tracker][passkeys]") {
    PasskeyGate gate(SipKey{1, 2});
    gate.replace(store_of(kA + "\n" + kB + "\n"));
    auto c = gate.replace(store_of(kB + "\n" + kC + "\n"));
    CHECK(c.added == 1);
    CHECK(c.revoked == 1);
    CHECK(c.revoked_owners == std::vector<std::uint64_t>{gate.fingerprint(kA)});
    CHECK(gate.admit(kA).error() == PasskeyRefusal::revoked);
    CHECK(gate.revoked(gate.fingerprint(kA)));
    CHECK(gate.admit(kB).ok());
    CHECK(gate.admit(kC).ok());
    // A key never issued stays "unknown", not "revoked".
    CHECK(gate.admit("dddddddddddddddd").error() == PasskeyRefusal::unknown);

    auto again = gate.replace(store_of(kA + "\n" + kB + "\n" + kC + "\n"));
    CHECK(again.added == 1);
    CHECK(again.revoked == 0);
    CHECK(gate.admit(kA).ok());
    CHECK_FALSE(gate.revoked(gate.fingerprint(kA)));
}

TEST_CASE("turning passkeys off revokes every key, so turning them on again does not readmit them",
          "[tracker][passkeys]") {
    PasskeyGate gate(SipKey{1, 2});
    gate.replace(store_of(kA + "\n"));
    auto off = gate.replace(std::nullopt);
    CHECK(off.revoked == 1);
    CHECK_FALSE(gate.enabled());
    CHECK(gate.admit(kA).ok());  // off: everything is admitted
    gate.replace(store_of(kB + "\n"));
    CHECK(gate.admit(kA).error() == PasskeyRefusal::revoked);
    CHECK(gate.admit(kB).ok());
}

TEST_CASE("fingerprints depend on the secret and are never 0", "[tracker][passkeys]") {
    PasskeyGate one(SipKey{1, 2});
    PasskeyGate two(SipKey{3, 4});
    CHECK(one.fingerprint(kA) != two.fingerprint(kA));
    for (const auto& k : {kA, kB, kC})
        CHECK((one.fingerprint(k) & 1) == 1);
}

TEST_CASE("announce and scrape carry the key in the path or the passkey parameter", "[tracker][passkeys]") {
    auto path_form = parse_tracker_target("/announce/" + kA, "info_hash=x&port=1");
    REQUIRE(path_form.ok());
    CHECK(path_form->path == TrackerPath::announce);
    CHECK(path_form->passkey == kA);

    auto query_form = parse_tracker_target("/announce", "passkey=" + kA + "&info_hash=x");
    REQUIRE(query_form.ok());
    CHECK(query_form->passkey == kA);

    auto scrape = parse_tracker_target("/scrape/" + kB, "info_hash=x");
    REQUIRE(scrape.ok());
    CHECK(scrape->path == TrackerPath::scrape);
    CHECK(scrape->passkey == kB);

    auto escaped = parse_tracker_target("/scrape", "info_hash=x&passkey=%61%61%61aaaaaaaaaaaaa");
    REQUIRE(escaped.ok());
    CHECK(escaped->passkey == std::string(16, 'a'));

    auto none = parse_tracker_target("/announce", "info_hash=x");
    REQUIRE(none.ok());
    CHECK_FALSE(none->passkey.has_value());
    auto trailing_slash = parse_tracker_target("/announce/", "");
    REQUIRE(trailing_slash.ok());
    CHECK_FALSE(trailing_slash->passkey.has_value());
    // A parameter whose name only starts like it is another parameter.
    auto other = parse_tracker_target("/announce", "passkeys=" + kA + "&xpasskey=" + kA);
    REQUIRE(other.ok());
    CHECK_FALSE(other->passkey.has_value());
}

TEST_CASE("other paths, malformed keys and keys given twice are told apart", "[tracker][passkeys]") {
    CHECK(parse_tracker_target("/announcement", "").error() == TargetError::not_a_tracker_path);
    CHECK(parse_tracker_target("/stats", "").error() == TargetError::not_a_tracker_path);
    CHECK(parse_tracker_target("/" + kA + "/announce", "").error() == TargetError::not_a_tracker_path);
    CHECK(parse_tracker_target("", "").error() == TargetError::not_a_tracker_path);
    CHECK(parse_tracker_target("/announce/short", "").error() == TargetError::bad_passkey);
    CHECK(parse_tracker_target("/announce/" + kA + "/more", "").error() == TargetError::bad_passkey);
    CHECK(parse_tracker_target("/announce", "passkey=").error() == TargetError::bad_passkey);
    CHECK(parse_tracker_target("/announce", "passkey").error() == TargetError::bad_passkey);
    CHECK(parse_tracker_target("/announce", "passkey=%zz" + kA).error() == TargetError::bad_passkey);
    CHECK(parse_tracker_target("/announce/" + kA, "passkey=" + kA).error() == TargetError::two_passkeys);
    CHECK(parse_tracker_target("/announce", "passkey=" + kA + "&passkey=" + kB).error() ==
          TargetError::two_passkeys);
    CHECK(failure_reason(TargetError::bad_passkey) ==
          "malformed passkey (16 to 128 characters of A-Z a-z 0-9 _ -)");
}

TEST_CASE("a whole target (BEP 41 URLData) splits at the first '?'", "[tracker][passkeys]") {
    auto path_form = parse_tracker_target("/announce/" + kA);
    REQUIRE(path_form.ok());
    CHECK(path_form->passkey == kA);
    auto query_form = parse_tracker_target("/announce?passkey=" + kB);
    REQUIRE(query_form.ok());
    CHECK(query_form->passkey == kB);
    CHECK(parse_tracker_target("/").error() == TargetError::not_a_tracker_path);
}

TEST_CASE("the access log sees the target with every passkey replaced by a star", "[tracker][passkeys]") {
    CHECK(redact_passkey("/announce/" + kA + "?info_hash=%01&port=1") == "/announce/*?info_hash=%01&port=1");
    CHECK(redact_passkey("/scrape?info_hash=%01&passkey=" + kA) == "/scrape?info_hash=%01&passkey=*");
    CHECK(redact_passkey("/announce?passkey=" + kA + "&passkey=" + kB) == "/announce?passkey=*&passkey=*");
    CHECK(redact_passkey("/announce/" + kA + "/x") == "/announce/*");
    CHECK(redact_passkey("/announce?info_hash=%01") == "/announce?info_hash=%01");
    CHECK(redact_passkey("/stats?limit=3") == "/stats?limit=3");
    CHECK(redact_passkey("/announce/") == "/announce/");
    CHECK(redact_passkey("/announce?") == "/announce?");
}

TEST_CASE("BEP 41 options: URLData pieces are joined, NOP skipped, unknown options skipped by length",
          "[tracker][passkeys][udp]") {
    using namespace std::string_literals;
    CHECK(udp_url_data("") == "");
    CHECK(udp_url_data("\x02\x05/anno"s + "\x02\x04unce"s) == "/announce");
    CHECK(udp_url_data("\x01\x01\x02\x03/an\x00\x02\x03xyz"s) == "/an");  // EndOfOptions stops
    CHECK(udp_url_data("\x07\x02zz\x02\x03/an"s) == "/an");               // unknown type 7
    CHECK(udp_url_data("\x02\x03/an\x02\x09trunc"s) == "/an");            // truncated: dropped
    CHECK(udp_url_data("\x02"s) == "");                                   // no length byte
    std::string long_data(255, 'k');
    CHECK(udp_url_data("\x02\xff"s + long_data) == long_data);
}
