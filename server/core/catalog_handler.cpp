#include "server/core/catalog_handler.hpp"

#include <string>
#include <vector>

#include "server/core/catalog.hpp"
#include "server/core/torrent_token.hpp"

namespace toast::server {

HttpResponse serve_catalog(const HttpRequest& req, const TitleStore& titles,
                           const std::map<std::string, double>& demand) {
    std::vector<CatalogTitle> list;
    for (const auto& t : titles.titles()) {
        auto d = demand.find(t->name);
        list.push_back({.name = t->name,
                        .file_name = t->file_name,
                        .size = t->size,
                        .bitrate = t->bitrate,
                        .etag = t->etag,
                        .last_modified = t->last_modified,
                        .info_hash = t->info_hash,
                        .demand = d == demand.end() ? 0.0 : d->second});
        if (t->tier)
            for (const auto& node : t->tier->layout.nodes)
                list.back().urls.push_back(node.url + "/titles/" + t->name);
    }
    auto body = catalog_body(std::move(list));
    // Boxes poll the catalogue: no-cache makes every cache revalidate, which costs a 304 while it is
    // unchanged.
    auto pre = evaluate_preconditions(req, body.etag, std::nullopt);
    HttpResponse r = pre ? std::move(*pre) : HttpResponse{};
    if (!pre) {
        r.status = 200;
        r.headers.push_back({"Content-Type", "application/json"});
        add_validators(r, body.etag, std::nullopt);
        r.body = std::move(body.json);
    }
    r.headers.push_back({"Cache-Control", "no-cache"});
    return r;
}

HttpResponse serve_torrent(const HttpRequest& req, const TitleStore& titles, std::string_view name,
                           const std::string& url_token) {
    auto title = titles.find(name);
    if (!title) return error_response(404, "no title named '" + std::string(name) + "'");
    if (title->info_hash.empty()) {
        return error_response(404,
                              "title '" + title->name +
                                  "' has no torrent in the store (ingested before the store kept torrents; "
                                  "ingest it again)");
    }
    // A torrent belongs to one version of the title: the title's validators are the torrent's.
    // (A signed copy has no validators: a copy held with an older token is not "not modified".)
    if (url_token.empty()) {
        if (auto pre = evaluate_preconditions(req, title->etag, title->last_modified)) return std::move(*pre);
    }
    auto bytes = titles.torrent(*title);
    if (!bytes)
        return error_response(503, "no intact copy of the torrent of '" + title->name + "' on any disk");
    HttpResponse r;
    r.status = 200;
    r.headers.push_back({"Content-Type", "application/x-bittorrent"});
    r.headers.push_back({"Content-Disposition", "attachment; filename=\"" + title->name + ".torrent\""});
    if (url_token.empty()) {
        add_validators(r, title->etag, title->last_modified);
        r.body = std::move(*bytes);
        return r;
    }
    // Other bytes than the stored torrent's: not the title's validators, and not for any cache.
    auto signed_torrent = torrent_with_token(*bytes, url_token);
    if (!signed_torrent)
        return error_response(500, "the stored torrent of '" + title->name + "' does not decode");
    r.headers.push_back({"Cache-Control", "no-store"});
    r.body = std::move(*signed_torrent);
    return r;
}

std::shared_ptr<const TitleInfo> find_title(const TitleStore& titles, std::string_view name) {
    if (auto t = titles.find(name)) return t;
    const auto dot = name.rfind('.');
    if (dot == std::string_view::npos || dot == 0) return nullptr;
    auto t = titles.find(name.substr(0, dot));
    return t && t->file_name == name ? t : nullptr;
}

}  // namespace toast::server
