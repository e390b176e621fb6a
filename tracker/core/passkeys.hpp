// Passkeys: the per-box keys a private tracker admits announces and scrapes with, and where a request
// carries one. Pure: the store is parsed from text, the target from a request path and query.
//
// The passkey file, one key per line ("KEY" or "KEY LABEL..."): a key is 16 to 128 characters of
// [A-Za-z0-9_-] (URL-safe, so it needs no escaping in a tracker URL); the label names the box or subscriber
// for the operator's logs and may hold spaces. Blank lines and lines starting with '#' are ignored; a key
// listed twice is an error (two boxes sharing a key could not be revoked one at a time).
//
// Where a request carries its key (what libtorrent, aria2 and other stock clients send unchanged when the
// key is written into the tracker URL they were given):
//   /announce/KEY            /scrape/KEY             path form, as most private trackers
//   /announce?passkey=KEY    /scrape?passkey=KEY     query form
// libtorrent derives the scrape URL by replacing the first "announce" in the URL with "scrape"
// (http_tracker_connection.cpp:84-90), so both forms scrape with the same key. Over UDP libtorrent sends
// the URL's path and query in BEP 41's URLData option (udp_tracker_connection.cpp:734-749), which the
// tracker reads with the same function. A request with a key in both places, or two passkey parameters,
// is malformed rather than a guess.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tracker/core/result.hpp"
#include "tracker/core/siphash.hpp"

namespace toast::tracker {

inline constexpr std::size_t kMinPasskeyLength = 16;
inline constexpr std::size_t kMaxPasskeyLength = 128;

// 16..128 characters of [A-Za-z0-9_-].
bool valid_passkey(std::string_view key);

class PasskeyStore {
  public:
    // `hash_key` keys the table: the lookups' keys are chosen by whoever sends an announce.
    explicit PasskeyStore(SipKey hash_key = {});

    // False (and nothing changes) when the key is already held.
    bool add(std::string key, std::string label);
    bool contains(std::string_view key) const { return keys_.find(std::string(key)) != keys_.end(); }
    // The key's label ("" without one); nullopt for a key not held.
    std::optional<std::string_view> label(std::string_view key) const;
    std::size_t size() const { return keys_.size(); }
    // Every key held here and not in `next`, in no particular order: what replacing this store by `next`
    // revokes.
    std::vector<std::string> missing_from(const PasskeyStore& next) const;

  private:
    struct Hasher {
        SipKey key;
        std::size_t operator()(const std::string& s) const;
    };
    std::unordered_map<std::string, std::string, Hasher> keys_;
};

// The first bad line: its number (1-based) and what is wrong with it; never the key itself, which would
// land in the logs.
struct PasskeyFileError {
    std::size_t line = 0;
    std::string message;
};

Result<PasskeyStore, PasskeyFileError> parse_passkey_file(std::string_view text, SipKey hash_key = {});

enum class PasskeyRefusal {
    missing,  // passkeys are required and the request carries none
    unknown,  // not in the store, and never was since the tracker started
    revoked,  // was in the store and a reload took it out
};
std::string_view failure_reason(PasskeyRefusal r);
std::string_view to_string(PasskeyRefusal r);

// PasskeyGate: which requests the tracker admits by passkey. Off (no store) it admits every request; on,
// only those carrying a key of the store. It remembers the keys reloads took out, by fingerprint only, so
// that a revoked key is told apart from a mistyped one in the answer and the metrics, and so that the
// caller can drop every peer announced with it.
//
// An admitted request's owner is the fingerprint of its key, SipHash(secret, key) with the low bit set
// (never 0): the caller records it with the peer (AnnounceOptions::owner).
class PasskeyGate {
  public:
    explicit PasskeyGate(SipKey secret) : secret_(secret) {}

    bool enabled() const { return store_.has_value(); }
    std::size_t size() const { return store_ ? store_->size() : 0; }

    struct Change {
        std::size_t added = 0;                      // keys in the new store and not in the old one
        std::size_t revoked = 0;                    // keys in the old store and not in the new one
        std::vector<std::uint64_t> revoked_owners;  // their fingerprints
    };
    // Puts `next` in force (nullopt: passkeys off, every key revoked, so that turning passkeys back on
    // does not readmit them).
    Change replace(std::optional<PasskeyStore> next);

    // The owner to record for an admitted request (0 when the gate is off), or why it is refused.
    Result<std::uint64_t, PasskeyRefusal> admit(const std::optional<std::string>& passkey) const;
    bool revoked(std::uint64_t owner) const { return revoked_.count(owner) != 0; }
    std::uint64_t fingerprint(std::string_view key) const { return siphash24(secret_, key) | 1; }

  private:
    SipKey secret_;
    std::optional<PasskeyStore> store_;
    std::unordered_set<std::uint64_t> revoked_;
};

enum class TrackerPath { announce, scrape };

struct TrackerTarget {
    TrackerPath path = TrackerPath::announce;
    std::optional<std::string> passkey;  // as given: syntax is checked, membership is the caller's
};

enum class TargetError {
    not_a_tracker_path,  // neither /announce[/KEY] nor /scrape[/KEY]
    bad_passkey,         // a key that is not 16..128 characters of [A-Za-z0-9_-], or a bad %-escape
    two_passkeys,        // in the path and the query, or twice in the query
};
std::string_view failure_reason(TargetError e);
std::string_view to_string(TargetError e);

// `path` is the request target up to '?', `query` what follows it (either may be empty).
Result<TrackerTarget, TargetError> parse_tracker_target(std::string_view path, std::string_view query);
// The same for a whole target (BEP 41 URLData: "/announce/KEY" or "/announce?passkey=KEY").
Result<TrackerTarget, TargetError> parse_tracker_target(std::string_view target);

// `target` with any passkey in it replaced by "*" ("/announce/*", "passkey=*"): what the access log
// writes, so that the keys do not end up in log files and their backups.
std::string redact_passkey(std::string_view target);

// BEP 41 options after a UDP announce's 98 bytes: the concatenated URLData (option 2) up to EndOfOptions
// (0) or the end of the packet; NOP (1) is skipped, any other option skipped by its length byte. A
// truncated option ends the list: what came before it stands.
std::string udp_url_data(std::string_view options);

}  // namespace toast::tracker
