// toast-tracker's UDP path (BEP 15): the datagram -> udp::parse_request -> TrackerService::handle_udp. An
// announce or scrape gets a valid connection id patched in (a fuzzer cannot forge SipHash), so the packet
// reaches the registry rather than stopping at the id check. Checks: every reply fits one datagram and
// echoes the transaction id.
#include <chrono>
#include <cstring>
#include <vector>

#include "fuzz_support.hpp"
#include "tracker/core/udp_protocol.hpp"
#include "tracker/io/tracker_service.hpp"

namespace {

using namespace toast;
using namespace toast::tracker;

std::uint32_t be32(const std::uint8_t* p) {
    return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // The codec alone, on the bytes as they came.
    (void)udp::parse_request(std::span<const std::uint8_t>(data, size));

    TrackerConfig config;
    MetricsRegistry metrics;
    TrackerService service(config, ServiceSecrets{{1, 2}, {3, 4}}, metrics);
    const bool v6 = size > 0 && (data[size - 1] & 1);  // the last byte picks the family of the source
    PeerEndpoint source{v6 ? *IpAddress::parse("2001:db8::7") : *IpAddress::parse("192.0.2.7"), 6881};
    const auto now = TimePoint(std::chrono::hours(1000));

    auto connect = service.handle_udp(udp::write_connect_request(7), source, now);
    TOAST_FUZZ_CHECK(connect && connect->size() == 16);
    std::vector<std::uint8_t> packet(data, data + size);
    if (packet.size() >= 16 && be32(packet.data() + 8) != 0) {
        std::memcpy(packet.data(), connect->data() + 8, 8);
    }
    auto reply = service.handle_udp(packet, source, now);
    if (reply) {
        TOAST_FUZZ_CHECK(reply->size() >= 8 && reply->size() <= udp::kMaxDatagram);
        TOAST_FUZZ_CHECK(std::memcmp(reply->data() + 4, packet.data() + 12, 4) == 0);
    }
    return 0;
}
