# SPDX-License-Identifier: MIT
# Debian package: cpack -G DEB in a build folder (dependencies computed by dpkg-shlibdeps).
set(CPACK_PACKAGE_NAME vramlab)
set(CPACK_PACKAGE_VENDOR "VRAM Lab")
set(CPACK_PACKAGE_CONTACT "VRAM Lab developers <dev@vramlab.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://vramlab.invalid")
include(CPack)
