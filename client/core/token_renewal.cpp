#include "client/core/token_renewal.hpp"

#include <algorithm>

namespace toast::client {

std::optional<std::chrono::seconds> next_renewal(const RenewalTimes& t, std::int64_t now, int failures) {
    if (now >= t.expires) return std::nullopt;
    const auto lifetime = std::max<std::int64_t>(t.expires - t.issued, 1);
    const auto due = t.issued + lifetime * 2 / 3;
    std::int64_t wait = std::max<std::int64_t>(due - now, 0);
    if (failures > 0) {
        const std::int64_t backoff = std::min<std::int64_t>(60, std::int64_t{5} << std::min(failures - 1, 4));
        wait = std::max(wait, backoff);
        // The last try before it runs out: never wait past the expiry itself.
        wait = std::min(wait, std::max<std::int64_t>(t.expires - now - 1, 0));
    }
    return std::chrono::seconds(wait);
}

}  // namespace toast::client
