// The set of info-hashes an operator serves. Parsed from a text file with one hex info-hash per line;
// blank lines and lines starting with '#' are ignored, surrounding spaces are trimmed. A 64-digit (v2,
// SHA-256) hash is accepted and kept as its first 20 bytes, which is what BitTorrent v2 clients announce.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_set>

#include "tracker/core/ids.hpp"
#include "tracker/core/result.hpp"

namespace toast::tracker {

class Whitelist {
  public:
    Whitelist() = default;
    void add(const InfoHash& h) { hashes_.insert(h); }
    bool contains(const InfoHash& h) const { return hashes_.count(h) != 0; }
    std::size_t size() const { return hashes_.size(); }

  private:
    // Operator-chosen content, so a plain (unkeyed) hash of the first bytes is enough.
    struct Hasher {
        std::size_t operator()(const InfoHash& h) const;
    };
    std::unordered_set<InfoHash, Hasher> hashes_;
};

// The first bad line: its number (1-based) and what is wrong with it.
struct WhitelistError {
    std::size_t line = 0;
    std::string message;
};

Result<Whitelist, WhitelistError> parse_whitelist(std::string_view text);

}  // namespace toast::tracker
