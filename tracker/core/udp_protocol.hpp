// The UDP tracker protocol (BEP 15) as pure functions over byte spans, and its connection ids.
//
// Parsing is strict about structure (sizes, protocol id, action, event, port) and lenient about what BEP 15
// allows to follow: of the bytes after the 98-byte announce, BEP 41's URLData is kept (the passkey rides in
// it) and anything else, malformed options included, is ignored.
// Anything structurally wrong is an error the caller drops and counts; nothing here throws.
//
// Connection ids are SipHash(secret, client IP address, time window): nothing is stored per client, a
// forged or stale id fails the check, and an id stays valid for the window it was issued in and the next
// one, so at least one full window (BEP 15 asks clients to reuse an id for up to a minute). The id is not
// tied to the client's UDP port: libtorrent 2.0.8 caches connection ids per tracker address in one
// process-wide map (udp_tracker_connection.hpp:119) and reuses them from every listen socket and session,
// each sending from its own port. The IP still has to be able to receive the connect reply, which is what
// stops spoofed announces.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "tracker/core/announce_request.hpp"
#include "tracker/core/ids.hpp"
#include "tracker/core/result.hpp"
#include "tracker/core/siphash.hpp"
#include "tracker/core/swarm_registry.hpp"

namespace toast::tracker::udp {

inline constexpr std::uint64_t kProtocolId = 0x41727101980ull;
inline constexpr std::size_t kConnectSize = 16;
inline constexpr std::size_t kAnnounceSize = 98;
inline constexpr std::size_t kScrapeHeaderSize = 16;
inline constexpr std::size_t kMaxScrapeHashes = 74;  // BEP 15: what fits in one ordinary datagram
// A reply should fit one Ethernet-sized datagram (1500 - 20 IP - 8 UDP) without fragmentation.
inline constexpr std::size_t kMaxDatagram = 1472;

enum class Action : std::uint32_t { connect = 0, announce = 1, scrape = 2, error = 3 };

struct ConnectRequest {
    std::uint32_t transaction_id = 0;
};

struct AnnounceRequestPacket {
    std::uint64_t connection_id = 0;
    std::uint32_t transaction_id = 0;
    AnnounceRequest request;  // ip is set when the packet's IP field is non-zero
    std::uint32_t key = 0;
    std::string url_data;  // BEP 41 URLData: the tracker URL's path and query (libtorrent sends them)
};

struct ScrapeRequestPacket {
    std::uint64_t connection_id = 0;
    std::uint32_t transaction_id = 0;
    std::vector<InfoHash> info_hashes;
};

using Request = std::variant<ConnectRequest, AnnounceRequestPacket, ScrapeRequestPacket>;

enum class ParseError {
    too_short,
    bad_protocol_id,
    unknown_action,
    bad_event,
    bad_port,
    bad_scrape_length,
    too_many_hashes,
};
std::string_view to_string(ParseError e);

Result<Request, ParseError> parse_request(std::span<const std::uint8_t> packet);

std::vector<std::uint8_t> write_connect_response(std::uint32_t transaction_id, std::uint64_t connection_id);
// `peers` must all be of the family the datagram goes out on (6-byte IPv4 or 18-byte IPv6 entries).
std::vector<std::uint8_t> write_announce_response(std::uint32_t transaction_id, std::chrono::seconds interval,
                                                  const SwarmCounts& counts,
                                                  const std::vector<PeerInfo>& peers, bool v6);
std::vector<std::uint8_t> write_scrape_response(std::uint32_t transaction_id,
                                                const std::vector<SwarmCounts>& counts);
std::vector<std::uint8_t> write_error(std::uint32_t transaction_id, std::string_view message);

// How many peers of one family fit in an announce reply of kMaxDatagram bytes.
std::size_t max_peers_per_datagram(bool v6);

// Request builders, used by tests and the load generator (the client side of the protocol).
std::vector<std::uint8_t> write_connect_request(std::uint32_t transaction_id);
std::vector<std::uint8_t> write_announce_request(std::uint64_t connection_id, std::uint32_t transaction_id,
                                                 const AnnounceRequest& request, std::uint32_t key,
                                                 std::int32_t numwant, std::string_view url_data = {});
std::vector<std::uint8_t> write_scrape_request(std::uint64_t connection_id, std::uint32_t transaction_id,
                                               const std::vector<InfoHash>& info_hashes);

class ConnectionIds {
  public:
    ConnectionIds(SipKey secret, std::chrono::seconds window = std::chrono::seconds(60));
    std::uint64_t issue(const IpAddress& client, TimePoint now) const;
    bool valid(std::uint64_t id, const IpAddress& client, TimePoint now) const;

  private:
    std::uint64_t id_for(const IpAddress& client, std::int64_t window_index) const;
    std::int64_t window_index(TimePoint now) const;

    SipKey secret_;
    std::chrono::seconds window_;
};

}  // namespace toast::tracker::udp
