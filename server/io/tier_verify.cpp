#include "server/io/tier_verify.hpp"

#include <future>
#include <set>

#include "server/core/block_math.hpp"
#include "server/core/crc32c.hpp"
#include "server/io/catalogue.hpp"
#include "server/io/tier_client.hpp"

namespace toast::server {

namespace {

// Empty when `data` is block `b` of `m`, else what is wrong with it.
std::string check_block(const Manifest& m, std::uint64_t b, const std::string& data) {
    const auto expected = block_length(b, m.size, m.block_size);
    if (data.size() != expected)
        return std::to_string(data.size()) + " bytes, expected " + std::to_string(expected);
    const auto& crcs = m.blocks[b].chunk_crcs;
    for (std::uint64_t c = 0; c < crcs.size(); ++c) {
        const auto off = c * m.chunk_size;
        const auto len = std::min<std::uint64_t>(m.chunk_size, expected - off);
        if (crc32c(data.data() + off, len) != crcs[c])
            return "corrupt: chunk " + std::to_string(c) + " fails its CRC-32C";
    }
    return {};
}

}  // namespace

void verify_tier(const ServerConfig& config, VerifyReport& report, const std::optional<std::string>& title,
                 TierClient::Authorizer authorizer) {
    if (!config.tier) return;
    std::vector<std::filesystem::path> disks;
    for (const auto& d : config.disks)
        disks.push_back(d.path);
    auto scan = Catalogue(disks).scan();
    MetricsRegistry metrics;
    TierClient client(*config.tier, metrics);
    if (authorizer) client.set_authorizer(std::move(authorizer));
    std::set<std::string> nodes;
    for (const auto& [name, entry] : scan.titles) {
        if (title && name != *title) continue;
        const auto& m = entry.manifest;
        if (!m.tier) continue;
        const auto self = m.tier->self();
        const auto etag = "\"" + m.tier->content + "\"";
        for (std::uint64_t b = 0; b < m.blocks.size(); ++b) {
            for (auto h : m.tier->layout.holders(m.title, b)) {
                if (h == self) continue;
                const auto& node = m.tier->layout.node(h);
                nodes.insert(node.id);
                RelayRequest r;
                r.title = m.title;
                r.target = "/titles/" + m.title;
                r.etag = etag;
                r.offset = b * m.block_size;
                r.length = block_length(b, m.size, m.block_size);
                // Every chunk the node sends is checked again from its disk, whatever it checked before.
                r.revalidate = true;
                std::promise<RelayAnswer> answer;
                auto got = answer.get_future();
                client.fetch(client.node(node.url), std::move(r),
                             [&answer](RelayAnswer a) { answer.set_value(std::move(a)); });
                const auto a = got.get();
                ++report.remote_replicas;
                const auto where = "title \"" + name + "\" block " + std::to_string(b) + " on node " +
                                   node.id + " (" + node.url + ")";
                if (!a.data) {
                    report.problems.push_back(where + ": " + a.error);
                    continue;
                }
                report.bytes += a.data->size();
                if (auto problem = check_block(m, b, *a.data); !problem.empty())
                    report.problems.push_back(where + ": " + problem);
            }
        }
    }
    report.nodes = nodes.size();
}

}  // namespace toast::server
