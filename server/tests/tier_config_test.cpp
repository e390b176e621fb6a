#include <catch2/catch.hpp>

#include "server/core/server_config.hpp"
#include "toast/common/config.hpp"

using namespace toast;
using namespace toast::server;
using Catch::Matchers::Contains;

namespace {

ServerConfig load(const std::string& tier, const std::string& more = "") {
    return load_server_config(nlohmann::json::parse(R"({"disks":["/d0","/d1"],"listen":"127.0.0.1:0",)" +
                                                    more + R"("tier":)" + tier + "}"));
}

constexpr const char* kNodes = R"("nodes":[{"id":"a","url":"http://10.0.0.1:8080"},
    {"id":"b","url":"http://10.0.0.2:8080/"},{"id":"c","url":"http://10.0.0.3:8080"}])";

}  // namespace

TEST_CASE("a tier config names the nodes, this node and the defaults", "[server][config][tier]") {
    const auto c = load(std::string("{") + kNodes + R"(,"self":"b"})");
    REQUIRE(c.tier);
    CHECK(c.tier->layout.nodes.size() == 3);
    CHECK(c.tier->layout.nodes[1].url == "http://10.0.0.2:8080");  // trailing '/' dropped
    CHECK(c.tier->self == NodeIndex(1));
    CHECK(c.tier->layout.replicas == 2);
    CHECK(c.tier->layout.placement == TierPlacement::block);
    CHECK(c.tier->relay_timeout == std::chrono::seconds(2));
    CHECK(c.tier->status_interval == std::chrono::seconds(1));
    CHECK(c.tier->relay_connections == 8);
    // The node's public URL is its url in the tier.
    CHECK(c.public_url == "http://10.0.0.2:8080");

    const auto one = load(R"({"nodes":[{"id":"solo","url":"http://h:1"}],"self":"solo"})");
    CHECK(one.tier->layout.replicas == 1);
    const auto title = load(std::string("{") + kNodes +
                            R"(,"self":"a","replicas":3,"placement":"title","relay_timeout":"500ms"})");
    CHECK(title.tier->layout.replicas == 3);
    CHECK(title.tier->layout.placement == TierPlacement::title);
    CHECK(title.tier->relay_timeout == std::chrono::milliseconds(500));
    CHECK_FALSE(load_server_config(nlohmann::json::parse(R"({"disks":["/d0","/d1"]})")).tier);
}

TEST_CASE("a bad tier config is refused naming the field", "[server][config][tier]") {
    auto bad = [](const std::string& tier, const std::string& more = "") { return load(tier, more); };
    CHECK_THROWS_WITH(
        bad(std::string("{") + kNodes + R"(,"self":"d"})"),
        Contains("'tier.self'") && Contains("\"d\" is not the id of a node in tier.nodes (a, b, c)"));
    CHECK_THROWS_WITH(bad(std::string("{") + kNodes + "}"), Contains("'tier.self'") && Contains("required"));
    CHECK_THROWS_WITH(bad(R"({"self":"a"})"), Contains("'tier.nodes'") && Contains("required"));
    CHECK_THROWS_WITH(bad(R"({"nodes":[],"self":"a"})"),
                      Contains("'tier.nodes'") && Contains("expected 1..256 nodes, got 0"));
    CHECK_THROWS_WITH(
        bad(R"({"nodes":[{"id":"a","url":"http://h:1"},{"id":"a","url":"http://h:2"}],"self":"a"})"),
        Contains("'tier.nodes[1].id'") && Contains("\"a\" names two nodes"));
    CHECK_THROWS_WITH(bad(R"({"nodes":[{"id":"a/b","url":"http://h:1"}],"self":"a"})"),
                      Contains("'tier.nodes[0].id'") && Contains("\"a/b\""));
    CHECK_THROWS_WITH(bad(R"({"nodes":[{"id":"a","url":"https://h:1"}],"self":"a"})"),
                      Contains("'tier.nodes[0].url'") && Contains("expected http://HOST:PORT"));
    CHECK_THROWS_WITH(
        bad(R"({"nodes":[{"id":"a","url":"http://h:1"},{"id":"b","url":"http://h:1"}],"self":"a"})"),
        Contains("'tier.nodes[1].url'") && Contains("is given for two nodes"));
    CHECK_THROWS_WITH(bad(R"({"nodes":[{"id":"a","url":"http://h:1","weight":2}],"self":"a"})"),
                      Contains("'tier.nodes[0].weight'") && Contains("unknown field"));
    CHECK_THROWS_WITH(bad(std::string("{") + kNodes + R"(,"self":"a","replicas":4})"),
                      Contains("'tier.replicas'") && Contains("expected 1..3"));
    CHECK_THROWS_WITH(bad(std::string("{") + kNodes + R"(,"self":"a","replicas":0})"),
                      Contains("'tier.replicas'") && Contains("outside [1, 8]"));
    CHECK_THROWS_WITH(bad(std::string("{") + kNodes + R"(,"self":"a","placement":"disk"})"),
                      Contains("'tier.placement'") && Contains("expected block or title, got \"disk\""));
    CHECK_THROWS_WITH(bad(std::string("{") + kNodes + R"(,"self":"a","relay_timeout":"1ms"})"),
                      Contains("'tier.relay_timeout'") && Contains("outside [50ms, 10min]"));
    CHECK_THROWS_WITH(bad(std::string("{") + kNodes + R"(,"self":"a","status":1})"),
                      Contains("'tier.status'") && Contains("unknown field"));
    CHECK_THROWS_WITH(bad(std::string("{") + kNodes + R"(,"self":"a"})", R"("public_url":"http://vod:80",)"),
                      Contains("'public_url'") && Contains("is not this node's url in the tier"));
    CHECK_NOTHROW(
        bad(std::string("{") + kNodes + R"(,"self":"a"})", R"("public_url":"http://10.0.0.1:8080/",)"));
    // The nodes relay to each other over http://: a node cannot serve TLS.
    CHECK_THROWS_WITH(bad(std::string("{") + kNodes + R"(,"self":"a"})",
                          R"("tls":{"certificate_chain":"/c.pem","private_key":"/k.pem"},)"),
                      Contains("'tier'") && Contains("cannot serve TLS"));
}
