# Debian package of meshperf: `cpack -G DEB` in the build directory (after the build) makes
# meshperf_<version>_<arch>.deb with
#   /usr/bin/meshperf, /usr/sbin/meshperfd
#   /usr/lib/systemd/system/meshperfd.service
#   /usr/lib/sysusers.d/meshperf.conf, /usr/lib/tmpfiles.d/meshperf.conf
#   /etc/meshperf/meshperfd.toml (conffile: dpkg keeps local edits across upgrades)
#   /usr/share/doc/meshperf/examples/meshperfd.toml.example, operations-service.md
#   /usr/share/man/man1/meshperf.1.gz, /usr/share/man/man8/meshperfd.8.gz
#       (generated from --help with help2man at build time, where help2man is installed)
# and maintainer scripts that create the meshperf user and directories (systemd-sysusers and
# systemd-tmpfiles, or adduser where those are missing) and enable the service as debhelper
# does. The service only starts once /etc/meshperf/token exists.
#
# Dependencies come from dpkg-shlibdeps (dpkg-dev), i.e. from what the binaries really link:
# libc6, libstdc++6, libgcc-s1, libsqlite3-0, libfmt9, libsystemd0 where found, and
# libibverbs1 when built with RDMA. libibverbs1 must be a Depends, not a Recommends: the
# binaries link it dynamically, so without libibverbs.so.1 the dynamic loader refuses to start
# them at all, TCP included. What may be missing at run time are the verbs *providers*
# (ibverbs-providers, loaded with dlopen) and the RDMA hardware: those are Recommends, and
# without them RDMA is reported unavailable while TCP works. CUDA needs nothing: the runtime
# is linked statically and libcuda is reached at run time only.
#
# Included from the top-level CMakeLists.txt after daemon/ and client/; needs nothing else.
# Options:
#   MESHPERF_MAN_PAGES           ON (default): build man pages when help2man is found.
#   MESHPERF_PACKAGE_MAINTAINER  the Maintainer field of the package.

get_filename_component(_mp_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
set(_mp_pkg_dir "${CMAKE_BINARY_DIR}/packaging")
file(MAKE_DIRECTORY "${_mp_pkg_dir}")

option(MESHPERF_MAN_PAGES "Generate man pages from --help with help2man (when found)" ON)
set(MESHPERF_PACKAGE_MAINTAINER "meshperf maintainers <meshperf@localhost>"
    CACHE STRING "Maintainer field of the Debian package")

# --- files of the service -------------------------------------------------------------------
install(FILES "${_mp_root}/systemd/meshperfd.service" DESTINATION lib/systemd/system)
install(FILES "${_mp_root}/systemd/meshperf.sysusers" DESTINATION lib/sysusers.d RENAME meshperf.conf)
install(FILES "${_mp_root}/systemd/meshperf.tmpfiles" DESTINATION lib/tmpfiles.d RENAME meshperf.conf)
install(FILES "${_mp_root}/systemd/meshperfd.toml.example" DESTINATION share/doc/meshperf/examples)
# The unit's ExecStart names /etc/meshperf/meshperfd.toml: ship it (all defaults) as a conffile.
install(FILES "${_mp_root}/systemd/meshperfd.toml.example" DESTINATION /etc/meshperf RENAME meshperfd.toml)
foreach(_mp_doc operations-service.md operations.md)
  if(EXISTS "${_mp_root}/docs/${_mp_doc}")
    install(FILES "${_mp_root}/docs/${_mp_doc}" DESTINATION share/doc/meshperf)
  endif()
endforeach()

# --- man pages --------------------------------------------------------------------------------
find_program(HELP2MAN_EXECUTABLE help2man)
find_program(GZIP_EXECUTABLE gzip)
set(_mp_man_outputs "")
if(MESHPERF_MAN_PAGES AND HELP2MAN_EXECUTABLE AND GZIP_EXECUTABLE)
  # target;section;one-line description
  set(_mp_man_pages
      "meshperf|1|measure network and interconnect bandwidth and latency between GPU cluster nodes"
      "meshperfd|8|meshperf measurement daemon")
  foreach(_mp_page IN LISTS _mp_man_pages)
    string(REPLACE "|" ";" _mp_page "${_mp_page}")
    list(GET _mp_page 0 _mp_target)
    list(GET _mp_page 1 _mp_section)
    list(GET _mp_page 2 _mp_name)
    if(NOT TARGET ${_mp_target})
      message(STATUS "packaging: no target ${_mp_target}, so no ${_mp_target}(${_mp_section}) man page")
      continue()
    endif()
    set(_mp_man "${_mp_pkg_dir}/${_mp_target}.${_mp_section}")
    add_custom_command(
      OUTPUT "${_mp_man}.gz"
      COMMAND "${HELP2MAN_EXECUTABLE}" --no-info --no-discard-stderr
              --section=${_mp_section} --name=${_mp_name}
              --version-string=${PROJECT_VERSION} --source=meshperf --manual=meshperf
              --output=${_mp_man} $<TARGET_FILE:${_mp_target}>
      COMMAND "${GZIP_EXECUTABLE}" -9nf "${_mp_man}"
      DEPENDS ${_mp_target}
      COMMENT "help2man: ${_mp_target}(${_mp_section}) from ${_mp_target} --help"
      VERBATIM)
    list(APPEND _mp_man_outputs "${_mp_man}.gz")
    install(FILES "${_mp_man}.gz" DESTINATION share/man/man${_mp_section})
  endforeach()
  if(_mp_man_outputs)
    add_custom_target(meshperf_man_pages ALL DEPENDS ${_mp_man_outputs})
  endif()
elseif(MESHPERF_MAN_PAGES)
  message(STATUS "packaging: help2man not found, the package has no man pages (apt-get install help2man)")
endif()

# --- maintainer scripts -----------------------------------------------------------------------
# The systemd part follows what debhelper's dh_installsystemd generates: enable on first
# install (remembering an admin's disable), start or restart where systemd runs.
file(CONFIGURE OUTPUT "${_mp_pkg_dir}/postinst" @ONLY CONTENT [=[#!/bin/sh
# meshperf postinst (generated by cmake/packaging.cmake)
set -e

if [ "$1" = configure ]; then
    if command -v systemd-sysusers >/dev/null 2>&1; then
        systemd-sysusers /usr/lib/sysusers.d/meshperf.conf
    elif ! getent passwd meshperf >/dev/null 2>&1; then
        adduser --quiet --system --group --home /var/lib/meshperf --no-create-home \
            --shell /usr/sbin/nologin --gecos "meshperf measurement daemon" meshperf
    fi
    if command -v systemd-tmpfiles >/dev/null 2>&1; then
        systemd-tmpfiles --create /usr/lib/tmpfiles.d/meshperf.conf || true
    else
        install -d -m 0755 /etc/meshperf
        install -d -m 0750 -o meshperf -g meshperf /var/lib/meshperf
    fi
fi

if [ "$1" = configure ] || [ "$1" = abort-upgrade ] || [ "$1" = abort-deconfigure ] || [ "$1" = abort-remove ]; then
    if command -v deb-systemd-helper >/dev/null 2>&1; then
        deb-systemd-helper unmask meshperfd.service >/dev/null || true
        if deb-systemd-helper --quiet was-enabled meshperfd.service; then
            deb-systemd-helper enable meshperfd.service >/dev/null || true
        else
            deb-systemd-helper update-state meshperfd.service >/dev/null || true
        fi
    fi
    if [ -d /run/systemd/system ]; then
        systemctl --system daemon-reload >/dev/null || true
        if [ -n "$2" ]; then action=restart; else action=start; fi
        # The unit has ConditionPathExists=/etc/meshperf/token: without a token this is a no-op.
        if command -v deb-systemd-invoke >/dev/null 2>&1; then
            deb-systemd-invoke $action meshperfd.service >/dev/null || true
        fi
    fi
fi
exit 0
]=])

file(CONFIGURE OUTPUT "${_mp_pkg_dir}/prerm" @ONLY CONTENT [=[#!/bin/sh
# meshperf prerm (generated by cmake/packaging.cmake)
set -e
if [ -d /run/systemd/system ] && [ "$1" = remove ]; then
    if command -v deb-systemd-invoke >/dev/null 2>&1; then
        deb-systemd-invoke stop meshperfd.service >/dev/null || true
    else
        systemctl stop meshperfd.service >/dev/null 2>&1 || true
    fi
fi
exit 0
]=])

file(CONFIGURE OUTPUT "${_mp_pkg_dir}/postrm" @ONLY CONTENT [=[#!/bin/sh
# meshperf postrm (generated by cmake/packaging.cmake)
set -e
if [ -d /run/systemd/system ]; then
    systemctl --system daemon-reload >/dev/null || true
fi
if command -v deb-systemd-helper >/dev/null 2>&1; then
    if [ "$1" = remove ]; then
        deb-systemd-helper mask meshperfd.service >/dev/null || true
    fi
    if [ "$1" = purge ]; then
        deb-systemd-helper purge meshperfd.service >/dev/null || true
        deb-systemd-helper unmask meshperfd.service >/dev/null || true
    fi
fi
if [ "$1" = purge ]; then
    # Results history and the cluster token: purge means nothing of meshperf stays behind.
    # The meshperf user stays, as Debian leaves system users (files may still carry its id).
    rm -rf /var/lib/meshperf
    rm -f /etc/meshperf/token
    rmdir /etc/meshperf 2>/dev/null || true
fi
exit 0
]=])

file(CONFIGURE OUTPUT "${_mp_pkg_dir}/conffiles" CONTENT "/etc/meshperf/meshperfd.toml\n")

# --- CPack ------------------------------------------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME meshperf)
set(CPACK_PACKAGE_VENDOR meshperf)
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_CONTACT "${MESHPERF_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "network and interconnect bandwidth/latency tester for GPU clusters")
set(CPACK_PACKAGE_DESCRIPTION
    "meshperf measures the paths distributed training depends on: node to node
over TCP and RDMA verbs, GPU memory to GPU memory (GPUDirect RDMA or staged
through the host), and host/GPU copies. The daemon meshperfd runs on every
node as a systemd service; the CLI meshperf sweeps message sizes, checks links
against baselines (Nagios-style exit codes), measures the cluster matrix
naming bad links, and predicts collective times.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
# /etc/meshperf is an absolute destination on purpose (a conffile); don't warn about it.
set(CPACK_WARN_ON_ABSOLUTE_INSTALL_DESTINATION OFF)

set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${MESHPERF_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    "${_mp_pkg_dir}/postinst;${_mp_pkg_dir}/prerm;${_mp_pkg_dir}/postrm;${_mp_pkg_dir}/conffiles")

find_program(DPKG_SHLIBDEPS_EXECUTABLE dpkg-shlibdeps)
find_program(FILE_EXECUTABLE file)
if(DPKG_SHLIBDEPS_EXECUTABLE AND FILE_EXECUTABLE)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  set(_mp_depends "")
else()
  # Without dpkg-shlibdeps, name what the binaries link on Debian 12.
  message(STATUS "packaging: dpkg-shlibdeps or file not found, Depends is the fixed Debian 12 list")
  set(_mp_depends "libc6 (>= 2.36), libstdc++6 (>= 12), libgcc-s1, libsqlite3-0, libfmt9")
  if(SYSTEMD_FOUND)
    string(APPEND _mp_depends ", libsystemd0")
  endif()
  if(MESHPERF_HAVE_RDMA)
    string(APPEND _mp_depends ", libibverbs1 (>= 44)")
  endif()
endif()
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${_mp_depends}")
if(MESHPERF_HAVE_RDMA)
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "ibverbs-providers")
  set(CPACK_DEBIAN_PACKAGE_SUGGESTS "rdma-core, ibverbs-utils")
endif()

include(CPack)
