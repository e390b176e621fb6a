#include "client/service/torrent_download.hpp"

#include <memory>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include "client/lt/http_fetcher.hpp"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace toast::client {

namespace {

class Download : public std::enable_shared_from_this<Download> {
  public:
    Download(asio::io_context& io, http::verb method, ServerUrl url, std::size_t limit,
             std::chrono::milliseconds timeout, std::function<void(HttpCallResult)> done)
        : resolver_(io),
          stream_(io),
          method_(method),
          url_(std::move(url)),
          timeout_(timeout),
          done_(std::move(done)) {
        parser_.body_limit(limit);
    }

    void start() {
        stream_.expires_after(timeout_);
        resolver_.async_resolve(
            url_.host, url_.port,
            [self = shared_from_this()](beast::error_code ec, tcp::resolver::results_type r) {
                if (ec) return self->finish("cannot resolve " + self->url_.host + ": " + ec.message());
                self->stream_.async_connect(
                    r, [self](beast::error_code ec2, const tcp::endpoint&) { self->on_connect(ec2); });
            });
    }

  private:
    void on_connect(beast::error_code ec) {
        if (ec) return finish("cannot connect: " + ec.message());
        request_.version(11);
        request_.method(method_);
        if (method_ == http::verb::post) request_.content_length(0);
        request_.target(url_.target);
        request_.set(http::field::host, url_.host + ":" + url_.port);
        request_.set(http::field::user_agent, "toast-client");
        request_.set(http::field::connection, "close");
        http::async_write(stream_, request_, [self = shared_from_this()](beast::error_code ec2, std::size_t) {
            if (ec2) return self->finish("cannot send the request: " + ec2.message());
            http::async_read(self->stream_, self->buffer_, self->parser_,
                             [self](beast::error_code ec3, std::size_t) { self->on_read(ec3); });
        });
    }

    void on_read(beast::error_code ec) {
        if (ec == http::error::body_limit) return finish("the answer is larger than the torrent size limit");
        if (ec == beast::error::timeout) return finish("no complete answer within the time limit");
        if (ec) return finish("cannot read the answer: " + ec.message());
        auto& res = parser_.get();
        HttpCallResult r;
        r.status = static_cast<int>(res.result_int());
        r.reason = std::string(res.reason());
        r.body = std::move(res.body());
        complete(std::move(r));
    }

    void finish(const std::string& error) {
        HttpCallResult r;
        r.error = "cannot fetch " + url_.text + ": " + error;
        complete(std::move(r));
    }

    void complete(HttpCallResult r) {
        beast::error_code ignored;
        stream_.socket().close(ignored);
        if (done_) {
            auto done = std::move(done_);
            done_ = nullptr;
            done(std::move(r));
        }
    }

    tcp::resolver resolver_;
    beast::tcp_stream stream_;
    http::verb method_;
    ServerUrl url_;
    std::chrono::milliseconds timeout_;
    std::function<void(HttpCallResult)> done_;
    http::request<http::empty_body> request_;
    beast::flat_buffer buffer_;
    http::response_parser<http::string_body> parser_;
};

}  // namespace

void http_call(asio::io_context& io, const std::string& method, const std::string& url,
               std::size_t body_limit, std::chrono::milliseconds timeout,
               std::function<void(HttpCallResult)> done) {
    auto parsed = parse_http_url(url);
    if (!parsed) {
        done({0, {}, {}, "'" + url + "' is not an http:// URL"});
        return;
    }
    const auto verb = method == "POST" ? http::verb::post : http::verb::get;
    std::make_shared<Download>(io, verb, *parsed, body_limit, timeout, std::move(done))->start();
}

void download_torrent(asio::io_context& io, const std::string& url, std::size_t body_limit,
                      std::chrono::milliseconds timeout, std::function<void(TorrentDownloadResult)> done) {
    http_call(io, "GET", url, body_limit, timeout, [url, done = std::move(done)](HttpCallResult r) {
        if (r.status == 0) return done({false, {}, std::move(r.error)});
        if (r.status != 200) {
            return done({false,
                         {},
                         "cannot fetch " + url + ": the server answered " + std::to_string(r.status) + " " +
                             r.reason});
        }
        done({true, std::move(r.body), {}});
    });
}

}  // namespace toast::client
