#include "client/core/resume_point.hpp"

#include <nlohmann/json.hpp>

namespace toast::client {

std::string format_resume_point(const ResumePoint& p) {
    nlohmann::ordered_json j;
    j["title_size"] = p.title_size.value();
    j["offset"] = p.offset.value();
    return j.dump() + "\n";
}

std::optional<ResumePoint> parse_resume_point(std::string_view text, Bytes title_size, std::string* error) {
    auto fail = [&](std::string message) -> std::optional<ResumePoint> {
        if (error) *error = std::move(message);
        return std::nullopt;
    };
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return fail("not a JSON object");
    for (const auto& [key, value] : j.items()) {
        if (key != "title_size" && key != "offset") return fail(key + ": unknown key");
        if (!value.is_number_unsigned()) return fail(key + ": not a non-negative integer");
    }
    if (!j.contains("title_size")) return fail("title_size: missing");
    if (!j.contains("offset")) return fail("offset: missing");
    ResumePoint p{Bytes(j["title_size"].get<std::uint64_t>()), ByteOffset(j["offset"].get<std::uint64_t>())};
    if (p.title_size != title_size) {
        return fail("title_size: " + std::to_string(p.title_size.value()) + " is not this title's size " +
                    std::to_string(title_size.value()));
    }
    if (p.offset.value() > title_size.value()) {
        return fail("offset: " + std::to_string(p.offset.value()) + " is past the end (" +
                    std::to_string(title_size.value()) + " bytes)");
    }
    if (p.offset.value() == title_size.value()) p.offset = ByteOffset(0);
    return p;
}

std::string resume_point_file_name(std::string_view title_file_name) {
    return "." + std::string(title_file_name) + ".position";
}

}  // namespace toast::client
