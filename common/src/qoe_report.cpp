#include "toast/common/qoe_report.hpp"

#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

namespace toast {

namespace {

using json = nlohmann::json;

// Deepest nesting of objects and arrays, strings skipped; stops counting past `limit`. Run before the JSON
// parser, whose recursion would otherwise follow a body of brackets as deep as it is long.
std::size_t nesting_depth(std::string_view body, std::size_t limit) {
    std::size_t depth = 0;
    std::size_t deepest = 0;
    bool in_string = false;
    bool escaped = false;
    for (char c : body) {
        if (in_string) {
            if (escaped) {
                escaped = false;
            } else if (c == '\\') {
                escaped = true;
            } else if (c == '"') {
                in_string = false;
            }
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            deepest = std::max(deepest, ++depth);
            if (deepest > limit) return deepest;
        } else if ((c == '}' || c == ']') && depth > 0) {
            --depth;
        }
    }
    return deepest;
}

bool session_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

bool title_char(char c) {
    return session_char(c) || c == '.';
}

class Reader {
  public:
    explicit Reader(const json& object) : object_(object) {}

    const json* field(const char* key, bool required = true) {
        seen_.insert(key);
        auto it = object_.find(key);
        if (it == object_.end()) {
            if (required) fail(key, "missing");
            return nullptr;
        }
        return &*it;
    }

    std::uint64_t count(const char* key, std::uint64_t max) {
        const auto* v = field(key);
        if (!v) return 0;
        if (!v->is_number_unsigned() || v->get<std::uint64_t>() > max) {
            fail(key, "expected a whole number from 0 to " + std::to_string(max));
            return 0;
        }
        return v->get<std::uint64_t>();
    }

    double seconds_value(const char* key, const json& v) {
        if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 ||
            v.get<double>() > kMaxReportSeconds) {
            fail(key, "expected seconds from 0 to " +
                          std::to_string(static_cast<std::uint64_t>(kMaxReportSeconds)));
            return 0;
        }
        return v.get<double>();
    }

    double seconds(const char* key) {
        const auto* v = field(key);
        return v ? seconds_value(key, *v) : 0;
    }

    std::string text(const char* key, std::size_t min, std::size_t max, bool (*allowed)(char)) {
        const auto* v = field(key);
        if (!v) return {};
        if (!v->is_string()) {
            fail(key, "expected a string");
            return {};
        }
        const auto& s = v->get_ref<const std::string&>();
        bool ok = s.size() >= min && s.size() <= max;
        for (char c : s)
            ok = ok && allowed(c);
        if (!ok)
            fail(key,
                 "expected " + std::to_string(min) + "-" + std::to_string(max) + " characters of its set");
        return ok ? s : std::string();
    }

    void check_unknown() {
        for (auto it = object_.begin(); it != object_.end(); ++it) {
            if (!seen_.count(it.key())) {
                fail(it.key(), "unknown field");
                return;
            }
        }
    }

    void fail(const std::string& key, const std::string& what) {
        if (error_.empty()) error_ = "field '" + key + "': " + what;
    }
    const std::string& error() const { return error_; }

  private:
    const json& object_;
    std::set<std::string, std::less<>> seen_;
    std::string error_;
};

QoeParse parse(std::string_view body, std::size_t max_body) {
    QoeParse out;
    if (body.size() > max_body) {
        out.error = "report larger than " + std::to_string(max_body) + " bytes";
        return out;
    }
    if (nesting_depth(body, 2) > 2) {
        out.error = "report nested deeper than 2";
        return out;
    }
    const auto j = json::parse(body.begin(), body.end(), nullptr, false);
    if (j.is_discarded()) {
        out.error = "report is not JSON";
        return out;
    }
    if (!j.is_object()) {
        out.error = "report is not a JSON object";
        return out;
    }
    Reader r(j);
    QoeReport q;
    if (const auto* v = r.field("v"); v && !(v->is_number_unsigned() && v->get<std::uint64_t>() == 1))
        r.fail("v", "unsupported version (expected 1)");
    q.session = r.text("session", 8, 64, session_char);
    q.sequence = r.count("seq", kMaxReportSequence);
    q.title = r.text("title", 1, 128, title_char);
    if (const auto* v = r.field("final"); v && !v->is_boolean()) {
        r.fail("final", "expected true or false");
    } else if (v) {
        q.final = v->get<bool>();
    }
    if (const auto* v = r.field("startup_s", false); v && !v->is_null())
        q.startup_seconds = r.seconds_value("startup_s", *v);
    q.stall_count = r.count("stall_count", kMaxReportCount);
    q.stall_seconds = r.seconds("stall_s");
    if (const auto* v = r.field("stall_durations_s")) {
        if (!v->is_array() || v->size() > kMaxStallDurations) {
            r.fail("stall_durations_s",
                   "expected an array of at most " + std::to_string(kMaxStallDurations) + " durations");
        } else {
            double sum = 0;
            for (const auto& d : *v) {
                q.stall_durations.push_back(r.seconds_value("stall_durations_s", d));
                sum += q.stall_durations.back();
            }
            if (q.stall_durations.size() > q.stall_count)
                r.fail("stall_durations_s", "more durations than stall_count");
            // Durations are a subset of the stalls counted: they cannot add up to more (a millisecond's slack
            // for rounding).
            if (sum > q.stall_seconds + 0.001) r.fail("stall_durations_s", "add up to more than stall_s");
        }
    }
    q.seeks = r.count("seeks", kMaxReportCount);
    q.played_seconds = r.seconds("played_s");
    q.bytes_from_peers = r.count("bytes_peers", kMaxReportBytes);
    q.bytes_from_server = r.count("bytes_server", kMaxReportBytes);
    q.bytes_uploaded = r.count("bytes_uploaded", kMaxReportBytes);
    r.check_unknown();
    if (!r.error().empty()) {
        out.error = r.error();
        return out;
    }
    out.report = std::move(q);
    return out;
}

}  // namespace

QoeParse parse_qoe_report(std::string_view body, std::size_t max_body) {
    // The checks above keep nlohmann from throwing; this keeps a report from ever ending a server thread if
    // one was missed.
    try {
        return parse(body, max_body);
    } catch (const std::exception&) {
        return QoeParse{std::nullopt, "report could not be read"};
    }
}

std::string format_qoe_report(const QoeReport& q) {
    nlohmann::ordered_json j;
    j["v"] = 1;
    j["session"] = q.session;
    j["seq"] = q.sequence;
    j["title"] = q.title;
    j["final"] = q.final;
    if (q.startup_seconds) j["startup_s"] = *q.startup_seconds;
    j["stall_count"] = q.stall_count;
    j["stall_s"] = q.stall_seconds;
    j["stall_durations_s"] = q.stall_durations;
    j["seeks"] = q.seeks;
    j["played_s"] = q.played_seconds;
    j["bytes_peers"] = q.bytes_from_peers;
    j["bytes_server"] = q.bytes_from_server;
    j["bytes_uploaded"] = q.bytes_uploaded;
    return j.dump();
}

}  // namespace toast
