#include "tracker/core/passkeys.hpp"

#include <algorithm>
#include <utility>

#include "tracker/core/announce_request.hpp"

namespace toast::tracker {

bool valid_passkey(std::string_view key) {
    if (key.size() < kMinPasskeyLength || key.size() > kMaxPasskeyLength) return false;
    for (char c : key) {
        const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                        c == '_' || c == '-';
        if (!ok) return false;
    }
    return true;
}

PasskeyStore::PasskeyStore(SipKey hash_key) : keys_(16, Hasher{hash_key}) {}

std::size_t PasskeyStore::Hasher::operator()(const std::string& s) const {
    return static_cast<std::size_t>(siphash24(key, s));
}

bool PasskeyStore::add(std::string key, std::string label) {
    return keys_.emplace(std::move(key), std::move(label)).second;
}

std::optional<std::string_view> PasskeyStore::label(std::string_view key) const {
    auto it = keys_.find(std::string(key));
    if (it == keys_.end()) return std::nullopt;
    return std::string_view(it->second);
}

std::vector<std::string> PasskeyStore::missing_from(const PasskeyStore& next) const {
    std::vector<std::string> out;
    for (const auto& [key, label] : keys_)
        if (!next.contains(key)) out.push_back(key);
    return out;
}

namespace {

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\r';
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_space(s.front()))
        s.remove_prefix(1);
    while (!s.empty() && is_space(s.back()))
        s.remove_suffix(1);
    return s;
}

}  // namespace

Result<PasskeyStore, PasskeyFileError> parse_passkey_file(std::string_view text, SipKey hash_key) {
    PasskeyStore store(hash_key);
    std::size_t line_no = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t nl = text.find('\n', pos);
        if (nl == std::string_view::npos) nl = text.size();
        const std::string_view line = trim(text.substr(pos, nl - pos));
        pos = nl + 1;
        ++line_no;
        if (line.empty() || line.front() == '#') continue;
        std::size_t end = 0;
        while (end < line.size() && !is_space(line[end]))
            ++end;
        const std::string_view key = line.substr(0, end);
        if (!valid_passkey(key)) {
            // Length and shape only: the line may hold a real key, which must not reach a log.
            return PasskeyFileError{line_no,
                                    "a passkey is 16 to 128 characters of A-Z a-z 0-9 _ -, got " +
                                        std::to_string(key.size()) + " characters" +
                                        (key.size() >= kMinPasskeyLength && key.size() <= kMaxPasskeyLength
                                             ? " with others among them"
                                             : "")};
        }
        if (!store.add(std::string(key), std::string(trim(line.substr(end)))))
            return PasskeyFileError{line_no, "this passkey is already listed on an earlier line"};
    }
    return store;
}

std::string_view failure_reason(PasskeyRefusal r) {
    switch (r) {
        case PasskeyRefusal::missing:
            return "this tracker needs a passkey: announce to /announce/PASSKEY";
        case PasskeyRefusal::unknown:
            return "unknown passkey";
        case PasskeyRefusal::revoked:
            return "passkey revoked";
    }
    return "refused";
}

std::string_view to_string(PasskeyRefusal r) {
    switch (r) {
        case PasskeyRefusal::missing:
            return "no_passkey";
        case PasskeyRefusal::unknown:
            return "unknown_passkey";
        case PasskeyRefusal::revoked:
            return "revoked_passkey";
    }
    return "unknown";
}

PasskeyGate::Change PasskeyGate::replace(std::optional<PasskeyStore> next) {
    Change c;
    if (store_) {
        const auto gone = next ? store_->missing_from(*next) : store_->missing_from(PasskeyStore{});
        for (const auto& key : gone) {
            const auto owner = fingerprint(key);
            revoked_.insert(owner);
            c.revoked_owners.push_back(owner);
        }
        c.revoked = gone.size();
    }
    if (next) {
        // Keys issued again are no longer revoked; keys new to this gate are counted as added.
        for (const auto& key : next->missing_from(store_ ? *store_ : PasskeyStore{})) {
            revoked_.erase(fingerprint(key));
            ++c.added;
        }
    }
    store_ = std::move(next);
    return c;
}

Result<std::uint64_t, PasskeyRefusal> PasskeyGate::admit(const std::optional<std::string>& passkey) const {
    if (!store_) return std::uint64_t{0};
    if (!passkey) return PasskeyRefusal::missing;
    if (store_->contains(*passkey)) return fingerprint(*passkey);
    return revoked(fingerprint(*passkey)) ? PasskeyRefusal::revoked : PasskeyRefusal::unknown;
}

std::string_view failure_reason(TargetError e) {
    switch (e) {
        case TargetError::not_a_tracker_path:
            return "no such path; try /announce, /scrape, /stats or /metrics";
        case TargetError::bad_passkey:
            return "malformed passkey (16 to 128 characters of A-Z a-z 0-9 _ -)";
        case TargetError::two_passkeys:
            return "the passkey is given more than once";
    }
    return "malformed request";
}

std::string_view to_string(TargetError e) {
    switch (e) {
        case TargetError::not_a_tracker_path:
            return "not_a_tracker_path";
        case TargetError::bad_passkey:
            return "bad_passkey";
        case TargetError::two_passkeys:
            return "two_passkeys";
    }
    return "unknown";
}

namespace {

// The endpoint `path` names and what follows its name ("" or "/..."); nullopt for any other path.
std::optional<std::pair<TrackerPath, std::string_view>> split_tracker_path(std::string_view path) {
    constexpr std::pair<std::string_view, TrackerPath> kPaths[] = {{"/announce", TrackerPath::announce},
                                                                   {"/scrape", TrackerPath::scrape}};
    for (const auto& [name, kind] : kPaths) {
        if (path.substr(0, name.size()) != name) continue;
        const std::string_view rest = path.substr(name.size());
        if (rest.empty() || rest.front() == '/') return std::pair{kind, rest};  // not "/announcement"
    }
    return std::nullopt;
}

}  // namespace

Result<TrackerTarget, TargetError> parse_tracker_target(std::string_view path, std::string_view query) {
    const auto split = split_tracker_path(path);
    if (!split) return TargetError::not_a_tracker_path;
    TrackerTarget t;
    t.path = split->first;
    // "/announce/" with nothing after it carries no key; anything else after the '/' must be one key.
    if (const std::string_view key = split->second.substr(std::min<std::size_t>(1, split->second.size()));
        !key.empty()) {
        if (!valid_passkey(key)) return TargetError::bad_passkey;
        t.passkey = std::string(key);
    }
    while (!query.empty()) {
        const auto amp = query.find('&');
        const std::string_view pair = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
        const auto eq = pair.find('=');
        if (pair.substr(0, eq) != "passkey") continue;
        if (t.passkey) return TargetError::two_passkeys;
        auto value = percent_decode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1));
        if (!value || !valid_passkey(*value)) return TargetError::bad_passkey;
        t.passkey = std::move(*value);
    }
    return t;
}

Result<TrackerTarget, TargetError> parse_tracker_target(std::string_view target) {
    const auto q = target.find('?');
    return parse_tracker_target(target.substr(0, q),
                                q == std::string_view::npos ? std::string_view() : target.substr(q + 1));
}

std::string redact_passkey(std::string_view target) {
    const auto q = target.find('?');
    std::string_view path = target.substr(0, q);
    std::string out;
    if (split_tracker_path(path)) {
        const auto slash = path.find('/', 1);
        if (slash != std::string_view::npos && slash + 1 < path.size()) {
            out.append(path.substr(0, slash + 1)).push_back('*');
        } else {
            out.append(path);
        }
    } else {
        out.append(path);
    }
    if (q == std::string_view::npos) return out;
    std::string_view query = target.substr(q + 1);
    out.push_back('?');
    bool first = true;
    while (true) {
        const auto amp = query.find('&');
        const std::string_view pair = query.substr(0, amp);
        if (!first) out.push_back('&');
        first = false;
        if (pair.substr(0, pair.find('=')) == "passkey" && pair.find('=') != std::string_view::npos)
            out.append("passkey=*");
        else
            out.append(pair);
        if (amp == std::string_view::npos) break;
        query = query.substr(amp + 1);
    }
    return out;
}

std::string udp_url_data(std::string_view options) {
    std::string out;
    std::size_t i = 0;
    while (i < options.size()) {
        const auto type = static_cast<unsigned char>(options[i]);
        if (type == 0) break;  // EndOfOptions
        if (type == 1) {       // NOP
            ++i;
            continue;
        }
        if (i + 1 >= options.size()) break;
        const std::size_t len = static_cast<unsigned char>(options[i + 1]);
        if (i + 2 + len > options.size()) break;
        if (type == 2) out.append(options.substr(i + 2, len));
        i += 2 + len;
    }
    return out;
}

}  // namespace toast::tracker
