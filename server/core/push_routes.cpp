#include "server/core/push_routes.hpp"

#include <charconv>
#include <cstdio>

#include "server/core/catalog.hpp"
#include "server/core/request_handler.hpp"
#include "toast/common/text.hpp"

namespace toast::server {

namespace {

std::string hex16(std::uint64_t v) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

std::optional<std::uint64_t> parse_uint(std::string_view text) {
    std::uint64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
    return v;
}

// key=value pairs of a query string, percent-decoded; nullopt when one is malformed.
std::optional<std::map<std::string, std::string>> parse_query(std::string_view query, std::string* error) {
    std::map<std::string, std::string> out;
    while (!query.empty()) {
        auto amp = query.find('&');
        auto item = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
        if (item.empty()) continue;
        auto eq = item.find('=');
        auto key = percent_decode(item.substr(0, eq));
        auto value = percent_decode(eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1));
        if (!key || !value) {
            *error = "malformed percent-encoding in the query";
            return std::nullopt;
        }
        if (out.count(*key)) {
            *error = "parameter '" + *key + "' given twice";
            return std::nullopt;
        }
        out[*key] = *value;
    }
    return out;
}

std::string_view query_of(std::string_view target) {
    auto q = target.find('?');
    if (q == std::string_view::npos) return {};
    auto rest = target.substr(q + 1);
    return rest.substr(0, rest.find('#'));
}

bool is_hex40(std::string_view s) {
    return s.size() == 40 && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

HttpResponse json_response(std::string body) {
    HttpResponse r;
    r.status = 200;
    r.headers.push_back({"Content-Type", "application/json"});
    r.headers.push_back({"Cache-Control", "no-store"});
    r.body = std::move(body);
    return r;
}

nlohmann::json ranges_json(const std::vector<PieceSpan>& spans) {
    auto a = nlohmann::json::array();
    for (const auto& s : spans)
        a.push_back({s.first, s.last});
    return a;
}

}  // namespace

std::optional<BoxRegistration> parse_registration(std::string_view query, std::string* error) {
    auto params = parse_query(query, error);
    if (!params) return std::nullopt;
    BoxRegistration r;
    for (const auto& [key, value] : *params) {
        if (key == "box") {
            if (!is_box_id(value)) {
                *error = "box '" + value + "' is not a box id (1 to 64 of A-Z a-z 0-9 . _ -)";
                return std::nullopt;
            }
            r.box = value;
        } else if (key == "upload_bps") {
            auto v = parse_uint(value);
            if (!v || *v < 1000 || *v > 100'000'000'000ull) {
                *error =
                    "upload_bps '" + value + "' is not a whole number of bits per second in [1000, 1e11]";
                return std::nullopt;
            }
            r.upload = BitRate(*v);
        } else if (key == "quota") {
            auto v = parse_uint(value);
            if (!v || *v == 0 || *v > (1ull << 50)) {
                *error = "quota '" + value + "' is not a whole number of bytes in [1, 2^50]";
                return std::nullopt;
            }
            r.quota = Bytes(*v);
        } else {
            *error = "unknown parameter '" + key + "' (box, upload_bps, quota)";
            return std::nullopt;
        }
    }
    if (r.box.empty()) {
        *error = "the box parameter is required";
        return std::nullopt;
    }
    return r;
}

std::string assignment_json(const BoxAssignment& a) {
    auto titles = nlohmann::ordered_json::array();
    for (const auto& t : a.titles) {
        titles.push_back(nlohmann::ordered_json{{"name", t.name},
                                                {"info_hash", t.info_hash},
                                                {"torrent", torrent_path(t.name)},
                                                {"piece_size", t.piece_size.value()},
                                                {"pieces", t.pieces},
                                                {"ranges", ranges_json(t.ranges)},
                                                {"bytes", t.bytes.value()}});
    }
    const auto plan = hex16(fnv1a(titles.dump()));
    nlohmann::ordered_json j{{"box", a.box},
                             {"plan", plan},
                             {"generation", a.generation},
                             {"window", {{"start_ms", a.window.start_ms}, {"end_ms", a.window.end_ms}}},
                             {"rate_bps", a.rate.value()},
                             {"quota", a.quota.value()},
                             {"upload_bps", a.upload.value()},
                             {"refresh_s", a.refresh.count()},
                             {"titles", titles}};
    return j.dump();
}

nlohmann::json push_plan_json(const PushPlan& plan, std::uint64_t generation) {
    auto titles = nlohmann::json::array();
    for (const auto& t : plan.titles) {
        auto holders = nlohmann::json::array();
        for (const auto& stripe : t.holders) {
            auto ids = nlohmann::json::array();
            for (auto b : stripe)
                ids.push_back(plan.boxes[b].id);
            holders.push_back(ids);
        }
        titles.push_back({{"name", t.name},
                          {"demand", t.demand},
                          {"expected_viewers", t.expected_viewers},
                          {"deficit_bps", t.deficit_bps},
                          {"covered_bps", t.covered_bps},
                          {"stripes", t.stripes},
                          {"holders", holders},
                          {"note", t.note.empty() ? nlohmann::json(nullptr) : nlohmann::json(t.note)}});
    }
    auto boxes = nlohmann::json::array();
    for (const auto& b : plan.boxes) {
        auto held = nlohmann::json::array();
        for (const auto& h : b.holdings)
            held.push_back({{"title", plan.titles[h.title].name},
                            {"ranges", ranges_json(h.pieces)},
                            {"bytes", h.bytes.value()}});
        boxes.push_back({{"box", b.id},
                         {"bytes", b.bytes.value()},
                         {"committed_bps", b.committed_bps},
                         {"idle_upload_bps", b.idle_upload_bps},
                         {"titles", held}});
    }
    return {{"generation", generation}, {"titles", titles}, {"boxes", boxes}};
}

HttpResponse serve_push(const HttpRequest& req, std::string_view path, PushControl* push) {
    const bool get_or_head = req.method == "GET" || req.method == "HEAD";
    std::string error;
    if (path == "/catalog/plays") {
        if (req.method != "POST") return method_not_allowed(req.method, "POST");
        auto params = parse_query(query_of(req.target), &error);
        if (!params) return error_response(400, error);
        std::string info_hash, box;
        for (const auto& [key, value] : *params) {
            if (key == "info_hash") {
                info_hash = value;
            } else if (key == "box") {
                if (!is_box_id(value)) return error_response(400, "box '" + value + "' is not a box id");
                box = value;
            } else {
                return error_response(400, "unknown parameter '" + key + "' (info_hash, box)");
            }
        }
        if (!is_hex40(info_hash))
            return error_response(400, "info_hash must be the title's 40 lower-case hex digits");
        if (!push || !push->record_play(info_hash, box))
            return error_response(404, "no title has info-hash " + info_hash);
        HttpResponse r;
        r.status = 204;
        return r;
    }
    if (path == "/push/assignment" || path == "/push/plan") {
        if (!get_or_head) return method_not_allowed(req.method, "GET, HEAD");
        if (path == "/push/plan") {
            auto plan = push ? push->plan() : std::nullopt;
            if (!plan) return error_response(404, "push is not enabled on this server (config \"push\")");
            return json_response(push_plan_json(plan->first, plan->second).dump());
        }
        auto reg = parse_registration(query_of(req.target), &error);
        if (!reg) return error_response(400, error);
        auto a = push ? push->assign(*reg) : std::nullopt;
        if (!a) return error_response(404, "push is not enabled on this server (config \"push\")");
        return json_response(assignment_json(*a));
    }
    return error_response(404, "no such resource");
}

}  // namespace toast::server
