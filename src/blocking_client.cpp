#include <redlock/blocking_client.hpp>
#include <redlock/detail/exclusive_outcome.hpp>

#include <fmt/format.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/system/system_error.hpp>

#include <optional>
#include <thread>
#include <tuple>

namespace redlock {
namespace {

// Starts an operation with the token it is given and blocks until it
// completes: its error into `ec`, its result returned.
template <class Result, class Start>
Result wait_for(Start start, error_code& ec) {
  auto done = start(boost::asio::use_future(
      [](error_code e, Result r) { return std::pair<error_code, Result>(e, std::move(r)); }));
  auto [error, result] = done.get();
  ec = error;
  return std::move(result);
}

void throw_if(const error_code& ec, const char* what) {
  if (ec) throw boost::system::system_error(ec, what);
}

/// As throw_if, naming in what() each node that refused or failed `failed`.
void throw_if(const error_code& ec, const char* what, const lock& failed, const client& c) {
  if (!ec) return;
  const auto nodes = describe_nodes(failed.nodes(), c.config().nodes);
  if (nodes.empty()) throw boost::system::system_error(ec, what);
  throw boost::system::system_error(ec, fmt::format("{} ({})", what, nodes));
}

}  // namespace

struct detail::blocking_runner {
  boost::asio::io_context context{1};
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work{
      context.get_executor()};
  std::optional<client> async;
  std::thread thread;

  explicit blocking_runner(client_config config) {
    async.emplace(context.get_executor(), std::move(config));
    thread = std::thread([this] { context.run(); });
  }

  ~blocking_runner() {
    async.reset();  // posts the close, which ends all the client's work
    work.reset();
    thread.join();
  }
};

blocking_client::blocking_client(client_config config)
    : runner_(std::make_shared<detail::blocking_runner>(std::move(config))) {}

blocking_client::~blocking_client() = default;

client& blocking_client::async_client() noexcept { return *runner_->async; }

lock blocking_client::acquire(std::string resource, const lock_options& options, error_code& ec) {
  return wait_for<lock>(
      [&](auto token) {
        return runner_->async->async_acquire(std::move(resource), options, std::move(token));
      },
      ec);
}

lock blocking_client::acquire(std::string resource, const lock_options& options) {
  error_code ec;
  auto result = acquire(std::move(resource), options, ec);
  throw_if(ec, "redlock: acquire", result, async_client());
  return result;
}

lock blocking_client::acquire_all(std::vector<std::string> resources, const lock_options& options,
                                  error_code& ec) {
  return wait_for<lock>(
      [&](auto token) {
        return runner_->async->async_acquire_all(std::move(resources), options, std::move(token));
      },
      ec);
}

lock blocking_client::acquire_all(std::vector<std::string> resources, const lock_options& options) {
  error_code ec;
  auto result = acquire_all(std::move(resources), options, ec);
  throw_if(ec, "redlock: acquire_all", result, async_client());
  return result;
}

scoped_lock blocking_client::acquire_all_scoped(std::vector<std::string> resources,
                                                const lock_options& options,
                                                const keep_options& keep) {
  lock attempt;
  error_code ec;
  auto scope = acquire_kept(std::move(resources), options, keep, attempt, ec);
  throw_if(ec, "redlock: acquire_all_scoped", attempt, async_client());
  return scope;
}

scoped_lock blocking_client::acquire_kept(std::vector<std::string> resources,
                                          const lock_options& options, const keep_options& keep,
                                          lock& attempt, error_code& ec) {
  auto done = async_acquire_kept(async_client(), std::move(resources), options, keep,
                                 boost::asio::use_future([](error_code e, lock tried, keeper kept) {
                                   return std::make_tuple(e, std::move(tried), std::move(kept));
                                 }));
  auto [error, tried, kept] = done.get();
  ec = error;
  if (ec) {
    attempt = std::move(tried);
    return {};
  }
  attempt = tried;
  return scoped_lock(runner_, std::move(tried), std::move(kept));
}

std::optional<lock> blocking_client::try_acquire(std::string resource,
                                                 const lock_options& options) {
  error_code ec;
  auto result = acquire(std::move(resource), options, ec);
  if (ec == errc::not_acquired) return std::nullopt;
  throw_if(ec, "redlock: acquire", result, async_client());
  return result;
}

std::optional<lock> blocking_client::try_acquire_within(std::string resource, milliseconds wait,
                                                        lock_options options) {
  return try_acquire(std::move(resource), waiting_up_to(std::move(options), wait));
}

std::optional<scoped_lock> blocking_client::try_acquire_scoped_within(std::string resource,
                                                                      milliseconds wait,
                                                                      lock_options options,
                                                                      const keep_options& keep) {
  lock attempt;
  error_code ec;
  auto scope = acquire_kept({std::move(resource)}, waiting_up_to(std::move(options), wait), keep,
                            attempt, ec);
  if (ec == errc::not_acquired) return std::nullopt;
  throw_if(ec, "redlock: try_acquire_scoped_for", attempt, async_client());
  return scope;
}

std::size_t blocking_client::release(const lock& held, error_code& ec) {
  return wait_for<std::size_t>(
      [&](auto token) { return runner_->async->async_release(held, std::move(token)); }, ec);
}

std::size_t blocking_client::release(const lock& held) {
  error_code ec;
  const auto removed = release(held, ec);
  throw_if(ec, "redlock: release");
  return removed;
}

lock blocking_client::extend(const lock& held, milliseconds ttl, error_code& ec) {
  return wait_for<lock>(
      [&](auto token) { return runner_->async->async_extend(held, ttl, std::move(token)); }, ec);
}

lock blocking_client::extend(const lock& held, milliseconds ttl) {
  error_code ec;
  auto result = extend(held, ttl, ec);
  throw_if(ec, "redlock: extend");
  return result;
}

resource_status blocking_client::status(std::string resource, milliseconds timeout,
                                        error_code& ec) {
  return wait_for<resource_status>(
      [&](auto token) {
        return runner_->async->async_status(std::move(resource), timeout, std::move(token));
      },
      ec);
}

resource_status blocking_client::status(std::string resource, milliseconds timeout) {
  error_code ec;
  auto result = status(std::move(resource), timeout, ec);
  throw_if(ec, "redlock: status");
  return result;
}

scoped_lock blocking_client::acquire_scoped(std::string resource, const lock_options& options,
                                            const keep_options& keep) {
  lock attempt;
  error_code ec;
  auto scope = acquire_kept({std::move(resource)}, options, keep, attempt, ec);
  throw_if(ec, "redlock: acquire_scoped", attempt, async_client());
  return scope;
}

void blocking_client::finish_exclusive(scoped_lock& scope) {
  const auto lost = scope.lost_reason();
  error_code released;
  scope.release(released);
  const auto outcome = detail::judge_exclusive({}, lost, released);
  throw_if(outcome.error, outcome.what);
}

scoped_lock::~scoped_lock() {
  error_code ignored;
  release(ignored);
}

scoped_lock::scoped_lock(scoped_lock&& other) noexcept
    : runner_(std::move(other.runner_)),
      held_(std::exchange(other.held_, lock{})),
      kept_(std::move(other.kept_)) {}

scoped_lock& scoped_lock::operator=(scoped_lock&& other) noexcept {
  if (this != &other) {
    error_code ignored;
    release(ignored);
    runner_ = std::move(other.runner_);
    held_ = std::exchange(other.held_, lock{});
    kept_ = std::move(other.kept_);
  }
  return *this;
}

std::size_t scoped_lock::release(error_code& ec) {
  ec = {};
  if (kept_.empty() || !runner_) return 0;
  const auto removed =
      wait_for<std::size_t>([&](auto token) { return kept_.async_release(std::move(token)); }, ec);
  kept_ = keeper{};
  held_ = lock{};
  runner_.reset();  // maybe the last owner: stops the thread
  return removed;
}

std::size_t scoped_lock::release() {
  error_code ec;
  const auto removed = release(ec);
  throw_if(ec, "redlock: release");
  return removed;
}

}  // namespace redlock
