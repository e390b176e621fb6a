#include "client/lt/server_access.hpp"

#include <stdexcept>

#include <spdlog/spdlog.h>

#include "client/core/token_renewal.hpp"
#include "client/lt/http_request.hpp"
#include "toast/common/durable_file.hpp"
#include "toast/common/read_file.hpp"

namespace toast::client {

namespace {

std::int64_t unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::string trimmed_first_line(std::string_view text) {
    text = text.substr(0, text.find('\n'));
    while (!text.empty() && (text.back() == '\r' || text.back() == ' ' || text.back() == '\t'))
        text.remove_suffix(1);
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t'))
        text.remove_prefix(1);
    return std::string(text);
}

}  // namespace

AccessCredential::AccessCredential(std::string token, std::filesystem::path file)
    : token_(std::move(token)), file_(std::move(file)) {}

std::optional<std::string> AccessCredential::replace(std::string token) {
    token_ = std::move(token);
    if (file_.empty()) return std::nullopt;
    try {
        // The token is a credential: readable by its owner only.
        write_file_atomically(file_, token_ + "\n", 0600);
    } catch (const std::exception& e) {
        return std::string(e.what());
    }
    return std::nullopt;
}

std::string read_token_file(const std::filesystem::path& file) {
    std::string text;
    try {
        text = read_file(file);
    } catch (const FileReadError& e) {
        throw std::runtime_error("--token-file: " + std::string(e.what()));
    }
    auto token = trimmed_first_line(text);
    if (token.empty()) throw std::runtime_error("--token-file " + file.string() + ": holds no token");
    return token;
}

std::string ServerAccess::authorization() const {
    if (!credential || credential->token().empty()) return {};
    return "Bearer " + credential->token();
}

TokenRenewer::TokenRenewer(boost::asio::io_context& io, ServerAccess access, ServerUrl server)
    : io_(io),
      access_(std::move(access)),
      server_(std::move(server)),
      timer_(io),
      alive_(std::make_shared<bool>(true)) {
    server_.target = "/token/renew";
    server_.text = origin_url(server_) + server_.target;
}

TokenRenewer::~TokenRenewer() {
    *alive_ = false;
}

void TokenRenewer::start() {
    stopped_ = false;
    auto fields = access_.credential ? access_.credential->fields() : std::nullopt;
    if (!fields) {
        if (access_.credential)
            spdlog::warn("the access token is not a v1 token: it is sent as it is and not renewed");
        return;
    }
    if (unix_now() >= fields->expires)
        spdlog::warn("the access token of {} expired at {}: the server will refuse it", fields->subscriber,
                     fields->expires);
    schedule();
}

void TokenRenewer::stop() {
    stopped_ = true;
    *alive_ = false;
    alive_ = std::make_shared<bool>(true);
    timer_.cancel();
}

void TokenRenewer::schedule() {
    if (stopped_) return;
    auto fields = access_.credential->fields();
    if (!fields) return;
    auto wait = next_renewal({fields->issued, fields->expires}, unix_now(), failures_);
    if (!wait) {
        spdlog::error("the access token of {} has expired and could not be renewed", fields->subscriber);
        return;
    }
    timer_.expires_after(*wait);
    timer_.async_wait([this, alive = alive_](boost::system::error_code ec) {
        if (ec || !*alive) return;
        renew();
    });
}

void TokenRenewer::renew() {
    HttpRequestSpec spec;
    spec.method = "POST";
    spec.url = server_;
    spec.headers.push_back({"Authorization", access_.authorization()});
    spec.body_limit = 4096;
    http_request(io_, std::move(spec), access_.tls, [this, alive = alive_](HttpAnswer a) {
        if (!*alive) return;
        on_answer(a.status, a.body, a.error);
    });
}

void TokenRenewer::on_answer(int status, const std::string& body, const std::string& error) {
    const auto old = access_.credential->fields();
    std::string problem;
    std::optional<AccessToken> fresh;
    if (status != 200) {
        problem = status == 0
                      ? "POST " + redact_token(server_.text) + ": " + error
                      : "the server answered " + std::to_string(status) + ": " + trimmed_first_line(body);
    } else {
        fresh = parse_access_token(trimmed_first_line(body)).token;
        if (!fresh) {
            problem = "the server's answer is not a token";
        } else if (!old || fresh->subscriber != old->subscriber || !(fresh->scope == old->scope)) {
            problem = "the renewed token names another subscriber or scope";
            fresh.reset();
        }
    }
    if (fresh) {
        failures_ = 0;
        ++renewals_;
        if (auto write_error = access_.credential->replace(format_access_token(*fresh)))
            spdlog::warn("renewed access token not saved: {}", *write_error);
        spdlog::info("access token of {} renewed until {}", fresh->subscriber, fresh->expires);
    } else {
        ++failures_;
        ++failures_total_;
        spdlog::warn("access token renewal failed ({}): {}", failures_, problem);
    }
    schedule();
}

}  // namespace toast::client
