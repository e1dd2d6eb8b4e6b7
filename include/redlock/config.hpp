// Configuration of a redlock client and options of a lock operation.
#pragma once

#include <redlock/error.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

namespace redlock {

using std::chrono::milliseconds;

class observer;

/// TLS towards a node (a Redis 6+ built with TLS, listening on --tls-port).
/// Certificates are verified by default: the node's chain against the CA
/// files (or the system's trust store when none is given) and its name
/// against server_name, or else the node's host (DNS name or IP address).
struct tls_config {
  bool enabled = false;     ///< TLS on.
  std::string ca_file;      ///< PEM file of trusted CAs.
  std::string ca_dir;       ///< Directory of trusted CAs (c_rehash layout).
  std::string cert_file;    ///< Client certificate chain (PEM), for mutual TLS.
  std::string key_file;     ///< Its private key (PEM); needed with cert_file.
  std::string server_name;  ///< Name to verify and send as SNI; empty: the host.
  /// False turns verification off: anyone on the path could pose as the
  /// node. Logged as a warning for every node it applies to.
  bool verify = true;
};

/// One independent Redis master.
struct node_config {
  std::string host = "127.0.0.1";  ///< DNS name or IP address.
  std::uint16_t port = 6379;       ///< TCP port (the TLS port when TLS is on).
  std::string username;            ///< ACL user; empty means AUTH with the password only.
  std::string password;            ///< Empty means no AUTH.
  int database = 0;                ///< SELECTed after connecting when not 0.
  /// TLS for this node; its empty fields are taken from client_config::tls,
  /// and client_config::tls.enabled turns it on for every node.
  tls_config tls{};
};

/// Capped exponential backoff with jitter, used to reconnect to a node.
struct reconnect_policy {
  milliseconds initial_delay{50};  ///< Delay before the first reconnect.
  milliseconds max_delay{2000};    ///< Cap of the doubling delay.
  double jitter = 0.5;             ///< Fraction of the delay that is randomised, in [0, 1].
};

/// How a failed acquire is retried. Every failed attempt is first released on
/// all nodes; the next attempt starts after a randomised delay.
struct retry_policy {
  /// How the delay between attempts grows.
  enum class backoff {
    fixed,        ///< base_delay every time.
    exponential,  ///< base_delay doubled per attempt, at most max_delay.
  };

  /// Attempts in all when max_attempts is left unset and no
  /// lock_options::wait_timeout is given.
  static constexpr unsigned default_max_attempts = 3;

  backoff mode = backoff::fixed;  ///< Fixed or exponential delays.
  /// Attempts in all, the first one included; 0 means no limit other than the
  /// caller's wait deadline (lock_options::wait_timeout) and
  /// lock_options::unreachable_timeout. Unset (the default): a set
  /// wait_timeout is the limit (attempts go on until the wait ends), and
  /// without one, default_max_attempts. See effective_max_attempts().
  std::optional<unsigned> max_attempts{};
  milliseconds base_delay{100};  ///< Fixed delay, or the first exponential delay.
  milliseconds max_delay{1000};  ///< Cap of the exponential delay.
  double jitter = 0.5;           ///< Delay is scaled by a random factor in [1-jitter, 1+jitter].
  /// While the resource is held elsewhere, retry as soon as its holder's
  /// release is announced (pub/sub on every node) instead of waiting out the
  /// delay, which then only bounds the wait (a holder that crashed announces
  /// nothing; its key expires).
  bool wake_on_release = true;

  /// One attempt, no retry.
  static retry_policy try_once() {
    return {backoff::fixed, 1, milliseconds{0}, milliseconds{0}, 0.0, false};
  }
  /// `attempts` in all (0: until the wait timeout), `delay` apart.
  static retry_policy fixed(milliseconds delay, unsigned attempts, double jitter = 0.5) {
    return {backoff::fixed, attempts, delay, delay, jitter, true};
  }
  /// `attempts` in all (0: until the wait timeout), `base` apart at first,
  /// doubling up to `cap`.
  static retry_policy exponential(milliseconds base, milliseconds cap, unsigned attempts,
                                  double jitter = 0.5) {
    return {backoff::exponential, attempts, base, cap, jitter, true};
  }
};

/// The enumerator's name: "fixed", "exponential"; "unknown" for a value
/// that is no enumerator.
std::string_view to_string(retry_policy::backoff mode) noexcept;

/// Options of one acquire.
struct lock_options {
  milliseconds ttl{10000};  ///< Expiry of the key on each node.
  /// Per-node request timeout of the acquire, and of the lock's extends and
  /// release (when shorter than the TTL they use); 0 picks ttl/20, at least
  /// 1 ms and at most 500 ms.
  milliseconds request_timeout{0};
  /// Success needs at least this much validity left when the quorum is reached
  /// (and always more than zero).
  milliseconds min_validity{0};
  retry_policy retry{};  ///< How a failed attempt is retried.
  /// Give up once this much time has passed since the call; 0 means no limit
  /// other than retry.max_attempts. No attempt starts after it; while the
  /// resource is held elsewhere (and retry.wake_on_release), the acquire
  /// listens for the holder's release until then rather than giving up when
  /// the next retry delay would end past it. A set wait is the limit:
  /// unless retry.max_attempts is set explicitly, attempts go on until the
  /// wait ends (errc::not_acquired when the resource is still held then).
  milliseconds wait_timeout{0};
  /// Give up with the last attempt's error (errc::quorum_unreachable) once
  /// no attempt has been answered by a quorum of nodes (granted or held
  /// elsewhere) for this long, counted from the call or from the last
  /// attempt a quorum answered; the attempt that may end the bound starts
  /// no later than it, so the acquire ends within about this plus one
  /// request timeout. 0 means no such bound (the other limits still
  /// apply). Waiting for a resource held elsewhere is not bounded by it;
  /// waiting for nodes that cannot answer is. Independently of it, an
  /// attempt sunk by failures that waiting cannot heal
  /// (is_permanent_node_failure(): credentials, certificates, a refused
  /// topology) on more nodes than the quorum can spare ends the acquire at
  /// once.
  milliseconds unreachable_timeout{0};
  /// Cancels the acquire when stop is requested (from any thread): a wait
  /// ends at once, an attempt in flight is undone first; the acquire then
  /// completes with boost::asio::error::operation_aborted.
  std::stop_token stop{};
  /// Empty (the default): a plain lock, a `SET NX PX` key holding a fresh
  /// token, which nobody can take while it is held, its owner included.
  /// Otherwise the lock is reentrant for this owner id: an acquire by the
  /// same owner id succeeds while the owner holds it, each acquisition is
  /// released on its own (or expires with its own TTL), and the keys go
  /// when the last one does. Anyone presenting the same id re-enters, so it
  /// must be unique per logical holder across every host: not a bare pid
  /// or thread id (they repeat across hosts and containers), nor a job id
  /// that may be delivered twice; e.g. a random id made once per holder.
  /// See docs/usage.md, "Reentrant locks", for what the nodes keep and what
  /// happens when a minority disagrees.
  std::string reentrant_owner{};
  /// Fencing (docs/fencing.md): the acquisition also gets
  /// a 64-bit fencing token per resource (lock::fence(), lock::fences()),
  /// larger than the token of every fenced acquisition of the resource that
  /// completed before this one began, whatever the timing (pauses, expired
  /// leases, late or lost messages, a minority of nodes down or losing
  /// their data). The protected resource refuses requests that carry a
  /// token older than one it has seen (include/redlock/fencing.hpp). Costs
  /// one round trip when the nodes agree, two when they do not. The TTL may
  /// be at most client_config::max_fenced_ttl. A reentrant acquisition
  /// returns the token of the hold it re-enters, or a larger one when the
  /// nodes' records of the hold differ (never a smaller one; write with the
  /// latest: docs/fencing.md); extensions keep it.
  bool fenced = false;
  /// Lock-delay: after the lock lapses without a release (its holder
  /// crashed, paused, or lost the nodes), nobody acquires it before this
  /// much more time has passed; a release frees it at once. The keys expire
  /// ttl + lock_delay after each acquire or extension, while the validity
  /// (and the keeper's lost-lock signal) still counts from the TTL alone,
  /// so a paused holder has lock_delay to notice before anyone else acts.
  /// Reentrant locks: each hold expires after the TTL alone and the keys
  /// live lock_delay past the owner's longest hold; after the last live
  /// hold lapsed, nobody, its owner included, acquires or re-enters it for
  /// lock_delay (docs/usage.md, "Lock-delay"). Use one lock_delay for all
  /// acquisitions of an owner. 0 = none.
  milliseconds lock_delay{0};
};

/// How a keeper keeps a lock extended while work runs (auto-extension), and
/// when it gives the lost-lock signal.
///
/// The keeper extends when `extend_at` of the validity is left, retries a
/// failed extension every ttl/20 (1 ms to 500 ms) while time is left, and
/// gives the lost-lock signal once, with the reason, when:
/// - an extension finds the lock lost on a majority (errc::lock_lost);
/// - no extension has landed `lost_margin` before the validity ends
///   (errc::lock_expiring), so the work can stop while the lock still holds;
/// - a cap stops the extensions (errc::hold_limit_reached), also
///   `lost_margin` before the validity ends, or when max_hold is reached;
/// - the lock is released through another copy of its handle
///   (errc::lock_released), or the client is closed (errc::connection_closed).
///
/// The signal needs the client's executor to run on time: work that blocks
/// that executor delays it (keeper::lost() still turns true on time).
struct keep_options {
  /// TTL of each extension; 0 means the lock's own TTL.
  milliseconds ttl{0};
  /// Extend when this fraction of the validity is left; in (0, 0.9].
  double extend_at = 1.0 / 3;
  /// Signal the loss this long before the validity ends when no extension
  /// has landed by then; 0 means a tenth of the TTL (at most half of
  /// extend_at of the validity). Smaller than extend_at of the validity, so
  /// an extension has time to land first.
  milliseconds lost_margin{0};
  /// Extensions never reach past this long after the keeper's start (the
  /// last ones are shortened to end there), and the signal fires there at
  /// the latest. A lock whose validity already reaches past it keeps that
  /// validity on the nodes. 0 means no cap.
  milliseconds max_hold{0};
  /// Extensions that may land in all; 0 means no cap. A process stuck in its
  /// work cannot keep a capped lock forever.
  unsigned max_extensions = 0;
  /// Called once with the reason when the lost-lock signal fires, through
  /// the client's executor.
  std::function<void(error_code)> on_lost{};
};

enum class log_level { debug, info, warning, error };

/// The enumerator's name: "debug", "info", "warning", "error"; "unknown"
/// for a value that is no enumerator.
std::string_view to_string(log_level level) noexcept;

/// Receives the library's log lines, each a sentence without a prefix. The
/// default writes warnings and errors to stderr, after "redlock: ".
using log_sink = std::function<void(log_level, std::string_view)>;

/// A node setting that weakens the lock, found by the check each node gets
/// when it connects (client_config::warn_without_aof).
enum class node_risk {
  replicas,         ///< The master has replicas: a failover can forget locks.
  evicting_policy,  ///< maxmemory-policy may evict lock keys.
  no_aof,           ///< appendonly no: a restart forgets the node's locks.
};

/// The name used in logs: "replicas", "evicting_policy", "no_aof".
std::string_view to_string(node_risk risk) noexcept;

/// One risky setting of one node (see client_config::on_risk).
struct node_risk_report {
  node_risk risk;                ///< Which setting.
  std::size_t node;              ///< Index in client_config::nodes.
  std::string_view endpoint;     ///< "host:port".
  std::string_view explanation;  ///< What was found and why it matters (a sentence).
};

/// Receives risky node settings instead of the log (client_config::on_risk).
using risk_sink = std::function<void(const node_risk_report&)>;

/// The longest TTL, timeout or delay accepted: longer ones are refused
/// (errc::invalid_ttl, errc::invalid_retry_policy, config_error) rather than
/// overflowing the clocks they are added to. A lock held that long after
/// its holder crashed would be an outage, not a lock.
inline constexpr milliseconds max_duration = std::chrono::hours(24 * 365);

/// The most nodes a client may have (per-node facts of a lock fit one word).
inline constexpr std::size_t max_nodes = 64;
/// The most resources one acquire_all takes: its script runs on each node
/// as one blocking step (about 14 us per key), so a set far larger would
/// stall every other client of the node.
inline constexpr std::size_t max_resources = 256;

/// Configuration of a client.
struct client_config {
  std::vector<node_config> nodes;  ///< The N independent masters (odd, at least 3).
  /// Prepended to every resource name: the key in Redis is prefix + resource.
  std::string key_prefix;
  /// Clock drift allowance: drift = ttl * drift_factor + 2 ms.
  double drift_factor = 0.01;
  /// Bounds a connection's set-up: connect, TLS, AUTH/SELECT, the first check.
  milliseconds connect_timeout{1000};
  /// A node that owes replies and sends nothing for this long is
  /// disconnected and reconnected, so a silent network partition cannot
  /// hold commands (and the connection) forever.
  milliseconds stall_timeout{3000};
  reconnect_policy reconnect{};  ///< Backoff between reconnects to a node.
  /// Each node is checked with INFO when it connects: a replica, a node in
  /// cluster mode, or a server already connected as another node is
  /// refused (its operations fail with errc::replica_node,
  /// errc::cluster_node or errc::same_server); an eviction policy that can
  /// drop lock keys, or a replica attached to the node, is logged as a
  /// warning. So is `appendonly no`, unless this is false: turn it off when
  /// the nodes run without AOF on purpose and restart only after the
  /// longest TTL (docs/safety.md, "Topology checks").
  bool warn_without_aof = true;
  /// Where those risky settings go. Empty (the default): each is logged as
  /// a warning, once per node and finding, naming the node (the one about
  /// AOF also names warn_without_aof). Set: each goes here instead, as
  /// structured data, so that the application can say it in its own terms
  /// (once for all nodes, naming its own switch). Called on the client's
  /// strand, like `log`; must not throw.
  risk_sink on_risk{};
  /// The longest TTL a fenced acquire (lock_options::fenced) may use. A
  /// node that lost its fencing counters (a restart, FLUSHALL, eviction) is
  /// left out of fenced acquires until it has been re-seeded from a
  /// majority of the other nodes, which happens only once this long (times
  /// 1 + drift_factor, plus a request timeout) has passed since the loss was
  /// seen: every fenced acquire that may have counted the node's answers
  /// from before the loss has then ended. Every client of the same nodes
  /// must use the same value: any client may be the one that re-seeds, and
  /// its wait covers only fenced TTLs up to its own value, so a client with
  /// a smaller value than another's longest fenced TTL breaks the fencing
  /// guarantee (a larger value only waits longer). The first fenced acquire on
  /// nodes that never had fencing state waits this out too (the nodes
  /// cannot tell a fresh start from a loss): it fails with
  /// errc::quorum_unreachable (each node errc::fence_state_lost) unless its
  /// wait_timeout is longer.
  milliseconds max_fenced_ttl{10000};
  /// TLS defaults for every node: `enabled` turns TLS on for all of them;
  /// a node's own non-empty fields override these (a node listed as
  /// "rediss://host:port" has TLS on with these settings).
  tls_config tls{};
  /// Where log lines go, each a sentence without a prefix (e.g. "node
  /// h:1: connection lost: ..."); empty: warnings and errors to stderr,
  /// each after "redlock: ".
  log_sink log{};
  /// Hears about every operation, node answer, retry, wait, lost lock and
  /// connection change (see observer.hpp); none by default.
  std::shared_ptr<redlock::observer> observer{};
};

/// Thrown by the client's constructor for an invalid configuration; code()
/// says which rule was broken, what() also names the offending node.
class config_error : public std::invalid_argument {
 public:
  /// `what` names the problem and the node.
  config_error(errc code, const std::string& what) : std::invalid_argument(what), code_(code) {}
  /// The rule that was broken.
  error_code code() const noexcept { return make_error_code(code_); }

 private:
  errc code_;
};

/// Parses "host:port" ("[v6addr]:port" for IPv6), optionally prefixed with
/// "redis://" or "rediss://" (TLS on); blanks (spaces, tabs, line ends)
/// around it are ignored. Throws config_error (errc::invalid_node) naming
/// the bad text.
node_config parse_node(std::string_view text);
/// The TLS settings node `node` uses: its own, completed by the client's.
tls_config effective_tls(const client_config& config, const node_config& node);
/// Parses a comma-separated list of nodes as parse_node does, so
/// "a:6379, b:6379" is two nodes (blanks after a comma are ignored).
std::vector<node_config> parse_nodes(std::string_view text);

/// The environment variable nodes_from_env() reads by default.
inline constexpr const char* nodes_env_variable = "REDLOCK_NODES";

/// The node list in environment variable `variable` (REDLOCK_NODES unless
/// told), parsed as parse_nodes does: what the redlock tool uses when it is
/// given no --nodes, so an application and the tool take the same
/// environment. Unset, empty or only blanks: an empty list (the caller
/// decides whether that is an error). Bad content: throws config_error
/// (errc::invalid_node) naming the variable and the bad node. Reads the
/// environment with std::getenv: not safe against a concurrent setenv.
std::vector<node_config> nodes_from_env(const char* variable = nodes_env_variable);

/// Checks a client configuration; throws config_error naming the problem.
/// Returns the warnings (even or small N) that the client logs, as log
/// lines are: without a prefix.
std::vector<std::string> validate(const client_config& config);

/// Checks one acquire's arguments; returns the errc that names the problem.
error_code validate(std::string_view resource, const lock_options& options, double drift_factor);
/// The same for a multi-resource acquire: also errc::no_resources,
/// errc::too_many_resources and errc::duplicate_resource.
error_code validate(const std::vector<std::string>& resources, const lock_options& options,
                    double drift_factor);

/// Checks keep options for a lock of TTL `lock_ttl`; returns
/// errc::invalid_keep_options when one is out of range.
error_code validate(const keep_options& options, milliseconds lock_ttl, double drift_factor);

/// The request timeout actually used for these options.
milliseconds effective_request_timeout(const lock_options& options) noexcept;

/// The attempts an acquire with these options makes at most (0: no limit
/// but the wait, unreachable_timeout and cancellation): retry.max_attempts
/// when set, else 0 with a wait_timeout and retry_policy::default_max_attempts
/// without.
unsigned effective_max_attempts(const lock_options& options) noexcept;

/// waiting_up_to's "no limit": wait until acquired, cancelled or out of
/// nodes (lock_options::unreachable_timeout).
inline constexpr milliseconds wait_forever = milliseconds::max();

/// `options` made to wait for a held resource up to `wait`, attempting
/// again as soon as its holder's release is announced: `wait` <= 0 makes
/// one attempt (options.retry, still validated, with max_attempts 1);
/// wait_forever attempts until acquired; otherwise until `wait` has passed
/// since the call (a wait longer than max_duration, wait_forever excepted,
/// is refused by the acquire with errc::invalid_retry_policy). The retry
/// delays, which pace the attempts while a crashed holder's key expires,
/// are options.retry's, or the default ones if it has none. How the
/// blocking client's try_acquire_for, leader_election, periodic_job's run
/// lock and `redlock exec --wait` wait.
lock_options waiting_up_to(lock_options options, milliseconds wait);

}  // namespace redlock
