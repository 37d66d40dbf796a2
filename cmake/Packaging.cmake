# Install rules and the Debian package (issue 24).
#
#   cmake --install BUILD --prefix PREFIX    PREFIX/bin/tracemill, PREFIX/share/man/man1/tracemill.1,
#                                            PREFIX/share/doc/tracemill/{README.md,examples/},
#                                            PREFIX/lib/python3.<minor>/dist-packages/tracemill/
#   cd BUILD && cpack -G DEB                 tracemill_<version>_<arch>.deb, the same files under /usr
#
# Only what a user needs: no libraries or headers (tracemill_core is static and
# linked into the binary), no tests, benchmarks or generators. The version is
# `project(tracemill VERSION ...)`: --version (tools/version.h.in), the .deb and
# the image tag (tools/build-image.sh) all take it from there.
include(GNUInstallDirs)

install(TARGETS tracemill RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# tracemill.1 from `tracemill --help` and each subcommand's --help
# (tools/man-page.sh, help2man). Not in sanitizer builds: the page would come
# from an instrumented binary, and nothing installs from those.
find_program(TRACEMILL_HELP2MAN help2man)
if(TRACEMILL_HELP2MAN AND NOT TRACEMILL_SANITIZE)
  add_custom_command(
    OUTPUT ${CMAKE_BINARY_DIR}/tracemill.1
    COMMAND bash ${CMAKE_SOURCE_DIR}/tools/man-page.sh $<TARGET_FILE:tracemill> ${TRACEMILL_HELP2MAN}
            ${CMAKE_BINARY_DIR}/tracemill.1
    DEPENDS tracemill ${CMAKE_SOURCE_DIR}/tools/man-page.sh
    COMMENT "Generating tracemill.1 from --help")
  add_custom_target(tracemill_man ALL DEPENDS ${CMAKE_BINARY_DIR}/tracemill.1)
  install(FILES ${CMAKE_BINARY_DIR}/tracemill.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
elseif(NOT TRACEMILL_SANITIZE)
  message(STATUS "help2man not found: `cmake --install` installs no man page "
                 "(bash tools/setup-debian.sh --package installs it)")
endif()

# share/doc/tracemill: the README (the user's manual) and the cluster
# examples with the sample job they run on. The repository has no licence
# file yet; one named LICENSE is installed once it exists (OPTIONAL: looked
# for at install time, so the Containerfile can configure and build before
# it copies the documents).
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR} OPTIONAL)
install(DIRECTORY cluster-examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples
        USE_SOURCE_PERMISSIONS)

# The Python package (python/tracemill: runs the binary, reads its tables)
# where Debian's python3 finds it: PREFIX/lib/python3.<minor>/dist-packages,
# on sys.path for both /usr (the .deb) and /usr/local (cmake --install's
# default). Without a python3 at configure time (the image's build stage),
# Debian's version-free /usr/lib/python3/dist-packages, right for the .deb.
find_program(TRACEMILL_INSTALL_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(TRACEMILL_INSTALL_PYTHON3)
  execute_process(COMMAND ${TRACEMILL_INSTALL_PYTHON3} -c "import sys; print('python%d.%d' % sys.version_info[:2])"
                  OUTPUT_VARIABLE _tm_python OUTPUT_STRIP_TRAILING_WHITESPACE)
else()
  set(_tm_python python3)
endif()
set(TRACEMILL_PYTHON_DIR lib/${_tm_python}/dist-packages CACHE STRING
    "Where `cmake --install` puts the Python package tracemill, relative to the prefix")
install(DIRECTORY python/tracemill DESTINATION ${TRACEMILL_PYTHON_DIR} FILES_MATCHING PATTERN "*.py")

# The .deb. Depends come from the shared libraries the binary links
# (dpkg-shlibdeps, from dpkg-dev): on Debian 12 the runtime packages of
# oneTBB, simdjson, libdeflate, Abseil and zlib, plus libc and libstdc++.
# protobuf is not among them: tracemill reads Paddle's protobuf with its own
# wire reader (formats/paddle/wire_reader.h); only tests and benchmarks link
# libprotobuf.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tracemill)
set(CPACK_PACKAGE_VENDOR "tracemill")
set(CPACK_PACKAGE_CONTACT "tracemill developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "merge per-rank GPU profiler traces into Chrome traces")
# The first line of the control file's Description is the summary above.
string(CONCAT CPACK_DEBIAN_PACKAGE_DESCRIPTION
  "tracemill converts the profiler files a distributed training job leaves\n"
  "behind (PyTorch profiler/Kineto JSON, Chrome Trace Event Format, Paddle\n"
  "profiler protobuf, SageMaker Debugger folders, Horovod timelines, run event\n"
  "logs) into merged Chrome traces per GPU, rank or node, plus manifest.json\n"
  "and a one-page report.html, in parallel and within a memory limit.")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
# The Python package (python/tracemill) needs them; the binary does not.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3, python3-pandas")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# `cmake --build BUILD --target package` writes BUILD/package/tracemill_*.deb.
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/package)
include(CPack)
