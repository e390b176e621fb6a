#include "tracker/core/registry_state.hpp"

#include <charconv>
#include <limits>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

namespace toast::tracker {
namespace {

constexpr std::string_view kFormat = "toast-tracker-state";
constexpr std::int64_t kVersion = 1;

using json = nlohmann::json;

// The encoder appends text itself: every value is a number, hex or an address literal, so nothing needs
// escaping, and the save runs on the io thread, where building an nlohmann document of every peer would hold
// it many times longer than appending does. Reading uses nlohmann, which is what hostile bytes need.
void append_int(std::string& out, std::int64_t v) {
    char buf[24];
    out.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

template <class Id>
void append_quoted_hex(std::string& out, const Id& id) {
    out += '"';
    append_hex(out, id.view());
    out += '"';
}

void append_peers(std::string& out, std::string_view key, const std::vector<PeerState>& peers) {
    out += ",\"";
    out += key;
    out += "\":[";
    for (std::size_t i = 0; i < peers.size(); ++i) {
        const auto& p = peers[i];
        out += i ? ",{\"peer_id\":" : "{\"peer_id\":";
        append_quoted_hex(out, p.id);
        out += ",\"ip\":\"";
        p.endpoint.ip.append_to(out);
        out += "\",\"port\":";
        append_int(out, p.endpoint.port);
        out += ",\"age_ms\":";
        append_int(out, p.age.count());
        if (p.partial) out += ",\"partial\":true";
        out += '}';
    }
    out += ']';
}

// A value as it appears in the file, shortened: messages quote hostile input, so they stay one short line.
std::string shown(const json& v) {
    std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
    if (s.size() > 60) s = s.substr(0, 57) + "...";
    return s;
}

// Reads the fields of one JSON object; the first problem is kept (with the field's path) and every later
// read is a no-op, so a decoder reads straight through and checks failed() where it matters.
class Fields {
  public:
    Fields(const json& object, std::string path, std::optional<std::string>& problem)
        : object_(object), path_(std::move(path)), problem_(problem) {}

    std::string where(std::string_view key) const {
        return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
    }
    bool failed() const { return problem_.has_value(); }
    void fail(std::string message) {
        if (!problem_) problem_ = std::move(message);
    }

    const json* find(std::string_view key) {
        if (failed()) return nullptr;
        auto it = object_.find(key);
        if (it == object_.end()) {
            fail(where(key) + " is missing");
            return nullptr;
        }
        return &*it;
    }

    std::int64_t integer(std::string_view key, std::int64_t min, std::int64_t max) {
        const json* v = find(key);
        if (!v) return 0;
        if (!v->is_number_integer()) {
            fail(where(key) + ": expected an integer, got " + shown(*v));
            return 0;
        }
        // Unsigned values beyond int64 are out of range, not wrapped.
        std::int64_t value = 0;
        bool in_range = true;
        if (v->is_number_unsigned()) {
            const auto u = v->get<std::uint64_t>();
            in_range = u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
            value = static_cast<std::int64_t>(u);
        } else {
            value = v->get<std::int64_t>();
        }
        if (!in_range || value < min || value > max) {
            fail(where(key) + ": value " + shown(*v) + " is outside [" + std::to_string(min) + ", " +
                 std::to_string(max) + "]");
            return 0;
        }
        return value;
    }

    template <class Id>
    Id id(std::string_view key) {
        const json* v = find(key);
        if (!v) return {};
        std::optional<std::string> bytes;
        if (v->is_string()) bytes = from_hex(v->get_ref<const std::string&>());
        if (!bytes || bytes->size() != 20) {
            fail(where(key) + ": expected 40 hex digits, got " + shown(*v));
            return {};
        }
        return *Id::from_bytes(*bytes);
    }

    IpAddress ip(std::string_view key) {
        const json* v = find(key);
        if (!v) return {};
        std::optional<IpAddress> ip;
        if (v->is_string()) ip = IpAddress::parse(v->get_ref<const std::string&>());
        if (!ip) {
            fail(where(key) + ": expected an IPv4 or IPv6 address, got " + shown(*v));
            return {};
        }
        return *ip;
    }

    // An optional boolean: absent is `absent`.
    bool flag(std::string_view key, bool absent) {
        if (failed()) return absent;
        auto it = object_.find(key);
        if (it == object_.end()) return absent;
        if (!it->is_boolean()) {
            fail(where(key) + ": expected true or false, got " + shown(*it));
            return absent;
        }
        return it->get<bool>();
    }

    const json::array_t* array(std::string_view key) {
        const json* v = find(key);
        if (!v) return nullptr;
        if (!v->is_array()) {
            fail(where(key) + ": expected an array, got " + shown(*v));
            return nullptr;
        }
        return &v->get_ref<const json::array_t&>();
    }

  private:
    const json& object_;
    std::string path_;
    std::optional<std::string>& problem_;
};

void decode_peers(const json::array_t& list, const std::string& path, std::vector<PeerState>& out,
                  std::optional<std::string>& problem) {
    out.reserve(list.size());
    for (std::size_t i = 0; i < list.size() && !problem; ++i) {
        const std::string where = path + "[" + std::to_string(i) + "]";
        if (!list[i].is_object()) {
            problem = where + ": expected an object, got " + shown(list[i]);
            return;
        }
        Fields f(list[i], where, problem);
        PeerState p;
        p.id = f.id<PeerId>("peer_id");
        p.endpoint.ip = f.ip("ip");
        p.endpoint.port = static_cast<std::uint16_t>(f.integer("port", 1, 65535));
        p.age = std::chrono::milliseconds(f.integer("age_ms", 0, kMaxStateAge.count()));
        p.partial = f.flag("partial", false);
        out.push_back(p);
    }
}

}  // namespace

std::string encode_state(const RegistryState& state, std::int64_t saved_at_unix_ms) {
    std::string out;
    std::size_t peers = 0;
    for (const auto& s : state.swarms)
        peers += s.seeders.size() + s.leechers.size();
    out.reserve(128 + state.swarms.size() * 128 + peers * 112);
    out += "{\"format\":\"";
    out += kFormat;
    out += "\",\"version\":";
    append_int(out, kVersion);
    out += ",\"saved_at_unix_ms\":";
    append_int(out, saved_at_unix_ms);
    out += ",\"swarms\":[";
    for (std::size_t i = 0; i < state.swarms.size(); ++i) {
        const auto& s = state.swarms[i];
        out += i ? ",{\"info_hash\":" : "{\"info_hash\":";
        append_quoted_hex(out, s.info_hash);
        out += ",\"completed\":";
        out += std::to_string(s.completed);
        out += ",\"idle_ms\":";
        append_int(out, s.idle.count());
        append_peers(out, "seeders", s.seeders);
        append_peers(out, "leechers", s.leechers);
        out += '}';
    }
    out += "]}\n";
    return out;
}

Result<DecodedState, std::string> decode_state(std::string_view text) {
    if (text.empty()) return std::string("the file is empty");
    json root;
    try {
        root = json::parse(text.begin(), text.end());
    } catch (const json::parse_error& e) {
        // what() is "[json.exception.parse_error.101] parse error at line 1, column 9: ..."; the prefix
        // says nothing to an operator.
        std::string what = e.what();
        if (auto at = what.find("] "); what.rfind("[json.exception.", 0) == 0 && at != std::string::npos)
            what = what.substr(at + 2);
        if (e.byte >= text.size()) return "not valid JSON: it ends early (truncated?): " + what;
        return "not valid JSON: " + what;
    } catch (const std::exception& e) {
        return std::string("cannot parse: ") + e.what();  // e.g. out of memory on a huge file
    }
    const auto format = root.is_object() ? root.find("format") : root.end();
    if (format == root.end() || !format->is_string() || format->get_ref<const std::string&>() != kFormat) {
        return std::string("not a toast-tracker state file (no \"format\": \"toast-tracker-state\")");
    }

    std::optional<std::string> problem;
    Fields top(root, "", problem);
    const auto version = top.integer("version", 0, std::numeric_limits<std::int64_t>::max());
    if (problem) return *problem;
    if (version != kVersion) {
        return "version " + std::to_string(version) + " is not supported (this tracker reads version " +
               std::to_string(kVersion) + ")";
    }
    DecodedState out;
    out.saved_at_unix_ms = top.integer("saved_at_unix_ms", 0, std::numeric_limits<std::int64_t>::max());
    const json::array_t* swarms = top.array("swarms");
    if (problem) return *problem;

    std::set<InfoHash> seen;
    out.state.swarms.reserve(swarms->size());
    for (std::size_t i = 0; i < swarms->size(); ++i) {
        const std::string where = "swarms[" + std::to_string(i) + "]";
        const json& item = (*swarms)[i];
        if (!item.is_object()) return where + ": expected an object, got " + shown(item);
        Fields f(item, where, problem);
        SwarmState s;
        s.info_hash = f.id<InfoHash>("info_hash");
        if (!problem && !seen.insert(s.info_hash).second) {
            return f.where("info_hash") + ": " + to_hex(s.info_hash.view()) + " appears twice";
        }
        s.completed =
            static_cast<std::uint64_t>(f.integer("completed", 0, std::numeric_limits<std::int64_t>::max()));
        s.idle = std::chrono::milliseconds(f.integer("idle_ms", 0, kMaxStateAge.count()));
        const json::array_t* seeders = f.array("seeders");
        const json::array_t* leechers = f.array("leechers");
        if (problem) return *problem;
        decode_peers(*seeders, f.where("seeders"), s.seeders, problem);
        decode_peers(*leechers, f.where("leechers"), s.leechers, problem);
        if (problem) return *problem;
        for (std::size_t k = 0; k < s.seeders.size(); ++k) {
            if (s.seeders[k].partial) {
                return f.where("seeders") + "[" + std::to_string(k) +
                       "].partial: a partial seed is listed among the leechers";
            }
        }
        out.state.swarms.push_back(std::move(s));
    }
    return out;
}

}  // namespace toast::tracker
