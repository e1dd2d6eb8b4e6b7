// What every operation works with: the client's strand, its node pool (one
// connection per node), key naming, the wake-up hub and the registry of
// running operations (so that closing the client can end them).
#pragma once

#include "detail/commands.hpp"
#include "detail/deadline_queue.hpp"
#include "detail/fence_recovery.hpp"
#include "detail/keep_schedule.hpp"
#include "detail/node_pool.hpp"
#include "detail/timer.hpp"
#include "detail/wakeup_hub.hpp"

#include <redlock/config.hpp>
#include <redlock/observer.hpp>

#include <boost/intrusive/list.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace redlock::detail {

/// A running operation, as the client core sees it: a link in the core's
/// list of running operations (intrusive, so enrolling allocates nothing;
/// auto-unlinking, so one that goes away leaves the list by itself).
class registered_operation : public boost::intrusive::list_base_hook<
                                 boost::intrusive::link_mode<boost::intrusive::auto_unlink>> {
 public:
  /// The client is closing: complete with operation_aborted, now or (an
  /// acquire with an attempt in flight) once its undo is queued and failed.
  virtual void client_closed() = 0;
  /// A lock it watches (client_core::watch) was found lost or its release
  /// began: a keeper must not wait for its next planned wake-up to learn it.
  virtual void lock_changed() {}

 protected:
  ~registered_operation() = default;
};

struct lock_state;

class client_core {
 public:
  client_core(boost::asio::any_io_executor executor, client_config config);

  /// Starts connecting to every node (posted onto the strand).
  void start(const std::shared_ptr<client_core>& self);
  /// Closes every connection and ends every operation
  /// (registered_operation::client_closed); idempotent.
  void close();
  /// The executor's context is shutting down without having run close():
  /// drops every queued callback, without calling it, so that the
  /// operations they hold (which hold this) can be freed.
  void abandon() noexcept;
  bool closed() const noexcept { return closed_; }

  strand_type& strand() noexcept { return strand_; }
  const client_config& config() const noexcept { return config_; }
  /// The installed observer, or null.
  redlock::observer* observer() const noexcept { return config_.observer.get(); }
  std::size_t size() const noexcept { return pool_.size(); }
  std::size_t quorum() const noexcept { return size() / 2 + 1; }
  /// The connections: what operations send through.
  node_pool& pool() noexcept { return pool_; }
  wakeup_hub& wakeups() noexcept { return wakeups_; }
  keep_schedule& keepers() noexcept { return keepers_; }
  /// The one timer of the acquires' and releases' deadlines.
  deadline_queue& deadlines() noexcept { return deadlines_; }
  /// Fencing-state losses seen on the nodes (docs/fencing.md).
  loss_watch& fence_losses() noexcept { return losses_; }
  /// A node answered "lost <id>" to a fenced request: starts its re-seed
  /// once the wait is over.
  void fence_loss_seen(const std::shared_ptr<client_core>& self, std::size_t node,
                       std::string_view id);
  void log(log_level level, std::string_view line) const { log_(level, line); }
  std::string key_for(std::string_view resource) const;
  /// The keys an acquisition of `resources` holds (see held_keys).
  held_keys keys_for(const std::vector<std::string>& resources, std::string owner) const;
  /// Random per client: the payload of its release announcements.
  const std::string& id() const noexcept { return id_; }
  /// Unique in the process: which client a lock handle belongs to.
  std::uint64_t serial() const noexcept { return serial_; }

  /// Adds `op` to the running operations (once); withdraw() takes it out,
  /// and so does its destruction.
  void enroll(registered_operation* op) noexcept;
  void withdraw(registered_operation* op) noexcept;

  /// `watcher` (a keeper) is told (registered_operation::lock_changed) when
  /// `lock` is found lost or its release begins, until unwatch().
  void watch(const lock_state* lock, registered_operation* watcher);
  void unwatch(const lock_state* lock, registered_operation* watcher) noexcept;
  /// `lock` was just found lost, or its release began: tells its watchers.
  void lock_changed(const lock_state* lock);

 private:
  static client_config checked(client_config config);
  static connection_settings settings_of(const client_config& config);
  /// A command connection's settings: settings_of and the admission's.
  connection_settings node_settings(std::size_t node,
                                    const std::shared_ptr<server_registry>& servers) const;
  /// The request timeout of the fencing state's reads and re-seeds.
  std::chrono::milliseconds fence_request_timeout() const;

  strand_type strand_;
  client_config config_;
  std::string id_;
  std::uint64_t serial_;
  node_pool pool_;
  wakeup_hub wakeups_;
  keep_schedule keepers_;
  deadline_queue deadlines_;
  logger log_;
  loss_watch losses_;
  boost::intrusive::list<registered_operation, boost::intrusive::constant_time_size<false>>
      running_;
  std::unordered_multimap<const lock_state*, registered_operation*> watchers_;
  bool closed_ = false;
};

}  // namespace redlock::detail
