// The options of a box on a real network and in private swarms: where it listens, port forwarding, its
// passkey and its certificate, for `stream`/`play` and for `serve` and its config file.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "client/core/client_options.hpp"
#include "client/core/service_options.hpp"
#include "toast/common/config.hpp"

using namespace toast;
using namespace toast::client;

namespace {

const std::string kKey = "box1box1box1box1box1box1box1box1";

ParseResult parse(std::vector<std::string> extra, const std::string& listen = "6881") {
    std::vector<std::string> a{"stream", "a.torrent", "--save-dir", "d", "--stats", "s", "--listen", listen};
    a.insert(a.end(), extra.begin(), extra.end());
    return parse_client_args(a);
}

std::string serve_config_error(const char* text) {
    try {
        serve_options_from_config(nlohmann::json::parse(text));
    } catch (const toast::ConfigError& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace

TEST_CASE("listen with a port alone is every interface, with HOST:PORT one address",
          "[client][options][network]") {
    auto every = parse({});
    REQUIRE(every.options);
    CHECK(every.options->listen_host.empty());
    CHECK(every.options->listen_port == 6881);
    auto one = parse({}, "192.0.2.7:6881");
    REQUIRE(one.options);
    CHECK(one.options->listen_host == "192.0.2.7");
    CHECK_FALSE(every.options->upnp);
    CHECK_FALSE(every.options->natpmp);
    auto mapped = parse({"--upnp", "--natpmp"});
    REQUIRE(mapped.options);
    CHECK(mapped.options->upnp);
    CHECK(mapped.options->natpmp);
    CHECK(parse({"--upnp=yes"}).error == "--upnp: takes no value");
    const auto help = client_help_text();
    CHECK(help.find(
              "--listen [HOST:]PORT        BitTorrent listen port on every interface (0.0.0.0 and [::])") !=
          std::string::npos);
    for (const char* option :
         {"--upnp", "--natpmp", "--passkey KEY", "--ssl-cert FILE", "--ssl-key FILE", "--ssl-listen PORT"}) {
        INFO(option);
        CHECK(help.find(option) != std::string::npos);
    }
}

TEST_CASE("the passkey option takes a key the tracker would accept", "[client][options][passkey]") {
    auto ok = parse({"--passkey", kKey});
    REQUIRE(ok.options);
    CHECK(ok.options->passkey == kKey);
    CHECK_FALSE(parse({}).options->passkey);
    CHECK(parse({"--passkey", "short"}).error ==
          "--passkey: a passkey is 16 to 128 characters of A-Z a-z 0-9 _ -");
    CHECK(parse({"--passkey", "with/slash/with/slash"}).error ==
          "--passkey: a passkey is 16 to 128 characters of A-Z a-z 0-9 _ -");
}

TEST_CASE("a certificate comes with its key, and its SSL port defaults to --listen's + 1",
          "[client][options][ssl]") {
    auto ok = parse({"--ssl-cert", "box.pem", "--ssl-key", "box.key"});
    REQUIRE(ok.options);
    CHECK(ok.options->ssl_cert == "box.pem");
    CHECK(ok.options->ssl_key == "box.key");
    CHECK(ssl_listen_port_of(*ok.options) == std::uint16_t{6882});
    CHECK(ssl_listen_port_of(*parse({"--ssl-cert", "c", "--ssl-key", "k"}, "0").options) == std::uint16_t{0});
    CHECK(ssl_listen_port_of(*parse({"--ssl-cert", "c", "--ssl-key", "k", "--ssl-listen", "7000"}).options) ==
          std::uint16_t{7000});
    CHECK_FALSE(ssl_listen_port_of(*parse({}).options));

    CHECK(parse({"--ssl-cert", "box.pem"}).error ==
          "--ssl-cert: needs --ssl-key (the certificate's private key)");
    CHECK(parse({"--ssl-key", "box.key"}).error ==
          "--ssl-key: needs --ssl-cert (the certificate it belongs to)");
    CHECK(parse({"--ssl-listen", "7000"}).error ==
          "--ssl-listen: needs --ssl-cert and --ssl-key (only peers with certificates use it)");
    CHECK(parse({"--ssl-cert", "c", "--ssl-key", "k", "--ssl-listen", "6881"}).error ==
          "--ssl-listen: port 6881 is --listen's already");
    CHECK(parse({"--ssl-cert", "c", "--ssl-key", "k", "--ssl-listen", "10.0.0.1:7000"}).error ==
          "--ssl-listen: expected a PORT (it listens on --listen's address), got '10.0.0.1:7000'");
    CHECK(parse({"--ssl-cert", ""}).error == "--ssl-cert: empty file name");
}

TEST_CASE("serve takes the same network and credential options, on the command line and in its config",
          "[client][service][options][network]") {
    auto every = parse_serve_args({"--save-dir", "d", "--listen", "6881", "--upnp", "--natpmp", "--passkey",
                                   kKey, "--ssl-cert", "box.pem", "--ssl-key", "box.key"});
    INFO(every.error);
    REQUIRE(every.options);
    CHECK(every.options->listen == Endpoint{"", 6881});
    CHECK(every.options->upnp);
    CHECK(every.options->natpmp);
    CHECK(every.options->passkey == kKey);
    CHECK(ssl_listen_port_of(*every.options) == std::uint16_t{6882});
    CHECK(parse_serve_args({"--save-dir", "d", "--listen", "70000"}).error ==
          "--listen: '70000' is not PORT or HOST:PORT");
    CHECK(parse_serve_args({"--save-dir", "d", "--ssl-cert", "c"}).error ==
          "--ssl-cert needs --ssl-key (the certificate's private key)");
    CHECK(parse_serve_args({"--save-dir", "d", "--passkey", "x"}).error ==
          "--passkey: a passkey is 16 to 128 characters of A-Z a-z 0-9 _ -");

    auto base = serve_options_from_config(nlohmann::json::parse(
        R"({"save_dir": "/var/lib/toast/client", "listen": "6881", "upnp": true, "natpmp": false,
            "passkey": ")" +
        kKey + R"(", "ssl_cert": "/etc/toast/box.pem", "ssl_key": "/etc/toast/box.key",
            "ssl_listen": 6999})"));
    CHECK(base.listen == Endpoint{"", 6881});
    CHECK(base.upnp);
    CHECK_FALSE(base.natpmp);
    CHECK(base.passkey == kKey);
    CHECK(base.ssl_cert == "/etc/toast/box.pem");
    CHECK(ssl_listen_port_of(base) == std::uint16_t{6999});
    CHECK(serve_options_problem(base).empty());
    base.ssl_key.clear();
    CHECK(serve_options_problem(base) == "--ssl-cert needs --ssl-key (the certificate's private key)");
    CHECK(serve_config_error(R"({"passkey": "short"})") ==
          "config field 'passkey': a passkey is 16 to 128 characters of A-Z a-z 0-9 _ -");
    CHECK(serve_config_error(R"({"upnp": "yes"})").rfind("config field 'upnp'", 0) == 0);
    CHECK(serve_config_error(R"({"ssl_listen": 70000})").rfind("config field 'ssl_listen'", 0) == 0);
    const auto help = serve_help_text();
    for (const char* option : {"--listen [HOST:]PORT", "--upnp", "--natpmp", "--passkey KEY",
                               "--ssl-cert FILE", "--ssl-key FILE", "--ssl-listen PORT", "ssl_listen"}) {
        INFO(option);
        CHECK(help.find(option) != std::string::npos);
    }
}
