# Installs the headers, the generated config.hpp and a CMake package, so that a user's project
# can `find_package(hetero)` and link `hetero::hetero`.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(HETERO_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/hetero")

install(TARGETS hetero EXPORT heteroTargets)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/hetero" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(FILES "${PROJECT_BINARY_DIR}/include/hetero/config.hpp"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/hetero")
install(
  EXPORT heteroTargets
  NAMESPACE hetero::
  DESTINATION "${HETERO_INSTALL_CMAKEDIR}")

# The io component: its own export set, loaded by heteroConfig.cmake only when a user asks for
# it (find_package(hetero COMPONENTS io)), after finding parallel HDF5 the way this build did.
if(HETERO_ENABLE_IO)
  install(TARGETS hetero_io EXPORT heteroIoTargets)
  install(
    EXPORT heteroIoTargets
    NAMESPACE hetero::
    DESTINATION "${HETERO_INSTALL_CMAKEDIR}")
endif()
install(FILES "${PROJECT_SOURCE_DIR}/cmake/HeteroFindHDF5.cmake" DESTINATION "${HETERO_INSTALL_CMAKEDIR}")

configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/heteroConfig.cmake.in"
                              "${PROJECT_BINARY_DIR}/heteroConfig.cmake" INSTALL_DESTINATION "${HETERO_INSTALL_CMAKEDIR}")
# 0.x releases promise nothing across minor versions.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/heteroConfigVersion.cmake" COMPATIBILITY SameMinorVersion
                                  ARCH_INDEPENDENT)
install(FILES "${PROJECT_BINARY_DIR}/heteroConfig.cmake" "${PROJECT_BINARY_DIR}/heteroConfigVersion.cmake"
        DESTINATION "${HETERO_INSTALL_CMAKEDIR}")
