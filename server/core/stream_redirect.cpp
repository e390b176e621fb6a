#include "server/core/stream_redirect.hpp"

#include <algorithm>

#include "toast/common/tier.hpp"

namespace toast::server {

std::vector<std::string> refused_nodes(std::string_view target) {
    std::vector<std::string> out;
    const auto q = target.find('?');
    if (q == std::string_view::npos) return out;
    auto query = target.substr(q + 1);
    query = query.substr(0, query.find('#'));
    while (!query.empty()) {
        const auto amp = query.find('&');
        const auto param = query.substr(0, amp);
        constexpr std::string_view kKey = "refused=";
        if (param.substr(0, kKey.size()) == kKey) {
            auto list = param.substr(kKey.size());
            while (!list.empty()) {
                const auto comma = list.find(',');
                const auto id = list.substr(0, comma);
                if (is_valid_node_id(id) && std::find(out.begin(), out.end(), id) == out.end())
                    out.emplace_back(id);
                if (comma == std::string_view::npos) break;
                list.remove_prefix(comma + 1);
            }
        }
        if (amp == std::string_view::npos) break;
        query.remove_prefix(amp + 1);
    }
    return out;
}

HttpResponse stream_redirect(std::string_view node_url, std::string_view target,
                             std::vector<std::string> refused, std::string_view self,
                             std::string_view reason) {
    if (std::find(refused.begin(), refused.end(), self) == refused.end()) refused.emplace_back(self);
    std::string list;
    for (const auto& id : refused)
        list += (list.empty() ? "" : ",") + id;
    // The target's other query parameters go along as they came (a signed URL's token among them).
    std::string kept;
    if (const auto q = target.find('?'); q != std::string_view::npos) {
        auto query = target.substr(q + 1);
        query = query.substr(0, query.find('#'));
        while (!query.empty()) {
            const auto amp = query.find('&');
            const auto param = query.substr(0, amp);
            if (!param.empty() && param.substr(0, 8) != "refused=") kept += std::string(param) + "&";
            if (amp == std::string_view::npos) break;
            query.remove_prefix(amp + 1);
        }
    }
    const auto path = target.substr(0, std::min(target.find('?'), target.find('#')));
    const auto location = std::string(node_url) + std::string(path) + "?" + kept + "refused=" + list;
    auto r = error_response(307, std::string(reason) + " on node " + std::string(self) + "; " +
                                     std::string(node_url) + " has room");
    r.headers.push_back({"Location", location});
    return r;
}

}  // namespace toast::server
