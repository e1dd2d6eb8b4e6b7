#include "recorded_client.hpp"

#include <cstdio>
#include <memory>
#include <utility>

namespace redlock::torture {
namespace {

std::int64_t ns(clock::time_point t) { return t.time_since_epoch().count(); }

}  // namespace

std::string reason(const error_code& ec) {
  if (ec.category() == error_category()) {
    return std::string(to_string(static_cast<errc>(ec.value())));
  }
  return ec.message();
}

client_config make_client_config(const std::vector<std::uint16_t>& ports,
                                 const std::filesystem::path& log_file) {
  client_config config;
  for (const auto port : ports) {
    node_config node;
    node.host = "127.0.0.1";
    node.port = port;
    config.nodes.push_back(node);
  }
  config.key_prefix = std::string(key_prefix);
  // Plans run without AOF on purpose (some break A3 deliberately).
  config.warn_without_aof = false;
  std::shared_ptr<std::FILE> file(std::fopen(log_file.c_str(), "a"), [](std::FILE* f) {
    if (f != nullptr) std::fclose(f);
  });
  // One fprintf per line: stdio locks the stream, so lines never interleave.
  config.log = [file](log_level level, std::string_view text) {
    if (!file) return;
    std::fprintf(file.get(), "%lld %.*s %.*s\n", static_cast<long long>(now_ns()),
                 static_cast<int>(to_string(level).size()), to_string(level).data(),
                 static_cast<int>(text.size()), text.data());
    std::fflush(file.get());
  };
  return config;
}

recorded_client::recorded_client(blocking_client& client, worker_history history)
    : client_(client), history_(history) {}

lock recorded_client::acquire(const std::string& res, const lock_options& options, error_code& ec) {
  auto invoke = make_event(op_kind::acquire, event_type::invoke, res);
  invoke.ttl_ms = options.ttl.count();
  history_.record(std::move(invoke));
  lock held = client_.acquire(res, options, ec);
  if (ec) {
    auto fail = make_event(op_kind::acquire, event_type::fail, res);
    fail.err = reason(ec);
    history_.record(std::move(fail));
    return held;
  }
  auto ok = make_event(op_kind::acquire, event_type::ok, res, held.token());
  ok.deadline = ns(held.validity_deadline());
  ok.fence = static_cast<std::int64_t>(held.fence());
  history_.record(std::move(ok));
  return held;
}

lock recorded_client::extend(const lock& held, milliseconds ttl, error_code& ec) {
  auto invoke = make_event(op_kind::extend, event_type::invoke, held.resource(), held.token());
  invoke.ttl_ms = ttl.count();
  history_.record(std::move(invoke));
  lock extended = client_.extend(held, ttl, ec);
  if (ec) {
    auto fail = make_event(op_kind::extend, event_type::fail, held.resource(), held.token());
    fail.err = reason(ec);
    history_.record(std::move(fail));
    return extended;
  }
  auto ok = make_event(op_kind::extend, event_type::ok, held.resource(), held.token());
  ok.deadline = ns(extended.validity_deadline());
  history_.record(std::move(ok));
  return extended;
}

void recorded_client::observed_extension(const lock& held) {
  auto invoke = make_event(op_kind::extend, event_type::invoke, held.resource(), held.token());
  invoke.ttl_ms = held.ttl().count();
  history_.record(std::move(invoke));
  auto ok = make_event(op_kind::extend, event_type::ok, held.resource(), held.token());
  ok.deadline = ns(held.validity_deadline());
  history_.record(std::move(ok));
}

std::size_t recorded_client::release(const lock& held, error_code& ec) {
  history_.record(make_event(op_kind::release, event_type::invoke, held.resource(), held.token()));
  const std::size_t removed = client_.release(held, ec);
  auto done = make_event(op_kind::release, ec ? event_type::fail : event_type::ok, held.resource(),
                         held.token());
  if (ec) done.err = reason(ec);
  history_.record(std::move(done));
  return removed;
}

}  // namespace redlock::torture
