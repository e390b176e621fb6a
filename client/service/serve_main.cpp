#include "client/service/serve_main.hpp"

#include <csignal>
#include <cstdio>
#include <exception>

#include <spdlog/spdlog.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>

#include "client/core/service_options.hpp"
#include "client/service/title_service.hpp"
#include "toast/common/config.hpp"
#include "toast/common/log.hpp"

namespace asio = boost::asio;

namespace toast::client {

int serve_main(const std::vector<std::string>& args) {
    auto parsed = parse_serve_args(args);
    if (parsed.help) {
        std::fputs(serve_help_text().c_str(), stdout);
        return 0;
    }
    if (parsed.options && !parsed.config.empty()) {
        // The file's settings are the base; the command line's override them.
        const auto config = parsed.config;
        try {
            auto base = serve_options_from_config(load_json_file(config));
            parsed = parse_serve_args(args, base);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "toast-client serve: %s\n", e.what());
            return 2;
        }
        if (parsed.options && parsed.options->save_dir.empty()) {
            std::fprintf(stderr, "toast-client serve: %s: no save_dir (give it there or with --save-dir)\n",
                         config.c_str());
            return 2;
        }
        if (parsed.options) {
            if (auto problem = serve_options_problem(*parsed.options); !problem.empty()) {
                std::fprintf(stderr, "toast-client serve: %s\n", problem.c_str());
                return 2;
            }
        }
    }
    if (!parsed.options) {
        std::fprintf(stderr, "toast-client serve: %s\n(see toast-client serve --help)\n",
                     parsed.error.c_str());
        return 2;
    }
    try {
        init_logging("toast-client", parsed.options->log_level);
        asio::io_context io;
        TitleService service(io, *parsed.options);
        asio::signal_set signals(io, SIGINT, SIGTERM);
        signals.async_wait([&](const boost::system::error_code& ec, int sig) {
            if (ec) return;
            spdlog::info("signal {}: stopping", sig);
            service.stop();
            // The titles' last events (their summaries, the saved list) run first, then their last QoE
            // reports get a moment to go out.
            asio::post(io, [&io, &service] {
                service.flush_reports(std::chrono::seconds(2), [&io] { io.stop(); });
            });
        });
        service.start();
        std::printf("toast-client: serving at http://%s:%u/ (BitTorrent port %u)\n",
                    parsed.options->api.host.c_str(), static_cast<unsigned>(service.api_port()),
                    static_cast<unsigned>(service.listen_port()));
        std::fflush(stdout);
        io.run();
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "toast-client serve: %s\n", e.what());
        return 1;
    }
}

}  // namespace toast::client
