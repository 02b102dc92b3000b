# Installation and packaging: what `cmake --install` puts where, the CMake
# package (find_package(irtrace CONFIG)), irtrace.pc, and CPack's .deb files.
# Included at the end of the top-level CMakeLists.txt, when every target
# exists.
#
# Three components, which are also the Debian packages:
#   runtime  (irtrace)      the tools, libirtrace.so.*, rules, man pages,
#                           bash completions
#   dev      (irtrace-dev)  headers, libirtrace.a, the libirtrace.so link,
#                           the CMake package, irtrace.pc, the schema
#   python   (python3-irtrace)  the Python package irtrace (with its own
#                           copy of the rules) and irtrace-python(1), when
#                           IRT_PYTHON builds it
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(IRT_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/irtrace)
set(IRT_DATA_INSTALL_DIR ${CMAKE_INSTALL_DATADIR}/irtrace)

# --- The tools and what they read at run time -----------------------------
get_property(IRT_TOOLS GLOBAL PROPERTY IRT_TOOLS)
install(TARGETS ${IRT_TOOLS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
# irt-grad looks for <bin>/../share/irtrace/default.rules (rules.cc).
install(FILES ${CMAKE_SOURCE_DIR}/rules/default.rules DESTINATION ${IRT_DATA_INSTALL_DIR}
        COMPONENT runtime)
file(GLOB IRT_MAN1 CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/man/*.1)
list(FILTER IRT_MAN1 EXCLUDE REGEX "/irtrace-python\\.1$")  # the python component's
file(GLOB IRT_MAN7 CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/man/*.7)
install(FILES ${IRT_MAN1} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT runtime)
install(FILES ${IRT_MAN7} DESTINATION ${CMAKE_INSTALL_MANDIR}/man7 COMPONENT runtime)
# bash-completion loads completions/NAME the first time NAME is completed,
# so the one file (generated from the built tools, tools/CMakeLists.txt) is
# installed under each tool's name.
foreach(tool IN LISTS IRT_TOOLS)
  install(FILES ${IRT_COMPLETION}
          DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME ${tool}
          COMPONENT runtime)
endforeach()

# --- The Python package ----------------------------------------------------
# Into <prefix>/lib/python3/dist-packages/irtrace: Debian's python3 reads
# /usr/lib/python3/dist-packages, so the .deb (prefix /usr) needs nothing
# more; for another prefix, put <prefix>/lib/python3/dist-packages on
# PYTHONPATH or choose the directory with IRT_PYTHON_INSTALL_DIR (relative
# to the prefix). The package finds default.rules next to its __init__.py.
set(IRT_PYTHON_INSTALL_DIR lib/python3/dist-packages CACHE STRING
    "Where the Python package irtrace is installed (relative to the prefix)")
if(TARGET irt_python_native)
  get_property(IRT_PYTHON_FILES GLOBAL PROPERTY IRT_PYTHON_FILES)
  install(TARGETS irt_python_native LIBRARY DESTINATION ${IRT_PYTHON_INSTALL_DIR}/irtrace
          COMPONENT python)
  install(FILES ${IRT_PYTHON_FILES} DESTINATION ${IRT_PYTHON_INSTALL_DIR}/irtrace
          COMPONENT python)
  install(FILES ${CMAKE_SOURCE_DIR}/man/irtrace-python.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
          COMPONENT python)
endif()

# --- Libraries and headers -------------------------------------------------
# Exported as irtrace::irtrace (static), irtrace::irtrace_shared and, when
# the C++ recording front end is built, irtrace::record.
set_target_properties(irtrace PROPERTIES EXPORT_NAME irtrace)
set_target_properties(irtrace_shared PROPERTIES EXPORT_NAME irtrace_shared)
set(IRT_EXPORTED irtrace irtrace_shared)
set(IRT_HEADER_DIRS ${CMAKE_SOURCE_DIR}/libtrace/include/)
if(TARGET irt_record)
  set_target_properties(irt_record PROPERTIES EXPORT_NAME record)
  list(APPEND IRT_EXPORTED irt_record)
endif()
if(IS_DIRECTORY ${CMAKE_SOURCE_DIR}/adapters/cpp/include)
  list(APPEND IRT_HEADER_DIRS ${CMAKE_SOURCE_DIR}/adapters/cpp/include/)
endif()

# An exported target may not name directories of this build: its include
# directories that are plain paths become build-tree only (the installed
# ones come from INCLUDES DESTINATION below).
foreach(target IN LISTS IRT_EXPORTED)
  get_target_property(dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
  if(NOT dirs)
    continue()
  endif()
  set(wrapped)
  foreach(dir IN LISTS dirs)
    if(dir MATCHES "^\\$<")
      list(APPEND wrapped "${dir}")
    else()
      list(APPEND wrapped "$<BUILD_INTERFACE:${dir}>")
    endif()
  endforeach()
  set_property(TARGET ${target} PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${wrapped}")
endforeach()

install(TARGETS ${IRT_EXPORTED} EXPORT irtrace-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${IRT_HEADER_DIRS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev
        FILES_MATCHING PATTERN "*.h")
# The format itself, for readers written against the schema: flatc's C++
# (needs FlatBuffers 2.0.8's headers; no libtrace header includes it) and
# the schema to generate other languages from.
install(FILES ${IRT_GEN_DIR}/irtrace_generated.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/irt COMPONENT dev)
install(FILES ${IRT_SCHEMA} DESTINATION ${IRT_DATA_INSTALL_DIR} COMPONENT dev)

# --- CMake package ---------------------------------------------------------
install(EXPORT irtrace-targets NAMESPACE irtrace:: DESTINATION ${IRT_CMAKE_INSTALL_DIR}
        COMPONENT dev)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/irtrace-config.cmake.in
                              ${CMAKE_BINARY_DIR}/cmake/irtrace-config.cmake
                              INSTALL_DESTINATION ${IRT_CMAKE_INSTALL_DIR})
# 0.x: a minor release may change the API.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/irtrace-config-version.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake/irtrace-config.cmake
              ${CMAKE_BINARY_DIR}/cmake/irtrace-config-version.cmake
        DESTINATION ${IRT_CMAKE_INSTALL_DIR} COMPONENT dev)

# --- pkg-config ------------------------------------------------------------
# Relocatable: the prefix is found from the .pc file's own place, so
# `cmake --install --prefix DIR` works for any DIR.
file(RELATIVE_PATH IRT_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" IRT_PC_TO_PREFIX "${IRT_PC_TO_PREFIX}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/irtrace.pc.in ${CMAKE_BINARY_DIR}/cmake/irtrace.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/cmake/irtrace.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)

# --- Debian packages (cpack -G DEB, run in the build directory) ------------
# irtrace: the tools and the shared library; its Depends come from
# dpkg-shlibdeps. irtrace-dev: the headers (which include only the standard
# library), the static library and the build files; it depends on the -dev
# packages of what libirtrace.a calls (fmt, libcgraph, zstd) because linking
# it needs them, and on pkg-config for the CMake package's and irtrace.pc's
# look-ups of libcgraph and libzstd.
set(CPACK_PACKAGE_NAME irtrace)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Record, inspect and differentiate traces of dynamic programs")
set(CPACK_PACKAGE_CONTACT "irtrace maintainers <irtrace@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_COMPONENTS_ALL runtime dev)
if(TARGET irt_python_native)
  list(APPEND CPACK_COMPONENTS_ALL python)
endif()
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME irtrace)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION science)
# A shlibs file and the ldconfig trigger for libirtrace.so.*.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SUGGESTS "graphviz")
set(CPACK_DEBIAN_DEV_PACKAGE_NAME irtrace-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "irtrace (= ${PROJECT_VERSION}), libfmt-dev, libeigen3-dev, libgraphviz-dev, libzstd-dev, pkg-config")
set(CPACK_DEBIAN_DEV_PACKAGE_SUGGESTS "cmake, libflatbuffers-dev, flatbuffers-compiler")
# python3-irtrace: the module is built for one CPython (3.11 on Debian 12)
# against python3-numpy's C API; libtrace is linked in statically, so it
# does not need the irtrace package. Its other Depends come from
# dpkg-shlibdeps.
get_property(IRT_PYTHON_VERSION GLOBAL PROPERTY IRT_PYTHON_VERSION)
set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-irtrace)
set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
if(IRT_PYTHON_VERSION)
  string(REGEX REPLACE "^([0-9]+)\\.([0-9]+)$" "\\1" _py_major ${IRT_PYTHON_VERSION})
  string(REGEX REPLACE "^([0-9]+)\\.([0-9]+)$" "\\2" _py_minor ${IRT_PYTHON_VERSION})
  math(EXPR _py_next "${_py_minor} + 1")
  set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS
      "python3 (>= ${IRT_PYTHON_VERSION}~), python3 (<< ${_py_major}.${_py_next}), python3-numpy")
endif()
# Byte-compiled on installation and cleaned on removal, as dh_python3 does.
set(CPACK_DEBIAN_PYTHON_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_LIST_DIR}/deb-python/postinst
                                              ${CMAKE_CURRENT_LIST_DIR}/deb-python/prerm)
set(CPACK_DEBIAN_PYTHON_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_COMPONENT_PYTHON_DESCRIPTION
    "The Python package irtrace: irtrace.track records what a Python function
did as an irtrace trace, irtrace.load reads traces (IRTracker's graph API:
referenced, backward, dependents, forward), irtrace.grad differentiates them;
python3 -m irtrace trace records from the command line.")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
    "irtrace records what a dynamic program did as an extended Wengert list in one
FlatBuffers format, and its tools print, check, slice, render, compare,
replay and differentiate such traces.")
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "Headers, static library, CMake package and pkg-config file of libtrace,
irtrace's library for reading, writing and analysing traces.")
include(CPack)
