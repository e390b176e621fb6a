#include <catch2/catch.hpp>

#include "client/core/client_options.hpp"

using namespace toast;
using namespace toast::client;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> base() {
    return {"stream", "movie.torrent", "--save-dir", "/tmp/c1", "--listen", "6881", "--stats", "c1.jsonl"};
}

std::vector<std::string> with(std::vector<std::string> extra) {
    auto args = base();
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
}

std::string error_of(const std::vector<std::string>& args) {
    auto r = parse_client_args(args);
    CHECK_FALSE(r.options);
    CHECK_FALSE(r.help);
    return r.error;
}

}  // namespace

TEST_CASE("the minimal stream command gets every documented default", "[client][options]") {
    auto r = parse_client_args(base());
    REQUIRE(r.options);
    CHECK(r.error.empty());
    const auto& o = *r.options;
    CHECK(o.command == ClientCommand::stream);
    CHECK(o.torrent == "movie.torrent");
    CHECK(o.save_dir == "/tmp/c1");
    CHECK(o.listen_port == 6881);
    CHECK(o.listen_host.empty());
    CHECK_FALSE(o.unchoke_slots);
    CHECK(unchoke_slots_of(o) == 1);
    CHECK(o.max_connections == 40);
    CHECK(o.disk_io == DiskIoKind::posix);
    CHECK(o.stats_file == "c1.jsonl");
    CHECK(o.servers.empty());
    CHECK_FALSE(o.bitrate);
    CHECK(o.picker == PickerKind::adaptive);
    CHECK(o.inorder_window == 15min);
    CHECK(o.lookahead == 60s);
    CHECK_FALSE(o.buffer_limit);
    CHECK(o.behavior == Behavior::stream);
    CHECK_FALSE(o.upload_limit);
    CHECK_FALSE(o.download_limit);
    CHECK(o.choker == ChokerOption::nearest);
    CHECK(o.seed == 1);
    CHECK(o.startup_buffer == 0s);
    CHECK(o.trackers.empty());
    CHECK(o.operator_peers.empty());
    CHECK(o.ask_operator == AskOperator::when_needed);
    CHECK_FALSE(o.enable_dht);
    CHECK(o.log_level == "info");
    CHECK(o.player == PlayerKind::none);
}

TEST_CASE("every option is parsed, in both spellings", "[client][options]") {
    auto r = parse_client_args(with({"--server",
                                     "http://127.0.0.1:8080/",
                                     "--server=http://127.0.0.1:8081/",
                                     "--bitrate",
                                     "2Mbps",
                                     "--picker=beta",
                                     "--inorder-window",
                                     "90s",
                                     "--lookahead=2min",
                                     "--buffer-limit",
                                     "25%",
                                     "--behavior",
                                     "seed",
                                     "--upload-limit",
                                     "1.5Mbps",
                                     "--download-limit=8Mbps",
                                     "--choker",
                                     "seed",
                                     "--unchoke-slots",
                                     "4",
                                     "--max-connections",
                                     "24",
                                     "--disk-io",
                                     "mmap",
                                     "--seed",
                                     "77",
                                     "--startup-buffer",
                                     "2s",
                                     "--tracker",
                                     "http://127.0.0.1:6969/announce",
                                     "--tracker",
                                     "udp://127.0.0.1:6969",
                                     "--operator-peer",
                                     "10.0.0.5:6881",
                                     "--operator-peer=[::1]:7000",
                                     "--ask-operator",
                                     "always",
                                     "--enable-dht",
                                     "--log-level",
                                     "debug"}));
    REQUIRE(r.options);
    const auto& o = *r.options;
    CHECK(o.servers == std::vector<std::string>{"http://127.0.0.1:8080/", "http://127.0.0.1:8081/"});
    CHECK(o.bitrate == BitRate(2'000'000));
    CHECK(o.picker == PickerKind::beta);
    CHECK(o.inorder_window == 90s);
    CHECK(o.lookahead == 2min);
    REQUIRE(o.buffer_limit);
    CHECK(o.buffer_limit->is_percent());
    CHECK(o.buffer_limit->percent() == 25.0);
    CHECK(o.behavior == Behavior::seed);
    CHECK(o.upload_limit == BitRate(1'500'000));
    CHECK(o.download_limit == BitRate(8'000'000));
    CHECK(o.choker == ChokerOption::seed);
    CHECK(o.unchoke_slots == 4);
    CHECK(unchoke_slots_of(o) == 4);
    CHECK(o.max_connections == 24);
    CHECK(o.disk_io == DiskIoKind::mmap);
    CHECK(o.seed == 77);
    CHECK(o.startup_buffer == 2s);
    CHECK(o.trackers.size() == 2);
    CHECK(o.operator_peers == std::vector<Endpoint>{{"10.0.0.5", 6881}, {"::1", 7000}});
    CHECK(o.ask_operator == AskOperator::always);
    CHECK(o.enable_dht);
    CHECK(o.log_level == "debug");
}

TEST_CASE("play takes an HTTP endpoint and a player", "[client][options]") {
    auto args = base();
    args[0] = "play";
    args.insert(args.end(), {"--http", "127.0.0.1:8099", "--player", "mpv", "--buffer-limit", "64MiB"});
    auto r = parse_client_args(args);
    REQUIRE(r.options);
    CHECK(r.options->command == ClientCommand::play);
    CHECK(r.options->http == Endpoint{"127.0.0.1", 8099});
    CHECK(r.options->player == PlayerKind::mpv);
    CHECK(r.options->buffer_limit->bytes() == Bytes(64ull << 20));
    CHECK(error_of(with({"--player", "mpv"})) == "--player: only valid with 'play'");
}

TEST_CASE("player arguments pass through in order, only to a player", "[client][options]") {
    auto args = base();
    args[0] = "play";
    auto with_player = args;
    with_player.insert(with_player.end(),
                       {"--player", "mpv", "--player-arg=--vo=null", "--player-arg", "--ao=null"});
    auto r = parse_client_args(with_player);
    REQUIRE(r.options);
    CHECK(r.options->player_args == std::vector<std::string>{"--vo=null", "--ao=null"});
    auto no_player = args;
    no_player.insert(no_player.end(), {"--player-arg", "--vo=null"});
    CHECK(error_of(no_player) == "--player-arg: needs a --player to pass it to");
    CHECK(error_of(with({"--player-arg", "x"})) == "--player-arg: only valid with 'play'");
    auto empty = with_player;
    empty.push_back("--player-arg=");
    CHECK(error_of(empty) == "--player-arg: empty argument");
}

TEST_CASE("help is recognised anywhere and documents every option with its default", "[client][options]") {
    CHECK(parse_client_args({"--help"}).help);
    CHECK(parse_client_args(with({"-h"})).help);
    CHECK(parse_client_args({"stream", "--bogus", "--help"}).help);
    auto text = client_help_text();
    for (auto opt :
         {"--save-dir",     "--listen",         "--server",        "--bitrate",       "--stats",
          "--picker",       "--inorder-window", "--lookahead",     "--buffer-limit",  "--behavior",
          "--upload-limit", "--download-limit", "--choker",        "--unchoke-slots", "--max-connections",
          "--seed",         "--startup-buffer", "--tracker",       "--enable-dht",    "--log-level",
          "--http",         "--player",         "--operator-peer", "--disk-io",       "--ask-operator"})
        CHECK(text.find(opt) != std::string::npos);
    for (auto def : {"(default: adaptive)", "(default: 15min)", "(default: 60s)", "(default: stream)",
                     "(default: nearest)", "(default: 1 for nearest and leader, else 2)", "(default: 40)",
                     "(default: 1)", "(default: info)", "(default: unlimited)", "(default: posix)"})
        CHECK(text.find(def) != std::string::npos);
}

TEST_CASE("each invalid command line gets an error naming the option and value", "[client][options]") {
    CHECK(error_of({}) == "missing command (expected 'stream' or 'play'; see --help)");
    CHECK(error_of({"watch", "x.torrent"}) == "unknown command 'watch' (expected 'stream' or 'play')");
    CHECK(error_of({"stream", "--save-dir", "d", "--listen", "1", "--stats", "s"}) ==
          "missing TORRENT (the .torrent file to stream)");
    CHECK(error_of({"stream", "a.torrent", "--listen", "1", "--stats", "s"}) ==
          "missing required option --save-dir");
    CHECK(error_of({"stream", "a.torrent", "--save-dir", "d", "--stats", "s"}) ==
          "missing required option --listen");
    CHECK(error_of({"stream", "a.torrent", "--save-dir", "d", "--listen", "1"}) ==
          "missing required option --stats");
    CHECK(error_of(with({"b.torrent"})) == "unexpected argument 'b.torrent' (only one TORRENT is allowed)");
    CHECK(error_of(with({"--frobnicate"})) == "unknown option '--frobnicate' (see --help)");
    CHECK(error_of(with({"--picker"})) == "--picker: missing value");
    CHECK(error_of(with({"--picker", "random"})) ==
          "--picker: unknown picker 'random' (expected rarest|inorder|beta|hybrid|adaptive)");
    CHECK(error_of(with({"--listen", "7"})) == "--listen: given more than once");
    CHECK(error_of({"stream", "a", "--save-dir", "d", "--stats", "s", "--listen", "70000"}) ==
          "--listen: invalid port '70000' (expected 0..65535)");
    CHECK(error_of({"stream", "a", "--save-dir", "d", "--stats", "s", "--listen", "80x"}) ==
          "--listen: invalid port '80x' (expected 0..65535)");
    CHECK(error_of({"stream", "a", "--save-dir", "d", "--stats", "s", "--listen", "10.0.0.2:"}) ==
          "--listen: invalid address '10.0.0.2:' (expected PORT or HOST:PORT)");
    CHECK(error_of({"stream", "a", "--save-dir", "d", "--stats", "s", "--listen", "10.0.0.2:70000"}) ==
          "--listen: invalid address '10.0.0.2:70000' (expected PORT or HOST:PORT)");
    CHECK(error_of(with({"--unchoke-slots", "0"})) ==
          "--unchoke-slots: invalid slot count '0' (expected 1..1000)");
    CHECK(error_of(with({"--unchoke-slots", "many"})) ==
          "--unchoke-slots: invalid slot count 'many' (expected 1..1000)");
    CHECK(error_of(with({"--disk-io", "aio"})) == "--disk-io: unknown disk I/O 'aio' (expected posix|mmap)");
    CHECK(error_of(with({"--max-connections", "1"})) ==
          "--max-connections: invalid connection count '1' (expected 2..10000)");
    CHECK(error_of(with({"--max-connections", "40x"})) ==
          "--max-connections: invalid connection count '40x' (expected 2..10000)");
    CHECK(error_of(with({"--server", "ftp://x"})) ==
          "--server: invalid URL 'ftp://x' (expected http://HOST:PORT/...)");
    CHECK(error_of(with({"--bitrate", "fast"})) == "--bitrate: invalid bitrate 'fast' (e.g. 2Mbps)");
    CHECK(error_of(with({"--bitrate", "0"})) == "--bitrate: '0' is outside [1.00 kbps, 100.00 Gbps]");
    CHECK(error_of(with({"--inorder-window", "0s"})) == "--inorder-window: '0s' is outside [1s, 24h]");
    CHECK(error_of(with({"--inorder-window", "soon"})) ==
          "--inorder-window: invalid duration 'soon' (e.g. 15min, 90s)");
    CHECK(error_of(with({"--buffer-limit", "150%"})) ==
          "--buffer-limit: invalid limit '150%' (expected BYTES like 512MiB or PERCENT like 25%)");
    CHECK(error_of(with({"--behavior", "leech"})) ==
          "--behavior: unknown behavior 'leech' (expected download|stream|seed)");
    CHECK(error_of(with({"--upload-limit", "lots"})) == "--upload-limit: invalid rate 'lots' (e.g. 2Mbps)");
    CHECK(error_of(with({"--download-limit", "-1"})) == "--download-limit: invalid rate '-1' (e.g. 8Mbps)");
    CHECK(error_of(with({"--ask-operator", "never"})) ==
          "--ask-operator: unknown mode 'never' (expected when-needed|always)");
    CHECK(error_of(with({"--choker", "optimistic"})) ==
          "--choker: unknown choker 'optimistic' (expected tit-for-tat|seed|nearest|leader)");
    CHECK(error_of(with({"--seed", "-3"})) == "--seed: invalid seed '-3' (expected a non-negative integer)");
    CHECK(error_of(with({"--startup-buffer", "soon"})) ==
          "--startup-buffer: invalid duration 'soon' (e.g. 2s)");
    CHECK(error_of(with({"--tracker", "magnet:x"})) ==
          "--tracker: invalid tracker URL 'magnet:x' (expected http://, https:// or udp://)");
    CHECK(error_of(with({"--enable-dht=yes"})) == "--enable-dht: takes no value");
    CHECK(error_of(with({"--operator-peer", "seed.example:6881"})) ==
          "--operator-peer: invalid peer address 'seed.example:6881' (expected IP:PORT, e.g. 10.0.0.5:6881)");
    CHECK(error_of(with({"--operator-peer", "10.0.0.5:0"})) ==
          "--operator-peer: invalid peer address '10.0.0.5:0' (expected IP:PORT, e.g. 10.0.0.5:6881)");
    CHECK(error_of(with({"--log-level", "loud"})) ==
          "--log-level: unknown level 'loud' (expected trace|debug|info|warn|error|off)");
    CHECK(error_of(with({"--save-dir="})).find("--save-dir") == 0);
    auto play = base();
    play[0] = "play";
    play.insert(play.end(), {"--http", "nohost"});
    CHECK(error_of(play) == "--http: invalid endpoint 'nohost' (expected HOST:PORT)");
    play.back() = "127.0.0.1:8080";
    play.insert(play.end(), {"--player", "winamp"});
    CHECK(error_of(play) == "--player: unknown player 'winamp' (expected mpv|vlc|ffplay|none)");
}

TEST_CASE("a listen address HOST:PORT binds one address (a client in a network namespace)",
          "[client][options]") {
    auto r = parse_client_args(
        {"stream", "a.torrent", "--save-dir", "d", "--stats", "s", "--listen", "10.213.1.2:6881"});
    REQUIRE(r.options);
    CHECK(r.options->listen_host == "10.213.1.2");
    CHECK(r.options->listen_port == 6881);
    auto v6 =
        parse_client_args({"stream", "a.torrent", "--save-dir", "d", "--stats", "s", "--listen", "[::1]:0"});
    REQUIRE(v6.options);
    CHECK(v6.options->listen_host == "::1");
    CHECK(v6.options->listen_port == 0);
}

TEST_CASE("every rate and duration on the command line is bounded, naming the option", "[client][options]") {
    auto with = [](std::vector<std::string> extra) {
        std::vector<std::string> a{"stream", "a.torrent", "--save-dir", "d", "--listen", "0", "--stats", "s"};
        a.insert(a.end(), extra.begin(), extra.end());
        return parse_client_args(a);
    };
    auto error_of = [&](std::vector<std::string> extra) { return with(std::move(extra)).error; };
    const std::string rates = " is outside [1.00 kbps, 100.00 Gbps]";
    for (std::string opt : {"--bitrate", "--upload-limit", "--download-limit"}) {
        CHECK(error_of({opt, "999bps"}) == opt + ": '999bps'" + rates);
        CHECK(error_of({opt, "101Gbps"}) == opt + ": '101Gbps'" + rates);
        CHECK(error_of({opt, "1000000000000000"}) == opt + ": '1000000000000000'" + rates);
        CHECK(with({opt, "1kbps"}).options);
        CHECK(with({opt, "100Gbps"}).options);
    }
    CHECK(error_of({"--inorder-window", "999ms"}) == "--inorder-window: '999ms' is outside [1s, 24h]");
    CHECK(error_of({"--inorder-window", "25h"}) == "--inorder-window: '25h' is outside [1s, 24h]");
    CHECK(with({"--inorder-window", "1s"}).options->inorder_window == std::chrono::seconds(1));
    CHECK(with({"--inorder-window", "24h"}).options);
    CHECK(error_of({"--lookahead", "999ms"}) == "--lookahead: '999ms' is outside [1s, 24h]");
    CHECK(error_of({"--lookahead", "soon"}) == "--lookahead: invalid duration 'soon' (e.g. 60s, or none)");
    CHECK(with({"--lookahead", "1s"}).options->lookahead == std::chrono::seconds(1));
    CHECK_FALSE(with({"--lookahead", "none"}).options->lookahead);
    CHECK(error_of({"--startup-buffer", "61min"}) == "--startup-buffer: '61min' is outside [0s, 1h]");
    // A duration too large for nanoseconds is refused instead of wrapping to a negative time.
    CHECK(error_of({"--startup-buffer", "9999999999h"}) ==
          "--startup-buffer: invalid duration '9999999999h' (e.g. 2s)");
    CHECK(with({"--startup-buffer", "0s"}).options->startup_buffer == std::chrono::nanoseconds(0));
    CHECK(with({"--startup-buffer", "1h"}).options);
}

TEST_CASE("the unchoke slots follow the choker unless given", "[client][options]") {
    auto slots = [](std::vector<std::string> extra) {
        auto r = parse_client_args(with(std::move(extra)));
        REQUIRE(r.options);
        return unchoke_slots_of(*r.options);
    };
    CHECK(slots({}) == 1);
    CHECK(slots({"--choker", "nearest"}) == 1);
    CHECK(slots({"--choker", "tit-for-tat"}) == 2);
    CHECK(slots({"--choker", "seed"}) == 2);
    CHECK(slots({"--choker", "leader"}) == 1);
    CHECK(slots({"--choker", "leader", "--unchoke-slots", "2"}) == 2);
    CHECK(slots({"--choker", "tit-for-tat", "--unchoke-slots", "5"}) == 5);
    CHECK(slots({"--unchoke-slots", "3"}) == 3);
}
