#include "client/lt/http_request.hpp"

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "client/lt/http_stream.hpp"

namespace beast = boost::beast;
namespace http = beast::http;

namespace toast::client {

namespace {

class Exchange : public std::enable_shared_from_this<Exchange> {
  public:
    Exchange(boost::asio::io_context& io, HttpRequestSpec spec,
             std::shared_ptr<boost::asio::ssl::context> tls, std::function<void(HttpAnswer)> done)
        : spec_(std::move(spec)), stream_(io, spec_.url, std::move(tls)), done_(std::move(done)) {
        parser_.body_limit(spec_.body_limit);
    }

    void start() {
        stream_.connect(spec_.timeout, [self = shared_from_this()](beast::error_code ec) {
            if (ec) return self->finish("cannot connect: " + ec.message());
            self->send();
        });
    }

  private:
    void send() {
        request_.version(11);
        request_.method_string(spec_.method);
        request_.target(spec_.url.target);
        request_.set(http::field::host, spec_.url.host + ":" + spec_.url.port);
        request_.set(http::field::user_agent, "toast-client");
        request_.set(http::field::connection, "close");
        for (const auto& [name, value] : spec_.headers)
            request_.set(name, value);
        request_.body() = spec_.body;
        request_.prepare_payload();
        stream_.expires_after(spec_.timeout);
        stream_.async_write(request_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
            if (ec) return self->finish("cannot send the request: " + ec.message());
            self->stream_.expires_after(self->spec_.timeout);
            self->stream_.async_read(self->buffer_, self->parser_,
                                     [self](beast::error_code ec2, std::size_t) { self->on_read(ec2); });
        });
    }

    void on_read(beast::error_code ec) {
        if (ec == http::error::body_limit)
            return finish("the answer is larger than " + std::to_string(spec_.body_limit) + " bytes");
        if (ec == beast::error::timeout) return finish("no complete answer within the time limit");
        if (ec) return finish("cannot read the answer: " + ec.message());
        HttpAnswer a;
        a.status = static_cast<int>(parser_.get().result_int());
        a.reason = std::string(parser_.get().reason());
        a.body = std::move(parser_.get().body());
        complete(std::move(a));
    }

    void finish(const std::string& error) {
        HttpAnswer a;
        a.error = error;
        complete(std::move(a));
    }

    void complete(HttpAnswer a) {
        stream_.close();
        if (done_) {
            auto done = std::move(done_);
            done_ = nullptr;
            done(std::move(a));
        }
    }

    HttpRequestSpec spec_;
    HttpStream stream_;
    std::function<void(HttpAnswer)> done_;
    http::request<http::string_body> request_;
    beast::flat_buffer buffer_;
    http::response_parser<http::string_body> parser_;
};

}  // namespace

void http_request(boost::asio::io_context& io, HttpRequestSpec spec,
                  std::shared_ptr<boost::asio::ssl::context> tls, std::function<void(HttpAnswer)> done) {
    std::make_shared<Exchange>(io, std::move(spec), std::move(tls), std::move(done))->start();
}

}  // namespace toast::client
