// The one timer type of the library: it runs on redlock::clock, so a
// suspended machine does not stretch timeouts or lock validity.
#pragma once

#include <redlock/clock.hpp>
#include <redlock/detail/asio.hpp>
#include "detail/executor.hpp"

#include <boost/asio/basic_waitable_timer.hpp>

namespace redlock::detail {

using timer =
    boost::asio::basic_waitable_timer<redlock::clock, boost::asio::wait_traits<redlock::clock>,
                                      strand_type>;

}  // namespace redlock::detail
