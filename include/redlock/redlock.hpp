// Everything a user of the library needs.
#pragma once

#include <redlock/blocking_client.hpp>
#include <redlock/client.hpp>
#include <redlock/clock.hpp>
#include <redlock/config.hpp>
#include <redlock/error.hpp>
#include <redlock/lock.hpp>
