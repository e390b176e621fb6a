#include "server/app/access_commands.hpp"

#include <cstdio>
#include <optional>

#include "server/core/access_check.hpp"
#include "toast/common/access_token.hpp"
#include "toast/common/units.hpp"

namespace toast::server {

namespace {

using namespace std::chrono_literals;

// A token lives at most a year: longer, and a leaked one outlives any key rotation schedule.
constexpr auto kMaxLifetime = std::chrono::hours(24 * 366);

int usage(const std::string& message) {
    std::fprintf(stderr, "toast-server sign: %s (see toast-server --help)\n", message.c_str());
    return 2;
}

}  // namespace

int run_sign(const ServerConfig& config, const std::vector<std::string>& args, std::int64_t unix_now) {
    std::optional<std::string> subscriber;
    std::optional<AccessScope> scope;
    std::chrono::nanoseconds lifetime = 24h;
    std::optional<std::string> key_id;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const auto& a = args[i];
        if (a != "--subscriber" && a != "--scope" && a != "--lifetime" && a != "--key-id")
            return usage("unknown argument '" + a + "'");
        if (i + 1 >= args.size()) return usage(a + " needs a value");
        const auto& v = args[++i];
        if (a == "--subscriber") {
            if (!valid_subscriber(v))
                return usage("--subscriber '" + v + "': expected 1-64 characters of [A-Za-z0-9._-]");
            subscriber = v;
        } else if (a == "--scope") {
            scope = parse_access_scope(v);
            if (!scope) return usage("--scope '" + v + "': expected catalog or title:NAME (a title name)");
        } else if (a == "--lifetime") {
            auto d = parse_duration(v);
            if (!d || *d < 1s || *d > kMaxLifetime)
                return usage("--lifetime '" + v + "': expected a duration from 1s to 366d, e.g. 12h");
            lifetime = *d;
        } else {
            key_id = v;
        }
    }
    if (!subscriber) return usage("--subscriber is required");
    if (!scope) return usage("--scope is required");
    if (config.access.keys.empty()) {
        std::fprintf(stderr,
                     "toast-server sign: the config has no access keys (\"access\": {\"keys\": [...]})\n");
        return 1;
    }
    const auto id = key_id.value_or(config.access.signing_key);
    const auto* key = config.access.key(id);
    if (!key) return usage("--key-id '" + id + "': no such key in the config's access.keys");
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(lifetime).count();
    std::printf("%s\n", sign_token(*key, *subscriber, *scope, unix_now, unix_now + seconds).c_str());
    return 0;
}

std::string access_summary(const AccessPolicy& access) {
    if (access.open()) {
        return "access: OPEN, no keys in the config: every content route (/catalog, /titles, /stream, "
               "/torrents) answers everyone";
    }
    std::string ids;
    for (const auto& k : access.keys)
        ids += (ids.empty() ? "" : ", ") + k.id;
    auto line = "access: signed URLs, key" + std::string(access.keys.size() == 1 ? " " : "s ") + ids +
                " (renewals signed with " + access.signing_key + ")";
    if (!access.revoked_subscribers.empty())
        line += ", " + std::to_string(access.revoked_subscribers.size()) + " revoked subscriber" +
                (access.revoked_subscribers.size() == 1 ? "" : "s");
    return line;
}

std::string tier_authorization(const AccessPolicy& access, std::string_view node_id, std::string_view title,
                               std::int64_t unix_now) {
    const auto* key = access.key(access.signing_key);
    if (!key) return {};
    // Long enough for a read and its retries, short enough that a token seen in a log is soon worthless.
    constexpr std::int64_t kLifetime = 300;
    return "Bearer " + sign_token(*key, "tier." + std::string(node_id),
                                  AccessScope::for_title(std::string(title)), unix_now, unix_now + kLifetime);
}

}  // namespace toast::server
