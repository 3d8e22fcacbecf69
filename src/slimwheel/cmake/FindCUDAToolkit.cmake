# FindCUDAToolkit on NVIDIA's pip wheels (slimwheel.cmake puts this folder first on CMAKE_MODULE_PATH).
#
# When the build environment has the CUDA runtime wheel, the CUDA:: targets CMake's own module
# defines are made on the wheels' versioned files (CUDA::cudart, CUDA::cublas, CUDA::cublasLt,
# CUDA::nvrtc, CUDA::cufft, CUDA::curand, CUDA::cusolver, CUDA::cusparse, CUDA::nvJitLink,
# CUDA::cupti, CUDA::toolkit), with the variables CUDAToolkit_FOUND, _VERSION(_MAJOR/_MINOR/_PATCH),
# _INCLUDE_DIRS, _LIBRARY_DIR, _BIN_DIR, _NVCC_EXECUTABLE. CUDA::cuda_driver is not defined: libcuda
# comes with the driver of the machine that runs the code (the wheels ship no stub to link against).
# Without the runtime wheel, CMake's own FindCUDAToolkit runs (a system toolkit).
include("${CMAKE_CURRENT_LIST_DIR}/slimwheel.cmake")
_slimwheel_import(_slimwheel_cuda cudart cublas cublasLt nvrtc cufft curand cusolver cusparse nvJitLink cupti)
if(NOT "cudart" IN_LIST _slimwheel_cuda)
  if(_SLIMWHEEL_LAST_ERROR)
    message(FATAL_ERROR "${_SLIMWHEEL_LAST_ERROR}")
  endif()
  include("${CMAKE_ROOT}/Modules/FindCUDAToolkit.cmake")
  return()
endif()

foreach(_slimwheel_name IN LISTS _slimwheel_cuda)
  if(NOT TARGET CUDA::${_slimwheel_name})
    add_library(CUDA::${_slimwheel_name} INTERFACE IMPORTED GLOBAL)
    target_link_libraries(CUDA::${_slimwheel_name} INTERFACE slimwheel::${_slimwheel_name})
  endif()
endforeach()
get_target_property(CUDAToolkit_INCLUDE_DIRS slimwheel::cudart INTERFACE_INCLUDE_DIRECTORIES)
get_target_property(CUDAToolkit_LIBRARY_DIR slimwheel::cudart SLIMWHEEL_FOLDER)
get_target_property(CUDAToolkit_VERSION slimwheel::cudart SLIMWHEEL_VERSION)
get_filename_component(CUDAToolkit_LIBRARY_ROOT "${CUDAToolkit_LIBRARY_DIR}" DIRECTORY)
if(NOT TARGET CUDA::toolkit)
  add_library(CUDA::toolkit INTERFACE IMPORTED GLOBAL)
  set_target_properties(CUDA::toolkit PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${CUDAToolkit_INCLUDE_DIRS}")
endif()
if("cublas" IN_LIST _slimwheel_cuda AND "cublasLt" IN_LIST _slimwheel_cuda)
  set_property(TARGET CUDA::cublas APPEND PROPERTY INTERFACE_LINK_LIBRARIES CUDA::cublasLt)
endif()
string(REGEX MATCH "^([0-9]+)\\.([0-9]+)\\.?([0-9]*)" _slimwheel_match "${CUDAToolkit_VERSION}")
set(CUDAToolkit_VERSION_MAJOR "${CMAKE_MATCH_1}")
set(CUDAToolkit_VERSION_MINOR "${CMAKE_MATCH_2}")
set(CUDAToolkit_VERSION_PATCH "${CMAKE_MATCH_3}")
# nvcc, when its wheel is there (quietly: a project may only link, not compile, CUDA).
_slimwheel_locate(_slimwheel_ok _slimwheel_script --nvcc)
if(_slimwheel_ok)
  include("${_slimwheel_script}")
  set(CUDAToolkit_NVCC_EXECUTABLE "${_SLIMWHEEL_NVCC}")
  set(CUDAToolkit_BIN_DIR "${_SLIMWHEEL_NVCC_ROOT}/bin")
  set(CUDAToolkit_ROOT_DIR "${_SLIMWHEEL_NVCC_ROOT}")
endif()
# CMake links -lcudart for "Shared", and the wheels have no unversioned libcudart.so: CUDA::cudart
# brings the shared runtime instead.
if(CMAKE_CUDA_RUNTIME_LIBRARY STREQUAL "Shared")
  set(CMAKE_CUDA_RUNTIME_LIBRARY None)
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CUDAToolkit
  REQUIRED_VARS CUDAToolkit_INCLUDE_DIRS CUDAToolkit_LIBRARY_DIR
  VERSION_VAR CUDAToolkit_VERSION)
