// HTTP announce and scrape queries (BEP 3, BEP 23, BEP 48) parsed into typed requests. Each way a query can
// be malformed has its own error, so a client is told exactly what is wrong; nothing here throws.
//
// Decisions:
//  - Query strings are percent-decoded per RFC 3986; '+' stays a literal '+' (binary info-hashes may contain
//    0x2B, and BitTorrent clients percent-encode spaces anyway). A bad escape ("%4", "%zz") is an error.
//  - info_hash and peer_id must decode to exactly 20 bytes; port must be 1..65535; uploaded, downloaded and
//    left are required decimal integers in 0..2^63-1 (the range BEP 15 and libtorrent use).
//  - event: started, completed, stopped, paused (BEP 21: a partial seed), empty or absent.
//  - compact absent means compact (what every current client asks for); compact=0 asks for the dictionary
//    form. Unknown parameters (key, corrupt, supportcrypto, ipv4, ...) are ignored, but a known one given
//    twice is an error rather than a guess.
//  - ip= is kept if it is a numeric address; whether it is honoured is the registry's caller's decision.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tracker/core/ids.hpp"
#include "tracker/core/result.hpp"

namespace toast::tracker {

// `paused`: a partial seed (BEP 21), one that holds what it wants of the torrent and downloads nothing more;
// libtorrent sends it on every regular announce while it is one (HTTP event=paused, UDP event 4).
enum class AnnounceEvent { none, started, completed, stopped, paused };

struct AnnounceRequest {
    InfoHash info_hash;
    PeerId peer_id;
    std::uint16_t port = 0;
    std::uint64_t uploaded = 0;
    std::uint64_t downloaded = 0;
    std::uint64_t left = 0;
    AnnounceEvent event = AnnounceEvent::none;
    std::optional<std::uint64_t> numwant;  // absent: the tracker's default
    bool compact = true;
    bool no_peer_id = false;      // dictionary form without "peer id"
    std::optional<IpAddress> ip;  // the ip= parameter, if numeric
};

enum class AnnounceError {
    bad_encoding,
    duplicate_parameter,
    missing_info_hash,
    bad_info_hash,
    missing_peer_id,
    bad_peer_id,
    missing_port,
    bad_port,
    missing_uploaded,
    bad_uploaded,
    missing_downloaded,
    bad_downloaded,
    missing_left,
    bad_left,
    bad_event,
    bad_numwant,
    bad_compact,
};

// The text sent to the client as the bencoded "failure reason".
std::string_view failure_reason(AnnounceError e);
// A short stable name for metrics labels ("bad_port").
std::string_view to_string(AnnounceError e);

enum class ScrapeError { bad_encoding, missing_info_hash, bad_info_hash, too_many_info_hashes };
std::string_view failure_reason(ScrapeError e);

// Decodes %XX escapes; nullopt on a truncated or non-hex escape.
std::optional<std::string> percent_decode(std::string_view text);

// Splits "a=1&b=%20" into decoded pairs (a key without '=' has an empty value); nullopt on a bad escape.
std::optional<std::vector<std::pair<std::string, std::string>>> parse_query(std::string_view query);

// `query` is everything after '?' (possibly empty).
Result<AnnounceRequest, AnnounceError> parse_announce(std::string_view query);

// info_hash may repeat (BEP 48); at least one and at most `max_hashes` are accepted.
Result<std::vector<InfoHash>, ScrapeError> parse_scrape(std::string_view query, std::size_t max_hashes);

}  // namespace toast::tracker
