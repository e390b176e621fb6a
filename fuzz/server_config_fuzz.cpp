// toast-server's JSON config: nlohmann's parser -> load_server_config. A bad config must be a ConfigError (or
// a JSON parse error) naming the field; checks: an accepted config keeps every bounded value in bounds.
#include <chrono>

#include "fuzz_support.hpp"
#include "server/core/server_config.hpp"
#include "toast/common/config.hpp"

using namespace toast;
using namespace toast::server;
using namespace std::chrono_literals;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto json = nlohmann::json::parse(fuzz::as_text(data, size), nullptr, false);
    if (json.is_discarded()) return 0;
    try {
        auto c = load_server_config(json);
        TOAST_FUZZ_CHECK(!c.disks.empty());
        TOAST_FUZZ_CHECK(c.idle_timeout >= 100ms && c.idle_timeout <= 1h);
        TOAST_FUZZ_CHECK(c.time_slice > 0ns && c.service_model_half_life > 0ns);
        TOAST_FUZZ_CHECK(c.default_bitrate >= kMinBitrate && c.default_bitrate <= kMaxBitrate);
        for (const auto& d : c.disks) {
            TOAST_FUZZ_CHECK(d.fault.added_latency >= 0ns && d.fault.added_latency <= 10min);
            TOAST_FUZZ_CHECK(!d.emulation || d.emulation->transfer_rate.value() > 0);
        }
    } catch (const ConfigError& e) {
        TOAST_FUZZ_CHECK(std::string_view(e.what()).rfind("config", 0) == 0);
    }
    return 0;
}
