#include "sim/sg/world.hpp"

#include <algorithm>
#include <cmath>

namespace toast::sim {

namespace {

constexpr double kEpochOffset = 1'000'000.0;

tracker::PeerId peer_id_of(BoxId box) {
    tracker::PeerId id;
    auto v = static_cast<std::uint32_t>(box);
    for (int i = 0; i < 4; ++i)
        id.bytes[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v >> (8 * i));
    return id;
}

// Boxes are 10.0.0.1 on; the address names the box.
tracker::IpAddress ip_of(BoxId box) {
    return tracker::IpAddress::v4_from(0x0A000001u + static_cast<std::uint32_t>(box));
}

BoxId box_of(const tracker::IpAddress& ip) {
    const std::uint32_t v = (std::uint32_t{ip.bytes[0]} << 24) | (std::uint32_t{ip.bytes[1]} << 16) |
                            (std::uint32_t{ip.bytes[2]} << 8) | std::uint32_t{ip.bytes[3]};
    return static_cast<BoxId>(v - 0x0A000001u);
}

tracker::RegistryPolicy registry_policy() {
    tracker::RegistryPolicy p;
    // A member announces every interval for as long as it is there; the simulator does not send those
    // regular announces, so nothing may expire.
    p.peer_expiry = std::chrono::seconds(365LL * 24 * 3600);
    return p;
}

}  // namespace

client::SteadyTime steady_at(double seconds) {
    return client::SteadyTime(std::chrono::duration_cast<client::SteadyTime::duration>(
        std::chrono::duration<double>(kEpochOffset + seconds)));
}

World::World(const PlatformSpec& platform, std::vector<TitleState> titles, ServerSetup server,
             SimTuning tuning, std::vector<double> box_uplink_bps)
    : platform_(platform),
      built_(build_platform(platform_)),
      titles_(std::move(titles)),
      server_(server,
              [&] {
                  std::vector<ServerTitle> st;
                  for (const auto& t : titles_)
                      st.push_back({t.name, t.geometry.total_size().value(),
                                    static_cast<double>(t.geometry.bitrate().value())});
                  return st;
              }()),
      tuning_(tuning),
      box_uplink_bps_(std::move(box_uplink_bps)),
      tracker_(registry_policy(), tracker::SipKey{1, 2}),
      uploaded_(box_uplink_bps_.size() + 1, 0),
      listening_(box_uplink_bps_.size()),
      rung_(box_uplink_bps_.size(), false) {
    // The controller's rules that count on the next tick (how long a held server part may wait for the peers'
    // blocks) must know the tick they get.
    client_tuning_.tick = std::chrono::milliseconds(std::llround(tuning_.tick_s * 1000));
}

simgrid::s4u::Host* World::host_of(BoxId box) const {
    if (is_seed(box)) return built_.seed;
    return built_.boxes.at(static_cast<std::size_t>(box));
}

double World::uplink_bps(BoxId b) const {
    if (is_seed(b)) return platform_.config.seed_uplink_bps;
    return box_uplink_bps_.at(static_cast<std::size_t>(b));
}

std::vector<BoxId> World::announce(int title, BoxId box, std::uint64_t left, Announcing as, int numwant,
                                   double now) {
    tracker::AnnounceRequest req;
    req.info_hash = titles_.at(static_cast<std::size_t>(title)).hash;
    req.peer_id = peer_id_of(box);
    req.port = 6881;
    req.left = left;
    req.event = as == Announcing::stopped               ? tracker::AnnounceEvent::stopped
                : as == Announcing::holding && left > 0 ? tracker::AnnounceEvent::paused
                                                        : tracker::AnnounceEvent::none;
    req.numwant = static_cast<std::uint64_t>(numwant);
    const auto at = tracker::TimePoint(std::chrono::duration_cast<tracker::TimePoint::duration>(
        std::chrono::duration<double>(kEpochOffset + now)));
    auto reply = tracker_.announce(req, ip_of(box), at);
    std::vector<BoxId> out;
    if (!reply) return out;
    for (const auto& p : reply.value().peers)
        out.push_back(box_of(p.endpoint.ip));
    return out;
}

void World::add_server_bytes(std::uint64_t bytes, double from, double to, bool seed) {
    (seed ? seed_bytes_ : vod_) += bytes;
    if (bytes == 0) return;
    const auto last = static_cast<std::size_t>(std::max(0.0, to) / bin_s_);
    if (bins_.size() <= last) bins_.resize(last + 1, 0.0);
    if (to <= from) {
        bins_[last] += static_cast<double>(bytes);
        return;
    }
    const double rate = static_cast<double>(bytes) / (to - from);
    for (auto i = static_cast<std::size_t>(std::max(0.0, from) / bin_s_); i <= last; ++i) {
        const double lo = std::max(from, static_cast<double>(i) * bin_s_);
        const double hi = std::min(to, static_cast<double>(i + 1) * bin_s_);
        if (hi > lo) bins_[i] += rate * (hi - lo);
    }
}

void World::add_upload(BoxId up, std::uint64_t bytes, double from, double to) {
    if (up < 0) return;
    uploaded_.at(static_cast<std::size_t>(up)) += bytes;
    if (is_seed(up)) add_server_bytes(bytes, from, to, true);
}

void World::listen(BoxId box, std::shared_ptr<Inbox> inbox) {
    listening_.at(static_cast<std::size_t>(box)) = std::move(inbox);
    rung_.at(static_cast<std::size_t>(box)) = false;
}

void World::poke(BoxId box) {
    if (box < 0 || is_seed(box)) return;
    const auto i = static_cast<std::size_t>(box);
    if (!listening_.at(i) || rung_[i]) return;
    rung_[i] = true;
    couriers_.start(simgrid::s4u::this_actor::get_host(), 0, listening_[i], true);
}

std::uint64_t World::uploaded(BoxId box) const {
    return uploaded_.at(static_cast<std::size_t>(box));
}

}  // namespace toast::sim
