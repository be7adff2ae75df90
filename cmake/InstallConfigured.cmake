# Runs at `cmake --install` time (from install(CODE)): fills a template with the paths of the prefix being
# installed into, which is only known then (`cmake --install --prefix P` may differ from the configured prefix),
# and installs the result. Used for sampler.pc and the RPM macros file, whose users need absolute paths.
#
# Inputs (set by the install(CODE) that includes this file):
#   SAMPLER_TEMPLATE         the .in file (@VAR@ substitution only)
#   SAMPLER_OUTPUT           where to write the filled file in the build tree
#   SAMPLER_DESTINATION      install directory, relative to the prefix or absolute
#   SAMPLER_REL_INCLUDEDIR, SAMPLER_REL_LIBDIR   CMAKE_INSTALL_INCLUDEDIR / LIBDIR as configured
#   SAMPLER_IMPLICIT_INCLUDE_DIRS, SAMPLER_IMPLICIT_LINK_DIRS   the compiler's own search directories
#   SAMPLER_VERSION
# Computed here for the templates: SAMPLER_PREFIX, SAMPLER_INCLUDEDIR, SAMPLER_LIBDIR, SAMPLER_CFLAGS,
# SAMPLER_LDFLAGS.

# Install scripts run without the project's policy settings.
cmake_policy(PUSH)
cmake_policy(VERSION 3.25)

set(SAMPLER_PREFIX "${CMAKE_INSTALL_PREFIX}")
cmake_path(ABSOLUTE_PATH SAMPLER_REL_INCLUDEDIR BASE_DIRECTORY "${SAMPLER_PREFIX}" NORMALIZE
           OUTPUT_VARIABLE SAMPLER_INCLUDEDIR)
cmake_path(ABSOLUTE_PATH SAMPLER_REL_LIBDIR BASE_DIRECTORY "${SAMPLER_PREFIX}" NORMALIZE
           OUTPUT_VARIABLE SAMPLER_LIBDIR)

# Flags only for directories the compiler does not search by itself: -I/usr/include would reorder the system
# headers, and a run path to a system directory is noise (rpm's check-rpaths rejects it).
set(SAMPLER_CFLAGS "")
if(NOT SAMPLER_INCLUDEDIR IN_LIST SAMPLER_IMPLICIT_INCLUDE_DIRS)
  set(SAMPLER_CFLAGS "-I${SAMPLER_INCLUDEDIR}")
endif()
set(SAMPLER_LDFLAGS "-Wl,--build-id")
if(NOT SAMPLER_LIBDIR IN_LIST SAMPLER_IMPLICIT_LINK_DIRS)
  set(SAMPLER_LDFLAGS "-L${SAMPLER_LIBDIR} -Wl,-rpath,${SAMPLER_LIBDIR} ${SAMPLER_LDFLAGS}")
endif()

configure_file("${SAMPLER_TEMPLATE}" "${SAMPLER_OUTPUT}" @ONLY)
if(IS_ABSOLUTE "${SAMPLER_DESTINATION}")
  set(destination "${SAMPLER_DESTINATION}")
else()
  set(destination "${SAMPLER_PREFIX}/${SAMPLER_DESTINATION}")
endif()
# file(INSTALL) adds DESTDIR and records the file in install_manifest.txt, as install(FILES) would.
file(INSTALL DESTINATION "${destination}" TYPE FILE PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
     FILES "${SAMPLER_OUTPUT}")

cmake_policy(POP)
