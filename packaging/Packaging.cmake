# SPDX-License-Identifier: MIT
# Desktop integration and the Debian package (cpack -G DEB in a build folder; dependencies
# computed by dpkg-shlibdeps, so the package needs exactly the Qt it was built with).
if(VRAMLAB_BUILD_GUI)
  set(VRAMLAB_APP_ID io.github.vramlab.VramLab)
  install(FILES ${CMAKE_CURRENT_LIST_DIR}/${VRAMLAB_APP_ID}.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
  install(FILES ${CMAKE_CURRENT_LIST_DIR}/${VRAMLAB_APP_ID}.metainfo.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
  install(FILES ${CMAKE_CURRENT_LIST_DIR}/${VRAMLAB_APP_ID}.mime.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/mime/packages
          RENAME ${VRAMLAB_APP_ID}.xml)
  install(FILES ${PROJECT_SOURCE_DIR}/resources/icons/vramlab.svg DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps
          RENAME ${VRAMLAB_APP_ID}.svg)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/resources/scenarios/ DESTINATION ${CMAKE_INSTALL_DATADIR}/vramlab/scenarios)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_NAME vramlab)
set(CPACK_PACKAGE_VENDOR "VRAM Lab")
set(CPACK_PACKAGE_CONTACT "VRAM Lab developers <dev@vramlab.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_DESCRIPTION "VRAM Lab shows what each GPU holds when a large language model is trained, fine-tuned or
served (weights, master weights, gradients, optimizer states, activations, KV cache, overheads), with FLOPs and step
time: a desktop explorer (vramlab) and a command-line tool (vramlab-cli).")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://vramlab.invalid")
include(CPack)
