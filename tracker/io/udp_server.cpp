#include "tracker/io/udp_server.hpp"

#include <chrono>
#include <span>

#include <spdlog/spdlog.h>
#include <boost/asio/ip/v6_only.hpp>

#include "tracker/io/asio_address.hpp"

namespace toast::tracker {

namespace asio = boost::asio;
using udp_proto = asio::ip::udp;

UdpServer::UdpServer(asio::io_context& ioc, const udp_proto::endpoint& listen, TrackerService& service)
    : socket_(ioc), service_(service) {
    socket_.open(listen.protocol());
    if (listen.address().is_v6()) socket_.set_option(asio::ip::v6_only(false));
    socket_.bind(listen);
}

void UdpServer::start() {
    do_receive();
}

void UdpServer::stop() {
    stopped_ = true;
    boost::system::error_code ec;
    socket_.close(ec);
}

void UdpServer::do_receive() {
    socket_.async_receive_from(
        asio::buffer(buffer_), sender_, [this](boost::system::error_code ec, std::size_t n) {
            if (stopped_ || ec == asio::error::operation_aborted) return;
            if (!ec) {
                const auto started = std::chrono::steady_clock::now();
                PeerEndpoint source{to_ip(sender_.address()), sender_.port()};
                const bool log = service_.access_log_udp();
                TrackerService::UdpOutcome outcome;
                auto reply = service_.handle_udp(std::span<const std::uint8_t>(buffer_.data(), n), source,
                                                 started, log ? &outcome : nullptr);
                std::size_t sent = 0;
                if (reply) {
                    boost::system::error_code send_ec;
                    sent = socket_.send_to(asio::buffer(*reply), sender_, 0, send_ec);
                    service_.count_sent(true, sent);
                    if (send_ec)
                        spdlog::debug("udp send to {} failed: {}", sender_.address().to_string(),
                                      send_ec.message());
                }
                const auto took = std::chrono::steady_clock::now() - started;
                service_.observe_latency(true, std::chrono::duration<double>(took).count());
                if (log) {
                    const auto peer = source.ip.to_string();
                    service_.access_log()->write(
                        format_access_log(AccessLogEntry{.peer = peer,
                                                         .received = std::chrono::system_clock::now(),
                                                         .request_line = outcome.request,
                                                         .status = static_cast<unsigned>(outcome.status),
                                                         .body_bytes = sent,
                                                         .duration = took}));
                }
            }
            // Errors on an unconnected UDP socket concern one datagram; keep serving the others.
            do_receive();
        });
}

}  // namespace toast::tracker
