// The client core's registry of lock watchers, without connecting: a core
// that is never started opens no socket.
#include "detail/client_core.hpp"
#include "detail/lock_state.hpp"

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

using namespace redlock::detail;

namespace {

/// A watcher that unwatches itself when told, as a keeper that finished at
/// once would.
struct leaving_watcher final : registered_operation {
  client_core* core = nullptr;
  const lock_state* lock = nullptr;
  int told = 0;
  void client_closed() override {}
  void lock_changed() override {
    ++told;
    core->unwatch(lock, this);
  }
};

std::shared_ptr<lock_state> some_lock() {
  return std::make_shared<lock_state>(1, std::vector<std::string>{"r"}, held_keys{{"r"}, {}}, "t",
                                      std::chrono::milliseconds(1000), std::chrono::milliseconds(0),
                                      redlock::clock::now(), 0);
}

}  // namespace

TEST_CASE("client_core tells each watcher of a lock once, even one that unwatches while told",
          "[unit][client_core]") {
  boost::asio::io_context io;
  redlock::client_config config;
  config.nodes.resize(3);
  config.nodes[1].port = 6380;
  config.nodes[2].port = 6381;
  client_core core(io.get_executor(), config);
  const auto lock = some_lock();
  const auto other = some_lock();
  leaving_watcher a, b, elsewhere;
  for (auto* w : {&a, &b}) {
    w->core = &core;
    w->lock = lock.get();
    core.watch(lock.get(), w);
  }
  elsewhere.core = &core;
  elsewhere.lock = other.get();
  core.watch(other.get(), &elsewhere);

  core.lock_changed(lock.get());
  CHECK(a.told == 1);
  CHECK(b.told == 1);
  CHECK(elsewhere.told == 0);
  core.lock_changed(lock.get());  // both left
  CHECK(a.told == 1);
  CHECK(b.told == 1);
  core.lock_changed(other.get());
  CHECK(elsewhere.told == 1);
}
