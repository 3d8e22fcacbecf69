# find_package(cudss CONFIG) on the cuDSS wheel: the names NVIDIA's own cuDSS config gives (the
# target `cudss`; cudss_INCLUDE_DIR, cudss_LIBRARY_DIR, cudss_VERSION), on the versioned file (the
# wheel ships no unversioned libcudss.so). Not provided: `cudss_static` (the wheel has no static
# library) and the comm/threading layers as targets (cuDSS loads them itself when asked).
include("${CMAKE_CURRENT_LIST_DIR}/../slimwheel.cmake")
_slimwheel_import(_slimwheel_cudss cudss)
if(NOT "cudss" IN_LIST _slimwheel_cudss)
  set(cudss_FOUND FALSE)
  if(_SLIMWHEEL_LAST_ERROR)
    set(cudss_NOT_FOUND_MESSAGE "${_SLIMWHEEL_LAST_ERROR}")
  else()
    set(cudss_NOT_FOUND_MESSAGE "no cuDSS wheel in the build environment: add nvidia-cudss-cu13 (or -cu12) to build-system.requires")
  endif()
  return()
endif()
if(NOT TARGET cudss)
  add_library(cudss INTERFACE IMPORTED GLOBAL)
  target_link_libraries(cudss INTERFACE slimwheel::cudss)
endif()
get_target_property(cudss_INCLUDE_DIR slimwheel::cudss INTERFACE_INCLUDE_DIRECTORIES)
get_target_property(cudss_LIBRARY slimwheel::cudss IMPORTED_LOCATION)
get_target_property(cudss_LIBRARY_DIR slimwheel::cudss SLIMWHEEL_FOLDER)
get_target_property(cudss_VERSION slimwheel::cudss SLIMWHEEL_VERSION)
set(cudss_FOUND TRUE)
