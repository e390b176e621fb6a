#include "tracker/core/announce_request.hpp"

#include <charconv>
#include <limits>
#include <map>

namespace toast::tracker {

std::string_view failure_reason(AnnounceError e) {
    switch (e) {
        case AnnounceError::bad_encoding:
            return "malformed percent-encoding in the query";
        case AnnounceError::duplicate_parameter:
            return "a parameter is given more than once";
        case AnnounceError::missing_info_hash:
            return "missing info_hash";
        case AnnounceError::bad_info_hash:
            return "info_hash must be exactly 20 bytes";
        case AnnounceError::missing_peer_id:
            return "missing peer_id";
        case AnnounceError::bad_peer_id:
            return "peer_id must be exactly 20 bytes";
        case AnnounceError::missing_port:
            return "missing port";
        case AnnounceError::bad_port:
            return "port must be an integer in 1..65535";
        case AnnounceError::missing_uploaded:
            return "missing uploaded";
        case AnnounceError::bad_uploaded:
            return "uploaded must be a non-negative integer";
        case AnnounceError::missing_downloaded:
            return "missing downloaded";
        case AnnounceError::bad_downloaded:
            return "downloaded must be a non-negative integer";
        case AnnounceError::missing_left:
            return "missing left";
        case AnnounceError::bad_left:
            return "left must be a non-negative integer";
        case AnnounceError::bad_event:
            return "event must be started, completed, stopped, paused or empty";
        case AnnounceError::bad_numwant:
            return "numwant must be a non-negative integer";
        case AnnounceError::bad_compact:
            return "compact must be 0 or 1";
    }
    return "malformed announce";
}

std::string_view to_string(AnnounceError e) {
    switch (e) {
        case AnnounceError::bad_encoding:
            return "bad_encoding";
        case AnnounceError::duplicate_parameter:
            return "duplicate_parameter";
        case AnnounceError::missing_info_hash:
            return "missing_info_hash";
        case AnnounceError::bad_info_hash:
            return "bad_info_hash";
        case AnnounceError::missing_peer_id:
            return "missing_peer_id";
        case AnnounceError::bad_peer_id:
            return "bad_peer_id";
        case AnnounceError::missing_port:
            return "missing_port";
        case AnnounceError::bad_port:
            return "bad_port";
        case AnnounceError::missing_uploaded:
            return "missing_uploaded";
        case AnnounceError::bad_uploaded:
            return "bad_uploaded";
        case AnnounceError::missing_downloaded:
            return "missing_downloaded";
        case AnnounceError::bad_downloaded:
            return "bad_downloaded";
        case AnnounceError::missing_left:
            return "missing_left";
        case AnnounceError::bad_left:
            return "bad_left";
        case AnnounceError::bad_event:
            return "bad_event";
        case AnnounceError::bad_numwant:
            return "bad_numwant";
        case AnnounceError::bad_compact:
            return "bad_compact";
    }
    return "unknown";
}

std::string_view failure_reason(ScrapeError e) {
    switch (e) {
        case ScrapeError::bad_encoding:
            return "malformed percent-encoding in the query";
        case ScrapeError::missing_info_hash:
            return "scrape needs at least one info_hash";
        case ScrapeError::bad_info_hash:
            return "info_hash must be exactly 20 bytes";
        case ScrapeError::too_many_info_hashes:
            return "too many info_hash parameters in one scrape";
    }
    return "malformed scrape";
}

namespace {

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// Digits only (no sign, no spaces), at most `max`.
std::optional<std::uint64_t> parse_uint(std::string_view s, std::uint64_t max) {
    if (s.empty()) return std::nullopt;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
    }
    std::uint64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || v > max) return std::nullopt;
    return v;
}

constexpr std::uint64_t kMaxCounter = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());

}  // namespace

std::optional<std::string> percent_decode(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (c != '%') {
            out += c;
            continue;
        }
        if (i + 2 >= text.size()) return std::nullopt;
        int hi = hex_digit(text[i + 1]);
        int lo = hex_digit(text[i + 2]);
        if (hi < 0 || lo < 0) return std::nullopt;
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
    }
    return out;
}

std::optional<std::vector<std::pair<std::string, std::string>>> parse_query(std::string_view query) {
    std::vector<std::pair<std::string, std::string>> out;
    std::size_t pos = 0;
    while (pos <= query.size()) {
        std::size_t amp = query.find('&', pos);
        if (amp == std::string_view::npos) amp = query.size();
        std::string_view part = query.substr(pos, amp - pos);
        pos = amp + 1;
        if (part.empty()) continue;
        std::size_t eq = part.find('=');
        auto key = percent_decode(part.substr(0, eq));
        auto value = percent_decode(eq == std::string_view::npos ? std::string_view() : part.substr(eq + 1));
        if (!key || !value) return std::nullopt;
        out.emplace_back(std::move(*key), std::move(*value));
    }
    return out;
}

Result<AnnounceRequest, AnnounceError> parse_announce(std::string_view query) {
    auto pairs = parse_query(query);
    if (!pairs) return AnnounceError::bad_encoding;

    static const char* const known[] = {"info_hash", "peer_id", "port",    "uploaded",   "downloaded", "left",
                                        "event",     "numwant", "compact", "no_peer_id", "ip"};
    std::map<std::string_view, const std::string*> found;
    for (const auto& [k, v] : *pairs) {
        for (const char* name : known) {
            if (k == name) {
                if (!found.emplace(name, &v).second) return AnnounceError::duplicate_parameter;
                break;
            }
        }
    }
    auto get = [&](std::string_view name) -> const std::string* {
        auto it = found.find(name);
        return it == found.end() ? nullptr : it->second;
    };

    AnnounceRequest r;
    const std::string* v = get("info_hash");
    if (!v) return AnnounceError::missing_info_hash;
    auto ih = InfoHash::from_bytes(*v);
    if (!ih) return AnnounceError::bad_info_hash;
    r.info_hash = *ih;

    v = get("peer_id");
    if (!v) return AnnounceError::missing_peer_id;
    auto pid = PeerId::from_bytes(*v);
    if (!pid) return AnnounceError::bad_peer_id;
    r.peer_id = *pid;

    v = get("port");
    if (!v) return AnnounceError::missing_port;
    auto port = parse_uint(*v, 65535);
    if (!port || *port == 0) return AnnounceError::bad_port;
    r.port = static_cast<std::uint16_t>(*port);

    struct Counter {
        const char* name;
        std::uint64_t* field;
        AnnounceError missing;
        AnnounceError bad;
    };
    const Counter counters[] = {
        {"uploaded", &r.uploaded, AnnounceError::missing_uploaded, AnnounceError::bad_uploaded},
        {"downloaded", &r.downloaded, AnnounceError::missing_downloaded, AnnounceError::bad_downloaded},
        {"left", &r.left, AnnounceError::missing_left, AnnounceError::bad_left},
    };
    for (const auto& c : counters) {
        v = get(c.name);
        if (!v) return c.missing;
        auto n = parse_uint(*v, kMaxCounter);
        if (!n) return c.bad;
        *c.field = *n;
    }

    if ((v = get("event"))) {
        if (*v == "started") {
            r.event = AnnounceEvent::started;
        } else if (*v == "completed") {
            r.event = AnnounceEvent::completed;
        } else if (*v == "stopped") {
            r.event = AnnounceEvent::stopped;
        } else if (*v == "paused") {
            r.event = AnnounceEvent::paused;
        } else if (v->empty()) {
            r.event = AnnounceEvent::none;
        } else {
            return AnnounceError::bad_event;
        }
    }
    if ((v = get("numwant"))) {
        auto n = parse_uint(*v, std::numeric_limits<std::uint64_t>::max());
        if (!n) return AnnounceError::bad_numwant;
        r.numwant = *n;
    }
    if ((v = get("compact"))) {
        if (*v == "1") {
            r.compact = true;
        } else if (*v == "0") {
            r.compact = false;
        } else {
            return AnnounceError::bad_compact;
        }
    }
    if ((v = get("no_peer_id"))) r.no_peer_id = (*v == "1");
    if ((v = get("ip"))) r.ip = IpAddress::parse(*v);
    return r;
}

Result<std::vector<InfoHash>, ScrapeError> parse_scrape(std::string_view query, std::size_t max_hashes) {
    auto pairs = parse_query(query);
    if (!pairs) return ScrapeError::bad_encoding;
    std::vector<InfoHash> hashes;
    for (const auto& [k, v] : *pairs) {
        if (k != "info_hash") continue;
        if (hashes.size() == max_hashes) return ScrapeError::too_many_info_hashes;
        auto ih = InfoHash::from_bytes(v);
        if (!ih) return ScrapeError::bad_info_hash;
        hashes.push_back(*ih);
    }
    if (hashes.empty()) return ScrapeError::missing_info_hash;
    return hashes;
}

}  // namespace toast::tracker
