# Builds and runs tests/package's consumer against redlock one way
# (cmake -P, from ctest). Variables:
#   MODE       find_package | find_package_static | pkg_config | subdirectory | deb
#   BUILD_DIR  the project's build directory (installed or packaged from)
#   SOURCE_DIR the project's source directory
#   WORK       a scratch directory (emptied first)
cmake_minimum_required(VERSION 3.20)
set(consumer_dir ${SOURCE_DIR}/tests/package)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

# The consumer must print the quorum and an error message.
function(check_consumer_output)
  if(NOT last_output MATCHES "quorum 2 of 3\n.*the resource is held by another owner")
    message(FATAL_ERROR "unexpected consumer output:\n${last_output}")
  endif()
endfunction()

# Configures, builds and runs the consumer with CMake.
function(build_consumer name)
  run(${CMAKE_COMMAND} -S ${consumer_dir} -B ${WORK}/${name} -DCMAKE_BUILD_TYPE=Release ${ARGN})
  run(${CMAKE_COMMAND} --build ${WORK}/${name} -j2)
  run(${WORK}/${name}/consumer)
  check_consumer_output()
endfunction()

# An installed or unpacked prefix holds the headers, both libraries, the
# CMake package, the pkg-config file and nothing private.
function(check_prefix prefix libdir)
  foreach(expected include/redlock/redlock.hpp include/redlock/detail/asio.hpp
      ${libdir}/libredlock.a ${libdir}/libredlock.so ${libdir}/cmake/redlock/redlockConfig.cmake
      ${libdir}/cmake/redlock/redlockConfigVersion.cmake ${libdir}/pkgconfig/redlock.pc
      bin/redlock)
    if(NOT EXISTS ${prefix}/${expected})
      message(FATAL_ERROR "not in ${prefix}: ${expected}")
    endif()
  endforeach()
  file(GLOB_RECURSE private RELATIVE ${prefix} ${prefix}/include/*_fsm.hpp ${prefix}/include/*connection.hpp)
  if(private)
    message(FATAL_ERROR "private headers installed: ${private}")
  endif()
endfunction()

if(MODE STREQUAL "subdirectory")
  build_consumer(subdirectory -DREDLOCK_SOURCE_DIR=${SOURCE_DIR} -DCMAKE_UNITY_BUILD=ON)
  return()
endif()

if(MODE STREQUAL "deb")
  run(cpack -G DEB --config ${BUILD_DIR}/CPackConfig.cmake -B ${WORK}/deb)
  file(GLOB debs ${WORK}/deb/redlock_*.deb)
  list(LENGTH debs count)
  if(NOT count EQUAL 1)
    message(FATAL_ERROR "expected one .deb in ${WORK}/deb, found: ${debs}")
  endif()
  run(dpkg-deb --field ${debs} Package Version Depends)
  message(STATUS "${last_output}")
  run(dpkg-deb -x ${debs} ${WORK}/root)
  set(prefix ${WORK}/root/usr)
  file(GLOB config RELATIVE ${prefix} ${prefix}/lib*/cmake/redlock/redlockConfig.cmake
    ${prefix}/lib/*/cmake/redlock/redlockConfig.cmake)
  string(REGEX REPLACE "/cmake/redlock/redlockConfig.cmake$" "" libdir "${config}")
  check_prefix(${prefix} ${libdir})
  run(${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${prefix}/${libdir} ${prefix}/bin/redlock --version)
  if(NOT last_output MATCHES "^redlock [0-9]+\\.[0-9]+\\.[0-9]+")
    message(FATAL_ERROR "the packaged redlock --version printed: ${last_output}")
  endif()
  build_consumer(from-deb -DCMAKE_PREFIX_PATH=${prefix})
  return()
endif()

# The other modes use an installed prefix.
set(prefix ${WORK}/prefix)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
file(GLOB config RELATIVE ${prefix} ${prefix}/lib*/cmake/redlock/redlockConfig.cmake)
string(REGEX REPLACE "/cmake/redlock/redlockConfig.cmake$" "" libdir "${config}")
check_prefix(${prefix} ${libdir})

if(MODE STREQUAL "find_package")
  build_consumer(shared -DCMAKE_PREFIX_PATH=${prefix})
elseif(MODE STREQUAL "find_package_static")
  build_consumer(static -DCMAKE_PREFIX_PATH=${prefix} -DREDLOCK_TARGET=redlock::redlock_static)
elseif(MODE STREQUAL "pkg_config")
  set(ENV{PKG_CONFIG_PATH} ${prefix}/${libdir}/pkgconfig)
  run(pkg-config --cflags --libs redlock)
  string(STRIP "${last_output}" flags)
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run(c++ -std=c++20 ${consumer_dir}/consumer.cpp ${flags} -o ${WORK}/consumer-pc)
  run(${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${prefix}/${libdir} ${WORK}/consumer-pc)
  check_consumer_output()
else()
  message(FATAL_ERROR "unknown MODE '${MODE}'")
endif()
