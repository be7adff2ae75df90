# Helpers for installing files whose contents depend on the install prefix (sampler.pc, macros.sampler).
include_guard(GLOBAL)
include(GNUInstallDirs)

# sampler_install_configured(TEMPLATE DESTINATION)
# Installs TEMPLATE (a .in file, @VAR@ substitution) into DESTINATION (relative to the prefix), filled at install
# time with the prefix actually installed into: see InstallConfigured.cmake for the variables it provides.
function(sampler_install_configured template destination)
  get_filename_component(name "${template}" NAME_WE)
  get_filename_component(extension "${template}" EXT)
  string(REGEX REPLACE "\\.in$" "" extension "${extension}")
  set(output "${CMAKE_CURRENT_BINARY_DIR}/install-time/${name}${extension}")
  set(script "${PROJECT_SOURCE_DIR}/cmake/InstallConfigured.cmake")
  install(CODE "
    set(SAMPLER_TEMPLATE [[${template}]])
    set(SAMPLER_OUTPUT [[${output}]])
    set(SAMPLER_DESTINATION [[${destination}]])
    set(SAMPLER_REL_INCLUDEDIR [[${CMAKE_INSTALL_INCLUDEDIR}]])
    set(SAMPLER_REL_LIBDIR [[${CMAKE_INSTALL_LIBDIR}]])
    set(SAMPLER_IMPLICIT_INCLUDE_DIRS [[${CMAKE_C_IMPLICIT_INCLUDE_DIRECTORIES}]])
    set(SAMPLER_IMPLICIT_LINK_DIRS [[${CMAKE_C_IMPLICIT_LINK_DIRECTORIES}]])
    set(SAMPLER_VERSION [[${PROJECT_VERSION}]])
    include([[${script}]])")
endfunction()
