// Uses the library as an application would, without a Redis server: a
// configuration from an endpoint list, its validation, a client that is
// made and closed, and an error code's message. It is built without
// BOOST_ASIO_NO_DEPRECATED and uses deprecated Asio names (io_service and
// its post member) on purpose: linking redlock must not take them away.
#include <redlock/redlock.hpp>

#include <boost/asio/io_service.hpp>

#include <iostream>

int main() {
  redlock::client_config config;
  config.nodes = redlock::parse_nodes("127.0.0.1:7001,127.0.0.1:7002,rediss://localhost:7003");
  config.log = [](redlock::log_level, std::string_view) {};
  const auto warnings = redlock::validate(config);
  boost::asio::io_service io;
  {
    redlock::client locks(io.get_executor(), config);
    std::cout << "quorum " << locks.quorum() << " of " << config.nodes.size() << '\n';
    locks.close();
  }
  io.post([] { std::cout << "closed\n"; });
  io.run();
  std::cout << redlock::make_error_code(redlock::errc::not_acquired).message() << '\n';
  return warnings.empty() ? 0 : 1;
}
