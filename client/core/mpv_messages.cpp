#include "client/core/mpv_messages.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

namespace toast::client {

namespace {

constexpr int kTimePos = 1;
constexpr int kPause = 2;
constexpr int kPausedForCache = 3;

// A media time mpv can mean: finite, not negative, at most a day (a larger one is not a position).
std::optional<std::chrono::nanoseconds> media_time(const nlohmann::json& v) {
    if (!v.is_number()) return std::nullopt;
    double s = v.get<double>();
    if (!std::isfinite(s) || s < 0 || s > 86'400.0) return std::nullopt;
    return std::chrono::nanoseconds(static_cast<std::int64_t>(s * 1e9));
}

}  // namespace

std::string mpv_observe_commands() {
    return R"({"command":["observe_property",1,"time-pos"]})"
           "\n"
           R"({"command":["observe_property",2,"pause"]})"
           "\n"
           R"({"command":["observe_property",3,"paused-for-cache"]})"
           "\n";
}

std::optional<MpvEvent> parse_mpv_line(std::string_view line) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return std::nullopt;
    auto event = j.find("event");
    if (event == j.end() || !event->is_string()) return std::nullopt;
    const auto& name = event->get_ref<const std::string&>();
    if (name == "seek") return MpvEvent{MpvEventKind::seek};
    if (name == "end-file") return MpvEvent{MpvEventKind::end_file};
    if (name != "property-change") return std::nullopt;
    auto id = j.find("id");
    auto data = j.find("data");
    if (id == j.end() || !id->is_number_integer() || data == j.end()) return std::nullopt;
    switch (id->get<int>()) {
        case kTimePos:
            if (auto t = media_time(*data)) return MpvEvent{MpvEventKind::position, *t};
            return std::nullopt;
        case kPause:
        case kPausedForCache:
            if (!data->is_boolean()) return std::nullopt;
            return MpvEvent{id->get<int>() == kPause ? MpvEventKind::pause : MpvEventKind::cache_pause,
                            {},
                            data->get<bool>()};
        default:
            return std::nullopt;
    }
}

std::optional<bool> MpvPauseState::on_event(const MpvEvent& e) {
    if (e.kind != MpvEventKind::pause && e.kind != MpvEventKind::cache_pause) return std::nullopt;
    bool before = paused();
    (e.kind == MpvEventKind::pause ? user_ : cache_) = e.paused;
    if (paused() == before) return std::nullopt;
    return paused();
}

}  // namespace toast::client
