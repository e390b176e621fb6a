#include "client/http/player_request.hpp"

#include <algorithm>
#include <cctype>

#include "toast/common/byte_range.hpp"

namespace toast::client {

PlayerResponse decide_player_response(const PlayerRequest& request, std::string_view path,
                                      std::uint64_t title_size) {
    PlayerResponse r;
    auto error = [&](int status, std::string reason) {
        r.status = status;
        r.reason = std::move(reason);
        return r;
    };
    if (request.method != "GET" && request.method != "HEAD")
        return error(405, "only GET and HEAD are supported");
    r.head = request.method == "HEAD";
    auto target = request.target.substr(0, request.target.find('?'));
    if (target != path) return error(404, "no such title here; this endpoint serves " + std::string(path));
    r.length = title_size;
    if (request.range.empty()) return r;
    auto set = parse_range_header(request.range, title_size);
    if (set.status == RangeStatus::unsatisfiable) {
        r.content_range = unsatisfied_content_range(title_size);
        r.length = 0;
        return error(416,
                     "the requested range is beyond the title's " + std::to_string(title_size) + " bytes");
    }
    if (set.ignored() || set.ranges.size() != 1) return r;
    r.status = 206;
    r.first = set.ranges[0].first;
    r.length = set.ranges[0].length();
    r.content_range = content_range(set.ranges[0], title_size);
    return r;
}

std::string title_path(std::string_view file_name) {
    static const char* hex = "0123456789ABCDEF";
    std::string out = "/";
    for (unsigned char c : file_name) {
        if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

std::string content_type_for(std::string_view file_name) {
    auto dot = file_name.rfind('.');
    std::string ext = dot == std::string_view::npos ? "" : std::string(file_name.substr(dot + 1));
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    if (ext == "mp4" || ext == "m4v") return "video/mp4";
    if (ext == "mov") return "video/quicktime";
    if (ext == "ts" || ext == "m2ts" || ext == "mts") return "video/mp2t";
    if (ext == "mkv") return "video/x-matroska";
    if (ext == "webm") return "video/webm";
    if (ext == "avi") return "video/x-msvideo";
    if (ext == "mpg" || ext == "mpeg") return "video/mpeg";
    if (ext == "mp3") return "audio/mpeg";
    if (ext == "m4a") return "audio/mp4";
    return "application/octet-stream";
}

}  // namespace toast::client
