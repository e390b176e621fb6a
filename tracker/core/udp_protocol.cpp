#include "tracker/core/udp_protocol.hpp"

#include <cstring>

#include "tracker/core/passkeys.hpp"

namespace toast::tracker::udp {

std::string_view to_string(ParseError e) {
    switch (e) {
        case ParseError::too_short:
            return "too_short";
        case ParseError::bad_protocol_id:
            return "bad_protocol_id";
        case ParseError::unknown_action:
            return "unknown_action";
        case ParseError::bad_event:
            return "bad_event";
        case ParseError::bad_port:
            return "bad_port";
        case ParseError::bad_scrape_length:
            return "bad_scrape_length";
        case ParseError::too_many_hashes:
            return "too_many_hashes";
    }
    return "unknown";
}

namespace {

// Big-endian (network order) reader over a span; callers check sizes before reading.
class Reader {
  public:
    explicit Reader(std::span<const std::uint8_t> s) : s_(s) {}
    std::uint64_t u64() { return read(8); }
    std::uint32_t u32() { return static_cast<std::uint32_t>(read(4)); }
    std::uint16_t u16() { return static_cast<std::uint16_t>(read(2)); }
    std::string_view bytes(std::size_t n) {
        std::string_view v(reinterpret_cast<const char*>(s_.data() + pos_), n);
        pos_ += n;
        return v;
    }

  private:
    std::uint64_t read(std::size_t n) {
        std::uint64_t v = 0;
        for (std::size_t i = 0; i < n; ++i)
            v = (v << 8) | s_[pos_ + i];
        pos_ += n;
        return v;
    }
    std::span<const std::uint8_t> s_;
    std::size_t pos_ = 0;
};

class Writer {
  public:
    void u64(std::uint64_t v) { write(v, 8); }
    void u32(std::uint32_t v) { write(v, 4); }
    void u16(std::uint16_t v) { write(v, 2); }
    void bytes(const std::uint8_t* p, std::size_t n) { out.insert(out.end(), p, p + n); }
    void bytes(std::string_view s) { bytes(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()); }
    std::vector<std::uint8_t> out;

  private:
    void write(std::uint64_t v, std::size_t n) {
        for (std::size_t i = n; i-- > 0;)
            out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    }
};

}  // namespace

Result<Request, ParseError> parse_request(std::span<const std::uint8_t> packet) {
    if (packet.size() < kConnectSize) return ParseError::too_short;
    Reader r(packet);
    const std::uint64_t connection_id = r.u64();
    const std::uint32_t action = r.u32();
    const std::uint32_t transaction_id = r.u32();

    switch (static_cast<Action>(action)) {
        case Action::connect:
            if (connection_id != kProtocolId) return ParseError::bad_protocol_id;
            return Request(ConnectRequest{transaction_id});
        case Action::announce: {
            if (packet.size() < kAnnounceSize) return ParseError::too_short;
            AnnounceRequestPacket a;
            a.connection_id = connection_id;
            a.transaction_id = transaction_id;
            auto& q = a.request;
            q.info_hash = *InfoHash::from_bytes(r.bytes(20));
            q.peer_id = *PeerId::from_bytes(r.bytes(20));
            q.downloaded = r.u64();
            q.left = r.u64();
            q.uploaded = r.u64();
            switch (r.u32()) {
                case 0:
                    q.event = AnnounceEvent::none;
                    break;
                case 1:
                    q.event = AnnounceEvent::completed;
                    break;
                case 2:
                    q.event = AnnounceEvent::started;
                    break;
                case 3:
                    q.event = AnnounceEvent::stopped;
                    break;
                case 4:
                    q.event = AnnounceEvent::paused;
                    break;
                default:
                    return ParseError::bad_event;
            }
            const std::uint32_t ip = r.u32();
            if (ip != 0) q.ip = IpAddress::v4_from(ip);
            a.key = r.u32();
            const auto numwant = static_cast<std::int32_t>(r.u32());
            if (numwant >= 0) q.numwant = static_cast<std::uint64_t>(numwant);
            q.port = r.u16();
            if (q.port == 0) return ParseError::bad_port;
            q.compact = true;
            a.url_data = udp_url_data(r.bytes(packet.size() - kAnnounceSize));
            return Request(std::move(a));
        }
        case Action::scrape: {
            const std::size_t body = packet.size() - kScrapeHeaderSize;
            if (body == 0 || body % 20 != 0) return ParseError::bad_scrape_length;
            if (body / 20 > kMaxScrapeHashes) return ParseError::too_many_hashes;
            ScrapeRequestPacket s;
            s.connection_id = connection_id;
            s.transaction_id = transaction_id;
            for (std::size_t i = 0; i < body / 20; ++i)
                s.info_hashes.push_back(*InfoHash::from_bytes(r.bytes(20)));
            return Request(std::move(s));
        }
        case Action::error:
            break;
    }
    return ParseError::unknown_action;
}

std::vector<std::uint8_t> write_connect_response(std::uint32_t transaction_id, std::uint64_t connection_id) {
    Writer w;
    w.u32(static_cast<std::uint32_t>(Action::connect));
    w.u32(transaction_id);
    w.u64(connection_id);
    return std::move(w.out);
}

std::vector<std::uint8_t> write_announce_response(std::uint32_t transaction_id, std::chrono::seconds interval,
                                                  const SwarmCounts& counts,
                                                  const std::vector<PeerInfo>& peers, bool v6) {
    Writer w;
    w.u32(static_cast<std::uint32_t>(Action::announce));
    w.u32(transaction_id);
    w.u32(static_cast<std::uint32_t>(interval.count()));
    w.u32(counts.leechers);
    w.u32(counts.seeders);
    for (const auto& p : peers) {
        if (p.endpoint.ip.v6 != v6) continue;
        w.bytes(p.endpoint.ip.bytes.data(), p.endpoint.ip.size());
        w.u16(p.endpoint.port);
    }
    return std::move(w.out);
}

std::vector<std::uint8_t> write_scrape_response(std::uint32_t transaction_id,
                                                const std::vector<SwarmCounts>& counts) {
    Writer w;
    w.u32(static_cast<std::uint32_t>(Action::scrape));
    w.u32(transaction_id);
    for (const auto& c : counts) {
        w.u32(c.seeders);
        w.u32(static_cast<std::uint32_t>(std::min<std::uint64_t>(c.completed, 0xffffffffu)));
        w.u32(c.leechers);
    }
    return std::move(w.out);
}

std::vector<std::uint8_t> write_error(std::uint32_t transaction_id, std::string_view message) {
    Writer w;
    w.u32(static_cast<std::uint32_t>(Action::error));
    w.u32(transaction_id);
    w.bytes(message);
    return std::move(w.out);
}

std::size_t max_peers_per_datagram(bool v6) {
    return (kMaxDatagram - 20) / (v6 ? 18 : 6);
}

std::vector<std::uint8_t> write_connect_request(std::uint32_t transaction_id) {
    Writer w;
    w.u64(kProtocolId);
    w.u32(static_cast<std::uint32_t>(Action::connect));
    w.u32(transaction_id);
    return std::move(w.out);
}

std::vector<std::uint8_t> write_announce_request(std::uint64_t connection_id, std::uint32_t transaction_id,
                                                 const AnnounceRequest& request, std::uint32_t key,
                                                 std::int32_t numwant, std::string_view url_data) {
    Writer w;
    w.u64(connection_id);
    w.u32(static_cast<std::uint32_t>(Action::announce));
    w.u32(transaction_id);
    w.bytes(request.info_hash.view());
    w.bytes(request.peer_id.view());
    w.u64(request.downloaded);
    w.u64(request.left);
    w.u64(request.uploaded);
    std::uint32_t event = 0;
    switch (request.event) {
        case AnnounceEvent::none:
            event = 0;
            break;
        case AnnounceEvent::completed:
            event = 1;
            break;
        case AnnounceEvent::started:
            event = 2;
            break;
        case AnnounceEvent::stopped:
            event = 3;
            break;
        case AnnounceEvent::paused:
            event = 4;
            break;
    }
    w.u32(event);
    std::uint32_t ip = 0;
    if (request.ip && !request.ip->v6) {
        const auto& b = request.ip->bytes;
        ip = (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) | b[3];
    }
    w.u32(ip);
    w.u32(key);
    w.u32(static_cast<std::uint32_t>(numwant));
    w.u16(request.port);
    // As libtorrent writes it: one URLData option of at most 255 bytes, no EndOfOptions.
    if (!url_data.empty()) {
        url_data = url_data.substr(0, 255);
        w.out.push_back(2);
        w.out.push_back(static_cast<std::uint8_t>(url_data.size()));
        w.bytes(url_data);
    }
    return std::move(w.out);
}

std::vector<std::uint8_t> write_scrape_request(std::uint64_t connection_id, std::uint32_t transaction_id,
                                               const std::vector<InfoHash>& info_hashes) {
    Writer w;
    w.u64(connection_id);
    w.u32(static_cast<std::uint32_t>(Action::scrape));
    w.u32(transaction_id);
    for (const auto& h : info_hashes)
        w.bytes(h.view());
    return std::move(w.out);
}

ConnectionIds::ConnectionIds(SipKey secret, std::chrono::seconds window) : secret_(secret), window_(window) {}

std::int64_t ConnectionIds::window_index(TimePoint now) const {
    return std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count() / window_.count();
}

std::uint64_t ConnectionIds::id_for(const IpAddress& client, std::int64_t index) const {
    char buf[16 + 1 + 8];
    std::memcpy(buf, client.bytes.data(), 16);
    buf[16] = client.v6 ? 1 : 0;
    for (int i = 0; i < 8; ++i)
        buf[17 + i] = static_cast<char>(static_cast<std::uint64_t>(index) >> (8 * i));
    return siphash24(secret_, std::string_view(buf, sizeof buf));
}

std::uint64_t ConnectionIds::issue(const IpAddress& client, TimePoint now) const {
    return id_for(client, window_index(now));
}

bool ConnectionIds::valid(std::uint64_t id, const IpAddress& client, TimePoint now) const {
    const auto index = window_index(now);
    return id == id_for(client, index) || id == id_for(client, index - 1);
}

}  // namespace toast::tracker::udp
