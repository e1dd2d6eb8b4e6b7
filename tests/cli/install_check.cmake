# Installs the build into PREFIX and checks what must be there.
file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}"
  RESULT_VARIABLE installed OUTPUT_QUIET)
if(NOT installed EQUAL 0)
  message(FATAL_ERROR "cmake --install failed: ${installed}")
endif()
foreach(expected bin/redlock share/man/man1/redlock.1.gz include/redlock/client.hpp)
  if(NOT EXISTS "${PREFIX}/${expected}")
    message(FATAL_ERROR "not installed: ${expected}")
  endif()
endforeach()
execute_process(COMMAND "${PREFIX}/bin/redlock" --version RESULT_VARIABLE ran
  OUTPUT_VARIABLE version)
if(NOT ran EQUAL 0 OR NOT version MATCHES "^redlock [0-9]+\\.[0-9]+\\.[0-9]+")
  message(FATAL_ERROR "the installed redlock --version failed: ${ran} ${version}")
endif()
file(REMOVE_RECURSE "${PREFIX}")
