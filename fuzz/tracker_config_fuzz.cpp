// toast-tracker's JSON config: nlohmann's parser -> load_tracker_config. A bad config must be a ConfigError
// naming the field; checks: an accepted config keeps the relations the tracker relies on.
#include <chrono>

#include "fuzz_support.hpp"
#include "toast/common/config.hpp"
#include "tracker/core/tracker_config.hpp"

using namespace toast;
using namespace toast::tracker;
using namespace std::chrono_literals;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto json = nlohmann::json::parse(fuzz::as_text(data, size), nullptr, false);
    if (json.is_discarded()) return 0;
    try {
        auto c = load_tracker_config(json);
        TOAST_FUZZ_CHECK(c.registry.interval >= 1s && c.registry.min_interval <= c.registry.interval);
        TOAST_FUZZ_CHECK(c.registry.peer_expiry > c.registry.interval);
        TOAST_FUZZ_CHECK(c.registry.numwant_default <= c.registry.numwant_max);
        TOAST_FUZZ_CHECK(c.http.idle_timeout >= 100ms && c.http.idle_timeout <= 1h);
        TOAST_FUZZ_CHECK(c.http.max_target_length < c.http.header_limit);
    } catch (const ConfigError& e) {
        TOAST_FUZZ_CHECK(std::string_view(e.what()).rfind("config", 0) == 0);
    }
    return 0;
}
