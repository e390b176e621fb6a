// The TitleService's side of the push agent (PushHost: the titles it reads and changes) and the box's id.
#include <algorithm>
#include <random>
#include <stdexcept>

#include "client/service/service_title.hpp"
#include "client/service/title_service.hpp"
#include "toast/common/durable_file.hpp"
#include "toast/common/read_file.hpp"
#include "toast/common/text.hpp"

namespace toast::client {

namespace {

constexpr const char* kBoxIdFile = "box_id";

}  // namespace

void TitleService::load_box_id() {
    if (!options_.box_id.empty()) return;
    const auto path = options_.save_dir / kBoxIdFile;
    try {
        auto text = read_file(path);
        while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
            text.pop_back();
        if (!is_box_id(text))
            throw std::runtime_error(path.string() + " does not hold a box id (fix or remove it)");
        options_.box_id = text;
        return;
    } catch (const FileReadError& e) {
        if (!e.missing()) throw;
    }
    std::random_device rd;
    std::uint64_t v = (std::uint64_t(rd()) << 32) | rd();
    static constexpr char digits[] = "0123456789abcdef";
    std::string id = "box-";
    for (int i = 0; i < 16; ++i, v >>= 4)
        id += digits[v & 15];
    write_file_atomically(path, id + "\n");
    options_.box_id = id;
}

bool TitleService::playing() {
    return std::any_of(titles_.begin(), titles_.end(),
                       [](const auto& e) { return e.second->stream != nullptr; });
}

std::vector<ServiceTitle*> TitleService::pushed_titles() {
    std::vector<ServiceTitle*> out;
    for (auto& [id, t] : titles_)
        if (t->saved.pushed) out.push_back(t.get());
    return out;
}

ServiceTitle* TitleService::add_pushed(const std::string& torrent, const std::string& origin,
                                       std::string* error) {
    auto added = create_title(torrent, origin, true);
    if (!added.title) {
        *error = added.refusal.body;
        return nullptr;
    }
    return added.title;
}

}  // namespace toast::client
