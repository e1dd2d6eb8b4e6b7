# Builds and runs tests/package's consumer against redlock one way
# (cmake -P, from ctest). Variables:
#   MODE       find_package | find_package_static | pkg_config | subdirectory | deb
#   BUILD_DIR  the project's build directory (installed or packaged from)
#   SOURCE_DIR the project's source directory
#   WORK       a scratch directory (emptied first)
#   INSTALL_LIBDIR, LIBRARY_ARCHITECTURE  the build's CMAKE_INSTALL_LIBDIR and
#              CMAKE_LIBRARY_ARCHITECTURE (deb: where the libraries must be)
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

# The consumer must print the quorum, the line of its (deprecated-name)
# io_service::post handler and an error message.
function(check_consumer_output)
  if(NOT last_output MATCHES "quorum 2 of 3\nclosed\n.*the resource is held by another owner")
    message(FATAL_ERROR "unexpected consumer output:\n${last_output}")
  endif()
endfunction()

# Configures, builds and runs the consumer with CMake.
function(build_consumer name)
  run(${CMAKE_COMMAND} -S ${consumer_dir} -B ${WORK}/${name} -DCMAKE_BUILD_TYPE=Release ${ARGN})
  # Only the consumer and what it links: as a subdirectory, the whole
  # project (the tool, both libraries) would be built again otherwise.
  run(${CMAKE_COMMAND} --build ${WORK}/${name} -j2 --target consumer)
  run(${WORK}/${name}/consumer)
  check_consumer_output()
endfunction()

function(require_files root)
  foreach(expected ${ARGN})
    if(NOT EXISTS ${root}/${expected})
      message(FATAL_ERROR "not in ${root}: ${expected}")
    endif()
  endforeach()
endfunction()

function(forbid_files root)
  foreach(unexpected ${ARGN})
    if(EXISTS ${root}/${unexpected} OR IS_SYMLINK ${root}/${unexpected})
      message(FATAL_ERROR "should not be in ${root}: ${unexpected}")
    endif()
  endforeach()
endfunction()

# An installed or unpacked prefix holds the headers, both libraries, the
# CMake package, the pkg-config file, the tool with its gzipped man page,
# and nothing private; redlock-bench only when asked for.
function(check_prefix prefix libdir)
  require_files(${prefix} include/redlock/redlock.hpp include/redlock/detail/asio.hpp
      ${libdir}/libredlock.a ${libdir}/libredlock.so ${libdir}/cmake/redlock/redlockConfig.cmake
      ${libdir}/cmake/redlock/redlockConfigVersion.cmake ${libdir}/pkgconfig/redlock.pc
      bin/redlock share/man/man1/redlock.1.gz)
  forbid_files(${prefix} bin/redlock-bench share/man/man1/redlock.1)
  file(READ ${prefix}/${libdir}/pkgconfig/redlock.pc pc)
  if(pc MATCHES "BOOST_ASIO_NO_DEPRECATED")
    message(FATAL_ERROR "redlock.pc imposes BOOST_ASIO_NO_DEPRECATED on consumers:\n${pc}")
  endif()
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
  find_program(LINTIAN lintian)
  if(NOT LINTIAN)
    message(FATAL_ERROR "lintian is not installed (scripts/deps.sh installs it)")
  endif()
  # Packages what the build holds (it must be built first, as for --install).
  include(${BUILD_DIR}/CPackConfig.cmake)
  set(cpack_args)
  if(NOT CPACK_DEBIAN_PACKAGE_MAINTAINER)
    # The build found no maintainer (REDLOCK_PACKAGE_MAINTAINER): name the
    # test as the maker of these throwaway packages.
    set(cpack_args -D "CPACK_DEBIAN_PACKAGE_MAINTAINER=redlock package test <package-test@redlock.invalid>")
  endif()
  run(cpack -G DEB --config ${BUILD_DIR}/CPackConfig.cmake -B ${WORK}/deb ${cpack_args})
  set(version ${CPACK_PACKAGE_VERSION})
  set(runtime_deb ${WORK}/deb/redlock_${version}_amd64.deb)
  set(dev_deb ${WORK}/deb/libredlock-dev_${version}_amd64.deb)
  file(GLOB debs ${WORK}/deb/*.deb)
  list(SORT debs)
  if(NOT debs STREQUAL "${dev_deb};${runtime_deb}")
    message(FATAL_ERROR "expected ${runtime_deb} and ${dev_deb}, cpack made: ${debs}")
  endif()

  # The -dev package needs the runtime one at exactly its version; the
  # runtime one declares its library (shlibs) and has ldconfig triggered.
  run(dpkg-deb --field ${dev_deb} Depends)
  if(NOT last_output MATCHES "(^|, )redlock \\(= ${version}\\)")
    message(FATAL_ERROR "libredlock-dev does not depend on redlock (= ${version}): ${last_output}")
  endif()
  run(dpkg-deb --field ${runtime_deb} Depends Section Maintainer)
  message(STATUS "redlock:\n${last_output}")
  if(NOT last_output MATCHES "libhiredis0\\.14")
    message(FATAL_ERROR "dpkg-shlibdeps found no run-time dependencies: ${last_output}")
  endif()
  run(dpkg-deb -e ${runtime_deb} ${WORK}/runtime-control)
  file(READ ${WORK}/runtime-control/triggers triggers)
  file(READ ${WORK}/runtime-control/shlibs shlibs)
  if(NOT triggers MATCHES "activate-noawait ldconfig" OR NOT shlibs MATCHES "^libredlock 0\\.1 redlock ")
    message(FATAL_ERROR "redlock's triggers or shlibs are wrong:\n${triggers}\n${shlibs}")
  endif()

  # No lintian errors (E:); the warnings docs/packaging.md explains are shown.
  execute_process(COMMAND ${LINTIAN} --tag-display-limit 0 ${runtime_deb} ${dev_deb}
    OUTPUT_VARIABLE lintian_out ERROR_VARIABLE lintian_err RESULT_VARIABLE lintian_rc)
  message(STATUS "lintian:\n${lintian_out}")
  if(lintian_out MATCHES "(^|\n)E: " OR NOT lintian_rc MATCHES "^[0-9]+$")
    message(FATAL_ERROR "lintian reports errors (${lintian_rc}):\n${lintian_out}\n${lintian_err}")
  endif()

  # Each package alone holds its half; both unpacked into one scratch root
  # make the installed system.
  # The multiarch library directory, as Debian puts libraries.
  set(libdir ${INSTALL_LIBDIR})
  if(LIBRARY_ARCHITECTURE AND NOT libdir STREQUAL "lib/${LIBRARY_ARCHITECTURE}")
    message(FATAL_ERROR "the packages' libdir is ${libdir}, not lib/${LIBRARY_ARCHITECTURE}")
  endif()
  run(dpkg-deb -x ${runtime_deb} ${WORK}/runtime-only)
  require_files(${WORK}/runtime-only/usr bin/redlock share/man/man1/redlock.1.gz
    share/doc/redlock/copyright share/doc/redlock/changelog.gz ${libdir}/libredlock.so.0.1)
  forbid_files(${WORK}/runtime-only/usr include ${libdir}/libredlock.a ${libdir}/libredlock.so
    ${libdir}/pkgconfig ${libdir}/cmake bin/redlock-bench)
  run(dpkg-deb -x ${dev_deb} ${WORK}/dev-only)
  require_files(${WORK}/dev-only/usr share/doc/libredlock-dev/copyright)
  forbid_files(${WORK}/dev-only/usr bin ${libdir}/libredlock.so.0.1 share/man)
  run(gzip -t ${WORK}/runtime-only/usr/share/man/man1/redlock.1.gz)

  run(dpkg-deb -x ${runtime_deb} ${WORK}/root)
  run(dpkg-deb -x ${dev_deb} ${WORK}/root)
  set(prefix ${WORK}/root/usr)
  check_prefix(${prefix} ${libdir})
  run(${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${prefix}/${libdir} ${prefix}/bin/redlock --version)
  if(NOT last_output MATCHES "^redlock ${version}")
    message(FATAL_ERROR "the packaged redlock --version printed: ${last_output}")
  endif()
  # The consumer finds the shared library through LD_LIBRARY_PATH (run()
  # inherits this process's environment).
  set(ENV{LD_LIBRARY_PATH} ${prefix}/${libdir})
  build_consumer(from-deb -DCMAKE_PREFIX_PATH=${prefix})
  return()
endif()

# The other modes use an installed prefix.
set(prefix ${WORK}/prefix)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
file(GLOB config RELATIVE ${prefix} ${prefix}/${INSTALL_LIBDIR}/cmake/redlock/redlockConfig.cmake)
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
  # As docs/packaging.md says: the loader does not look in a private
  # prefix, so the program fails to start (unless some libredlock.so.0.1 is
  # installed system-wide)...
  execute_process(COMMAND ${WORK}/consumer-pc RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 AND NOT err MATCHES "libredlock\\.so\\.0\\.1: cannot open shared object file")
    message(FATAL_ERROR "consumer-pc failed (${rc}) for another reason than the loader:\n${err}")
  endif()
  # ...and runs with LD_LIBRARY_PATH,
  run(${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${prefix}/${libdir} ${WORK}/consumer-pc)
  check_consumer_output()
  # or, without it, built with an rpath to the .pc's libdir.
  run(pkg-config --variable=libdir redlock)
  string(STRIP "${last_output}" pc_libdir)
  run(c++ -std=c++20 ${consumer_dir}/consumer.cpp ${flags} -Wl,-rpath,${pc_libdir}
    -o ${WORK}/consumer-pc-rpath)
  run(${WORK}/consumer-pc-rpath)
  check_consumer_output()
else()
  message(FATAL_ERROR "unknown MODE '${MODE}'")
endif()
