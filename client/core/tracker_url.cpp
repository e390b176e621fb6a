#include "client/core/tracker_url.hpp"

namespace toast::client {

bool valid_passkey(std::string_view key) {
    if (key.size() < 16 || key.size() > 128) return false;
    for (char c : key) {
        const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                        c == '_' || c == '-';
        if (!ok) return false;
    }
    return true;
}

namespace {

// "passkey=OLD" replaced by "passkey=KEY" in a query; false when the query names no passkey.
bool replace_in_query(std::string_view query, std::string_view key, std::string& out) {
    bool found = false;
    while (true) {
        const auto amp = query.find('&');
        const std::string_view pair = query.substr(0, amp);
        if (pair.substr(0, pair.find('=')) == "passkey") {
            out.append("passkey=").append(key);
            found = true;
        } else {
            out.append(pair);
        }
        if (amp == std::string_view::npos) return found;
        out.push_back('&');
        query = query.substr(amp + 1);
    }
}

}  // namespace

std::string with_passkey(std::string_view url, std::string_view key) {
    // head: scheme://authority; then the path, up to the query ('?') and fragment ('#').
    const auto scheme = url.find("://");
    const std::size_t authority = scheme == std::string_view::npos ? 0 : scheme + 3;
    const auto tail_start = std::min(url.find_first_of("/?#", authority), url.size());
    const std::string_view head = url.substr(0, tail_start);
    const auto fragment_start = std::min(url.find('#', tail_start), url.size());
    const auto query_start = std::min(url.find('?', tail_start), fragment_start);
    const std::string_view path = url.substr(tail_start, query_start - tail_start);
    const std::string_view query =
        query_start < fragment_start ? url.substr(query_start + 1, fragment_start - query_start - 1) : "";
    const std::string_view fragment = url.substr(fragment_start);

    std::string out(head);
    constexpr std::string_view kAnnounce = "/announce";
    const auto last_slash = path.rfind('/');
    std::string new_query;
    if (query_start < fragment_start && replace_in_query(query, key, new_query)) {
        out.append(path).append("?").append(new_query);
    } else if (path.size() >= kAnnounce.size() && path.substr(path.size() - kAnnounce.size()) == kAnnounce) {
        out.append(path).append("/").append(key);
        if (query_start < fragment_start) out.append("?").append(query);
    } else if (last_slash != std::string_view::npos && last_slash >= kAnnounce.size() &&
               path.substr(last_slash - kAnnounce.size(), kAnnounce.size()) == kAnnounce) {
        // ".../announce/OLD": the key is the last segment.
        out.append(path.substr(0, last_slash + 1)).append(key);
        if (query_start < fragment_start) out.append("?").append(query);
    } else {
        out.append(path).append("?");
        if (!query.empty()) out.append(query).append("&");
        out.append("passkey=").append(key);
    }
    out.append(fragment);
    return out;
}

}  // namespace toast::client
