# What `cmake --install` puts in place, and how cpack splits it into two
# Debian packages:
#   runtime      (package "redlock"): libredlock.so.0.1*, the redlock tool and
#                its man page (redlock-bench with REDLOCK_INSTALL_BENCH=ON);
#   development  (package "libredlock-dev"): the public headers, libredlock.a,
#                the libredlock.so link, the CMake package and redlock.pc.
# Both carry share/doc/<package>/copyright and changelog.gz.
include(CMakePackageConfigHelpers)

install(TARGETS ${redlock_installed_libraries} EXPORT redlockTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT development
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
# The headers under include/redlock are the public ones (src/ holds the rest).
install(DIRECTORY include/redlock DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT development)

set(redlock_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/redlock)
install(EXPORT redlockTargets NAMESPACE redlock:: DESTINATION ${redlock_cmake_dir}
  COMPONENT development)
configure_package_config_file(cmake/redlockConfig.cmake.in
  ${PROJECT_BINARY_DIR}/redlockConfig.cmake INSTALL_DESTINATION ${redlock_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/redlockConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/redlockConfig.cmake
  ${PROJECT_BINARY_DIR}/redlockConfigVersion.cmake DESTINATION ${redlock_cmake_dir}
  COMPONENT development)

# pkg-config: the prefix is found from the .pc file's own place, so the
# package can be installed under any prefix (or unpacked from the .deb).
file(RELATIVE_PATH redlock_pc_to_prefix
  /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" redlock_pc_to_prefix "${redlock_pc_to_prefix}")
configure_file(cmake/redlock.pc.in ${PROJECT_BINARY_DIR}/redlock.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/redlock.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
  COMPONENT development)

# ---- Debian packages (cpack -G DEB) ----------------------------------------
set(redlock_runtime_package redlock)
set(redlock_dev_package libredlock-dev)

# The maintainer field. By default the person building the package, found
# the way Debian's own tools (dch, dh_make) find them: DEBFULLNAME and
# DEBEMAIL (or EMAIL); failing that, the git identity the source tree's
# commits are made with. No address is invented: with neither, the value
# stays empty and cpack stops, asking for one.
function(redlock_default_maintainer out)
  set(name "$ENV{DEBFULLNAME}")
  set(email "$ENV{DEBEMAIL}")
  if(NOT email)
    set(email "$ENV{EMAIL}")
  endif()
  find_package(Git QUIET)
  if(GIT_FOUND AND EXISTS ${PROJECT_SOURCE_DIR}/.git)
    if(NOT email)
      execute_process(COMMAND ${GIT_EXECUTABLE} config user.email
        WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} OUTPUT_VARIABLE email
        OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    endif()
    if(NOT name)
      execute_process(COMMAND ${GIT_EXECUTABLE} config user.name
        WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} OUTPUT_VARIABLE name
        OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    endif()
  endif()
  if(name AND email)
    set(${out} "${name} <${email}>" PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()
if(NOT DEFINED REDLOCK_PACKAGE_MAINTAINER)
  redlock_default_maintainer(redlock_maintainer_found)
endif()
set(REDLOCK_PACKAGE_MAINTAINER "${redlock_maintainer_found}" CACHE STRING
  "Maintainer field of the .deb packages: 'Full Name <address>' (default: DEBFULLNAME/DEBEMAIL, else git's user.name/user.email)")
if(REDLOCK_PACKAGE_MAINTAINER AND NOT REDLOCK_PACKAGE_MAINTAINER MATCHES "^[^<>]+ <[^<>@ ]+@[^<>@ ]+>$")
  message(FATAL_ERROR "REDLOCK_PACKAGE_MAINTAINER must read 'Full Name <user@host>', "
    "not '${REDLOCK_PACKAGE_MAINTAINER}'")
endif()

# The Debian changelog and the copyright file every package carries in
# share/doc/<package>/ (Debian policy 12.5 and 12.7).
string(TIMESTAMP redlock_package_date "%a, %d %b %Y %H:%M:%S +0000" UTC)
set(redlock_changelog_maintainer "${REDLOCK_PACKAGE_MAINTAINER}")
if(NOT redlock_changelog_maintainer)
  set(redlock_changelog_maintainer "unknown <unknown@unknown>")
endif()
configure_file(cmake/debian/changelog.in ${PROJECT_BINARY_DIR}/debian/changelog @ONLY)
find_program(REDLOCK_GZIP gzip REQUIRED)
add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/debian/changelog.gz
  COMMAND ${REDLOCK_GZIP} -9 -n -f -k ${PROJECT_BINARY_DIR}/debian/changelog
  DEPENDS ${PROJECT_BINARY_DIR}/debian/changelog
  COMMENT "Compressing the Debian changelog" VERBATIM)
add_custom_target(redlock_debian_changelog ALL DEPENDS ${PROJECT_BINARY_DIR}/debian/changelog.gz)
foreach(pair "runtime;${redlock_runtime_package}" "development;${redlock_dev_package}")
  list(GET pair 0 component)
  list(GET pair 1 package)
  install(FILES cmake/debian/copyright ${PROJECT_BINARY_DIR}/debian/changelog.gz
    DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${package} COMPONENT ${component})
endforeach()
configure_file(cmake/debian/triggers ${PROJECT_BINARY_DIR}/debian/triggers COPYONLY)

set(CPACK_PACKAGE_NAME redlock)
set(CPACK_PACKAGE_VENDOR "redlock")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL runtime development)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SOURCE redlock)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${REDLOCK_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME ${redlock_runtime_package})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
# Library and tool dependencies come from dpkg-shlibdeps; the shlibs file
# lets packages built against libredlock.so.0.1 depend on this one.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
# dpkg runs ldconfig once after all packages are unpacked (no maintainer
# scripts of our own).
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/debian/triggers)
# CPack indents the extended description itself and turns empty lines into " .".
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION
  "distributed locks over independent Redis masters (Redlock)
The library acquires, extends and releases leases held by a majority of N
independent Redis masters (the Redlock algorithm), with fencing tokens,
leader election and periodic jobs built on it.

This package holds the shared library (C++20, Boost.Asio) and the redlock
command-line tool, which runs a command while it holds a lock.")
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME ${redlock_dev_package})
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION libdevel)
# The same version of the runtime package, and what compiling and linking
# against the headers and libredlock.a needs.
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_DEPENDS
  "${redlock_runtime_package} (= ${PROJECT_VERSION}), libboost-dev (>= 1.74), libboost-system-dev (>= 1.74), libhiredis-dev, libfmt-dev, libssl-dev")
set(CPACK_DEBIAN_DEVELOPMENT_DESCRIPTION
  "distributed locks over independent Redis masters (development files)
The library acquires, extends and releases leases held by a majority of N
independent Redis masters (the Redlock algorithm), with fencing tokens,
leader election and periodic jobs built on it.

This package holds the C++20 headers, the static library, the CMake
package (find_package(redlock)) and the pkg-config file (redlock.pc).")
include(CPack)
