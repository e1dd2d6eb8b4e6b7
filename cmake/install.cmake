# What `cmake --install` puts in place: the public headers, the static and
# shared libraries with their exported targets (redlock::redlock,
# redlock::redlock_static), the CMake package and pkg-config files; the
# tool and the benchmark install themselves from their directories.
include(CMakePackageConfigHelpers)

install(TARGETS ${redlock_installed_libraries} EXPORT redlockTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The headers under include/redlock are the public ones (src/ holds the rest).
install(DIRECTORY include/redlock DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(redlock_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/redlock)
install(EXPORT redlockTargets NAMESPACE redlock:: DESTINATION ${redlock_cmake_dir})
configure_package_config_file(cmake/redlockConfig.cmake.in
  ${PROJECT_BINARY_DIR}/redlockConfig.cmake INSTALL_DESTINATION ${redlock_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/redlockConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/redlockConfig.cmake
  ${PROJECT_BINARY_DIR}/redlockConfigVersion.cmake DESTINATION ${redlock_cmake_dir})

# pkg-config: the prefix is found from the .pc file's own place, so the
# package can be installed under any prefix (or unpacked from the .deb).
file(RELATIVE_PATH redlock_pc_to_prefix
  /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" redlock_pc_to_prefix "${redlock_pc_to_prefix}")
configure_file(cmake/redlock.pc.in ${PROJECT_BINARY_DIR}/redlock.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/redlock.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# cpack -G DEB: library, headers, package files, the tool and its man page.
set(CPACK_PACKAGE_NAME redlock)
set(CPACK_PACKAGE_VENDOR "redlock")
set(CPACK_PACKAGE_CONTACT "redlock maintainers <redlock@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "Redlock distributed lock over N independent Redis masters (C++20, Boost.Asio)")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
# Run-time libraries the tool and libredlock.so need, and what a program
# built against the headers needs to compile and link.
set(CPACK_DEBIAN_PACKAGE_DEPENDS
  "libhiredis0.14, libfmt9, libssl3, libboost-system1.74.0, libboost-dev (>= 1.74), libboost-system-dev (>= 1.74), libhiredis-dev, libfmt-dev, libssl-dev, pkg-config")
include(CPack)
