#include "client/core/service_titles.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "client/core/service_api.hpp"

namespace toast::client {

std::string_view to_string(TitleState s) {
    switch (s) {
        case TitleState::stopped:
            return "stopped";
        case TitleState::playing:
            return "playing";
        case TitleState::removed:
            return "removed";
    }
    return "?";
}

TitleTransition transition(TitleState from, TitleCommand command) {
    TitleTransition t;
    t.next = from;
    if (from == TitleState::removed) {
        t.status = 404;
        t.error = "the title was removed";
        return t;
    }
    switch (command) {
        case TitleCommand::play:
            t.next = TitleState::playing;
            break;
        case TitleCommand::stop:
            if (from != TitleState::playing) {
                t.status = 409;
                t.error = "the title is not playing";
                return t;
            }
            t.next = TitleState::stopped;
            break;
        case TitleCommand::remove:
            t.next = TitleState::removed;
            break;
    }
    t.changed = t.next != from;
    return t;
}

std::string format_saved_titles(const std::vector<SavedTitle>& titles) {
    auto list = nlohmann::ordered_json::array();
    for (const auto& t : titles) {
        nlohmann::ordered_json e{
            {"id", t.id}, {"name", t.name}, {"added", t.added}, {"last_watched", t.last_watched}};
        if (t.pushed) e["pushed"] = true;
        list.push_back(std::move(e));
    }
    return nlohmann::ordered_json{{"version", 1}, {"titles", list}}.dump(2) + "\n";
}

std::optional<std::vector<SavedTitle>> parse_saved_titles(std::string_view text, std::string* error) {
    auto bad = [error](std::string message) -> std::optional<std::vector<SavedTitle>> {
        if (error) *error = std::move(message);
        return std::nullopt;
    };
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
    if (!j.contains("version") || j["version"] != 1) return bad("\"version\" must be 1");
    if (!j.contains("titles") || !j["titles"].is_array()) return bad("\"titles\" must be an array");
    std::vector<SavedTitle> out;
    for (std::size_t i = 0; i < j["titles"].size(); ++i) {
        const auto& e = j["titles"][i];
        auto where = "titles[" + std::to_string(i) + "]";
        if (!e.is_object()) return bad(where + " is not an object");
        SavedTitle t;
        if (!e.contains("id") || !e["id"].is_string() || !is_title_id(e["id"].get<std::string>()))
            return bad(where + ".id must be 40 lower-case hex digits");
        t.id = e["id"].get<std::string>();
        if (!e.contains("name") || !e["name"].is_string()) return bad(where + ".name must be a string");
        t.name = e["name"].get<std::string>();
        for (auto [key, field] : {std::pair{"added", &t.added}, std::pair{"last_watched", &t.last_watched}}) {
            if (!e.contains(key) || !e[key].is_number_integer() || e[key].get<std::int64_t>() < 0)
                return bad(where + "." + key + " must be a non-negative integer (unix ms)");
            *field = e[key].get<std::int64_t>();
        }
        if (e.contains("pushed")) {
            if (!e["pushed"].is_boolean()) return bad(where + ".pushed must be true or false");
            t.pushed = e["pushed"].get<bool>();
        }
        for (const auto& seen : out) {
            if (seen.id == t.id) return bad(where + ".id " + t.id + " is listed twice");
        }
        out.push_back(std::move(t));
    }
    return out;
}

}  // namespace toast::client
