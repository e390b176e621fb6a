// Bencoded HTTP tracker bodies, built with libtorrent's entry/bencode (we do not keep a bencoder of our own).
//   announce: interval, min interval, complete, incomplete, downloaded, and either
//     compact:    peers = 6-byte IPv4 entries (BEP 23), peers6 = 18-byte IPv6 entries (BEP 7)
//     dictionary: peers = list of {peer id (unless no_peer_id), ip (text), port}, IPv4 and IPv6 alike
//   scrape (BEP 48): files = {20-byte info-hash: {complete, incomplete, downloaded}}
//   failure: failure reason, plus interval / min interval so clients that read them back off.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tracker/core/ids.hpp"
#include "tracker/core/swarm_registry.hpp"

namespace toast::tracker {

std::string bencode_announce(const AnnounceReply& reply, bool compact, bool include_peer_id);
std::string bencode_scrape(const std::vector<std::pair<InfoHash, SwarmCounts>>& files);
std::string bencode_failure(std::string_view reason, std::chrono::seconds interval,
                            std::chrono::seconds min_interval);

}  // namespace toast::tracker
