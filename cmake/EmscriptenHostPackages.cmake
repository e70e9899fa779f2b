# Makes Debian's header-only Eigen and nlohmann_json visible to find_package under emcmake
# without adding /usr/include (which would shadow the Emscripten sysroot's libc headers).
set(_overlay "${CMAKE_BINARY_DIR}/host-overlay")
file(MAKE_DIRECTORY "${_overlay}/include" "${_overlay}/share")
foreach(_hdr nlohmann eigen3)
  if(NOT EXISTS "${_overlay}/include/${_hdr}")
    file(CREATE_LINK "/usr/include/${_hdr}" "${_overlay}/include/${_hdr}" SYMBOLIC)
  endif()
endforeach()
# Copies (not links) of the CMake package folders, so their relative include paths resolve
# inside the overlay instead of /usr.
foreach(_pkg eigen3/cmake cmake/nlohmann_json)
  get_filename_component(_name "${_pkg}" DIRECTORY)
  file(COPY "/usr/share/${_pkg}" DESTINATION "${_overlay}/share/${_name}")
endforeach()
list(APPEND CMAKE_FIND_ROOT_PATH "${_overlay}")
set(Eigen3_DIR "${_overlay}/share/eigen3/cmake" CACHE PATH "" FORCE)
set(nlohmann_json_DIR "${_overlay}/share/cmake/nlohmann_json" CACHE PATH "" FORCE)
