#include "tracker/core/whitelist.hpp"

#include <cstring>

namespace toast::tracker {

std::size_t Whitelist::Hasher::operator()(const InfoHash& h) const {
    std::size_t v = 0;
    std::memcpy(&v, h.bytes.data(), sizeof v);
    return v;
}

namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

}  // namespace

Result<Whitelist, WhitelistError> parse_whitelist(std::string_view text) {
    Whitelist list;
    std::size_t line_no = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t nl = text.find('\n', pos);
        if (nl == std::string_view::npos) nl = text.size();
        std::string_view line = trim(text.substr(pos, nl - pos));
        pos = nl + 1;
        ++line_no;
        if (line.empty() || line.front() == '#') continue;
        if (line.size() != 40 && line.size() != 64) {
            return WhitelistError{line_no, "expected a 40- or 64-digit hex info-hash, got \"" +
                                               std::string(line.substr(0, 80)) + "\""};
        }
        auto raw = from_hex(line);
        if (!raw) {
            return WhitelistError{line_no, "not a hex info-hash: \"" + std::string(line) + "\""};
        }
        list.add(*InfoHash::from_bytes(std::string_view(*raw).substr(0, 20)));
    }
    return list;
}

}  // namespace toast::tracker
