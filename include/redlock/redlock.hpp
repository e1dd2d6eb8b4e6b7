// Everything a user of the library needs.
#pragma once

#include <redlock/blocking_client.hpp>
#include <redlock/client.hpp>
#include <redlock/clock.hpp>
#include <redlock/config.hpp>
#include <redlock/error.hpp>
#include <redlock/fencing.hpp>
#include <redlock/keeper.hpp>
#include <redlock/leader.hpp>
#include <redlock/lease_token.hpp>
#include <redlock/lock.hpp>
#include <redlock/observer.hpp>
#include <redlock/periodic.hpp>
#include <redlock/run_exclusive.hpp>
#include <redlock/status.hpp>
