// The UDP tracker (BEP 15) socket: receive a datagram, ask TrackerService, send its reply (if any) back to
// the sender. One outstanding receive at a time on the caller's single-threaded io_context; replies are
// sent synchronously, which on a UDP socket only copies into the kernel's send buffer.
#pragma once

#include <array>
#include <cstdint>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>

#include "tracker/io/tracker_service.hpp"

namespace toast::tracker {

class UdpServer {
  public:
    // Binds at once; throws boost::system::system_error when the address cannot be used.
    UdpServer(boost::asio::io_context& ioc, const boost::asio::ip::udp::endpoint& listen,
              TrackerService& service);
    boost::asio::ip::udp::endpoint local_endpoint() const { return socket_.local_endpoint(); }
    void start();
    void stop();

  private:
    void do_receive();

    boost::asio::ip::udp::socket socket_;
    TrackerService& service_;
    boost::asio::ip::udp::endpoint sender_;
    std::array<std::uint8_t, 65536> buffer_{};  // any datagram fits, so none is silently truncated
    bool stopped_ = false;
};

}  // namespace toast::tracker
