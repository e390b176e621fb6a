#include "server/core/catalog.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "server/core/http_date.hpp"
#include "toast/common/text.hpp"

namespace toast::server {

namespace {}  // namespace

std::string torrent_path(const std::string& name) {
    return "/torrents/" + name + ".torrent";
}

CatalogBody catalog_body(std::vector<CatalogTitle> titles) {
    std::sort(titles.begin(), titles.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    auto list = nlohmann::json::array();
    for (const auto& t : titles) {
        const auto bits = static_cast<double>(t.size) * 8.0;
        const double duration = t.bitrate.value() == 0
                                    ? 0.0
                                    : std::round(bits / static_cast<double>(t.bitrate.value()) * 1000) / 1000;
        nlohmann::json j = {{"name", t.name},
                            {"file", t.file_name},
                            {"size", t.size},
                            {"bitrate", t.bitrate.value()},
                            {"duration", duration},
                            {"etag", t.etag},
                            {"last_modified", format_http_date(t.last_modified)},
                            {"url", "/titles/" + t.name}};
        if (t.info_hash.empty()) {
            j["torrent"] = nullptr;
            j["info_hash"] = nullptr;
        } else {
            j["torrent"] = torrent_path(t.name);
            j["info_hash"] = t.info_hash;
        }
        j["demand"] = std::round(t.demand * 1000) / 1000;
        if (!t.urls.empty()) j["urls"] = t.urls;
        list.push_back(std::move(j));
    }
    CatalogBody out;
    out.json = nlohmann::json{{"titles", std::move(list)}}.dump();
    char tag[24];
    std::snprintf(tag, sizeof tag, "\"c%016llx\"", static_cast<unsigned long long>(fnv1a(out.json)));
    out.etag = tag;
    return out;
}

}  // namespace toast::server
