#include "server/core/container.hpp"

#include <array>
#include <cctype>

#include "toast/common/text.hpp"

namespace toast::server {

namespace {

constexpr Container kTs{"ts", "video/mp2t"};
constexpr Container kM2ts{"m2ts", "video/mp2t"};
constexpr Container kMp4{"mp4", "video/mp4"};
constexpr Container kMov{"mov", "video/quicktime"};
constexpr Container k3gp{"3gp", "video/3gpp"};
constexpr Container kMkv{"mkv", "video/x-matroska"};
constexpr Container kWebm{"webm", "video/webm"};
constexpr Container kAvi{"avi", "video/x-msvideo"};
constexpr Container kFlv{"flv", "video/x-flv"};
constexpr Container kMpg{"mpg", "video/mpeg"};
constexpr Container kOgg{"ogv", "video/ogg"};

struct Extension {
    std::string_view text;
    Container container;
};
constexpr std::array<Extension, 15> kExtensions{{{"ts", kTs},
                                                 {"m2ts", kM2ts},
                                                 {"mts", kM2ts},
                                                 {"mp4", kMp4},
                                                 {"m4v", kMp4},
                                                 {"mov", kMov},
                                                 {"3gp", k3gp},
                                                 {"mkv", kMkv},
                                                 {"webm", kWebm},
                                                 {"avi", kAvi},
                                                 {"flv", kFlv},
                                                 {"mpg", kMpg},
                                                 {"mpeg", kMpg},
                                                 {"ogv", kOgg},
                                                 {"ogg", kOgg}}};

bool at(std::string_view s, std::size_t pos, std::string_view what) {
    return s.size() >= pos + what.size() && s.substr(pos, what.size()) == what;
}

// Sync bytes every `stride` bytes from `first`: every packet the head holds, and at least two.
bool packets(std::string_view head, std::size_t first, std::size_t stride) {
    std::size_t seen = 0;
    for (std::size_t pos = first; pos < head.size() && seen < 8; pos += stride, ++seen)
        if (static_cast<unsigned char>(head[pos]) != 0x47) return false;
    return seen >= 2;
}

}  // namespace

std::optional<Container> sniff_container(std::string_view head) {
    if (packets(head, 0, 188)) return kTs;
    if (packets(head, 4, 192)) return kM2ts;
    if (at(head, 4, "ftyp")) {
        if (at(head, 8, "qt  ")) return kMov;
        if (at(head, 8, "3gp") || at(head, 8, "3g2")) return k3gp;
        return kMp4;
    }
    if (at(head, 4, "moov") || at(head, 4, "mdat") || at(head, 4, "wide")) return kMov;
    if (at(head, 0, "\x1a\x45\xdf\xa3")) {
        // The EBML header's DocType (element 0x4282) says "webm" or "matroska".
        return head.substr(0, 64).find("\x42\x82\x84webm") != std::string_view::npos ? kWebm : kMkv;
    }
    if (at(head, 0, "RIFF") && at(head, 8, "AVI ")) return kAvi;
    if (at(head, 0, "FLV\x01")) return kFlv;
    if (at(head, 0, std::string_view("\x00\x00\x01\xba", 4))) return kMpg;
    if (at(head, 0, "OggS")) return kOgg;
    return std::nullopt;
}

std::optional<Container> container_from_extension(std::string_view file_name) {
    const auto slash = file_name.find_last_of('/');
    if (slash != std::string_view::npos) file_name.remove_prefix(slash + 1);
    const auto dot = file_name.find_last_of('.');
    if (dot == std::string_view::npos || dot == 0) return std::nullopt;
    const auto ext = file_name.substr(dot + 1);
    for (const auto& e : kExtensions)
        if (iequals(ext, e.text)) return e.container;
    return std::nullopt;
}

std::string title_file_name(std::string_view name, const std::optional<Container>& container) {
    std::string out(name);
    if (!container) return out;
    const auto ext = container->extension;
    if (name.size() > ext.size() && name[name.size() - ext.size() - 1] == '.' &&
        iequals(name.substr(name.size() - ext.size()), ext))
        return out;
    // A name already ending in another spelling of the same container (".m4v" for mp4) keeps it too.
    if (auto own = container_from_extension(name); own && own->content_type == container->content_type)
        return out;
    out += '.';
    out += ext;
    return out;
}

}  // namespace toast::server
