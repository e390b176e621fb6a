// One client connection to the operator's server, plain TCP or TLS (https:// URLs), with Beast's timeouts:
// connect (and for TLS the handshake, which verifies the server's certificate against the box's CA and
// its host name), then HTTP/1.1 messages written and read on it. A closed connection is reset() before the
// next connect: an SSL stream cannot be reused. Used by the server fallback's fetcher, the token renewal,
// the telemetry reports and the serve service's torrent downloads.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "client/core/server_request.hpp"

namespace toast::client {

// The TLS context every https:// connection of the box uses: peer verification on, TLS 1.2 or later, the
// CA certificates from `ca_file` (PEM) or, when empty, the system's. Throws std::runtime_error naming the
// file when it cannot be loaded.
std::shared_ptr<boost::asio::ssl::context> make_client_tls(const std::string& ca_file);

class HttpStream {
  public:
    using Handler = std::function<void(boost::beast::error_code)>;

    // `tls` may be null: an https:// URL then fails at connect, saying so.
    HttpStream(boost::asio::io_context& io, ServerUrl url, std::shared_ptr<boost::asio::ssl::context> tls);

    // Resolves, connects and (https) handshakes, each within `timeout`; `done` gets the first error.
    void connect(std::chrono::milliseconds timeout, Handler done);
    // Sets the timeout of the next operation.
    void expires_after(std::chrono::milliseconds timeout) { lowest().expires_after(timeout); }

    template <class Message, class Done>
    void async_write(Message& message, Done&& done) {
        if (tls_)
            boost::beast::http::async_write(*tls_, message, std::forward<Done>(done));
        else
            boost::beast::http::async_write(*plain_, message, std::forward<Done>(done));
    }
    template <class Buffer, class Parser, class Done>
    void async_read(Buffer& buffer, Parser& parser, Done&& done) {
        if (tls_)
            boost::beast::http::async_read(*tls_, buffer, parser, std::forward<Done>(done));
        else
            boost::beast::http::async_read(*plain_, buffer, parser, std::forward<Done>(done));
    }

    // Closes the socket (no TLS close_notify: the HTTP messages are framed, nothing is lost). Pending
    // operations complete with operation_aborted.
    void close();
    // A new stream for the next connect.
    void reset();
    void set_no_delay();
    const ServerUrl& url() const { return url_; }

  private:
    boost::beast::tcp_stream& lowest() { return tls_ ? tls_->next_layer() : *plain_; }

    boost::asio::io_context& io_;
    ServerUrl url_;
    std::shared_ptr<boost::asio::ssl::context> context_;
    boost::asio::ip::tcp::resolver resolver_;
    std::unique_ptr<boost::beast::tcp_stream> plain_;
    std::unique_ptr<boost::beast::ssl_stream<boost::beast::tcp_stream>> tls_;
    // TLS streams replaced by reset(), kept a while: operations aborted by close() may still be on their way
    // out of them.
    std::vector<std::unique_ptr<boost::beast::ssl_stream<boost::beast::tcp_stream>>> retired_;
    std::uint64_t generation_ = 0;  // bumped by close(): completions of an earlier connect are ignored
};

}  // namespace toast::client
