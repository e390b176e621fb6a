// Which media container a title is in, so the .torrent's file name carries the extension players, file
// managers and stock BitTorrent clients go by ("movie.ts", not "movie"). Decided from the title's first
// bytes, as players sniff them, else from the source file's extension; a title in neither form keeps a bare
// name.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace toast::server {

struct Container {
    std::string_view extension;     // without the dot: "ts"
    std::string_view content_type;  // "video/mp2t"
    bool operator==(const Container&) const = default;
};

// How many leading bytes sniff_container() looks at (fewer for a shorter title).
constexpr std::size_t kContainerSniffBytes = 4096;

// MPEG-TS (188-byte packets; 192-byte M2TS), MP4/QuickTime/3GP (ftyp brand), Matroska/WebM (EBML DocType),
// AVI, FLV, MPEG program stream and Ogg; nullopt for anything else.
std::optional<Container> sniff_container(std::string_view head);

// From the extension of `file_name` (case-insensitive): ts, m2ts, mts, mp4, m4v, mov, 3gp, mkv, webm, avi,
// flv, mpg, mpeg, ogv, ogg.
std::optional<Container> container_from_extension(std::string_view file_name);

// The torrent's file name for title `name`: the name plus ".EXT", unless it already ends with it
// (case-insensitively) or there is no container.
std::string title_file_name(std::string_view name, const std::optional<Container>& container);

}  // namespace toast::server
