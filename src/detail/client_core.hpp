// The non-template heart of redlock::client: the node connections and the
// registry of running operations. Everything here runs on one strand.
#pragma once

#include <redlock/config.hpp>
#include <redlock/detail/completion.hpp>
#include "detail/connection.hpp"
#include "detail/logger.hpp"
#include "detail/timer.hpp"
#include "detail/wakeup_hub.hpp"
#include <redlock/lock.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace redlock::detail {

/// An operation that must stop its timers when the client shuts down.
class abortable {
 public:
  virtual void abort() = 0;

 protected:
  ~abortable() = default;
};

class client_core : public std::enable_shared_from_this<client_core> {
 public:
  client_core(boost::asio::any_io_executor executor, client_config config);

  /// Starts connecting to every node (posted onto the strand).
  void start();
  /// Closes every connection and aborts every operation; idempotent.
  void shutdown();
  bool closed() const noexcept { return closed_; }

  strand_type& strand() noexcept { return strand_; }
  const client_config& config() const noexcept { return config_; }
  std::size_t size() const noexcept { return connections_.size(); }
  connection& node(std::size_t i) noexcept { return *connections_[i]; }
  wakeup_hub& wakeups() noexcept { return wakeups_; }
  std::string key_for(std::string_view resource) const;
  /// Random per client: the payload of its release announcements.
  const std::string& id() const noexcept { return id_; }

  void acquire(std::string resource, lock_options options,
               completion<error_code, redlock::lock> done);
  void release(redlock::lock held, completion<error_code, std::size_t> done);
  void extend(redlock::lock held, milliseconds ttl, completion<error_code, redlock::lock> done);

  void enroll(abortable* op) { running_.insert(op); }
  void withdraw(abortable* op) { running_.erase(op); }

 private:
  static client_config checked(client_config config);
  static connection_settings settings_of(const client_config& config);

  strand_type strand_;
  client_config config_;
  std::string id_;
  wakeup_hub wakeups_;
  std::vector<std::shared_ptr<connection>> connections_;
  std::unordered_set<abortable*> running_;
  bool closed_ = false;
};

}  // namespace redlock::detail
