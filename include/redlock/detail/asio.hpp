// Every file includes this before any Boost.Asio header.
#pragma once

// Boost 1.74's awaitable.hpp uses std::exchange without including <utility>;
// with -std=c++20 that fails unless <utility> comes first.
#include <utility>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/execution.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/system/error_code.hpp>
