# slimwheel.cmake: link NVIDIA's pip wheels from CMake, with no system CUDA toolkit.
#
#   include(slimwheel)                       # scikit-build-core: slimwheel in build-system.requires
#   slimwheel_enable_cuda()                  # before .cu sources: nvcc from nvidia-cuda-nvcc
#   slimwheel_link_nvidia(<target> [PUBLIC|PRIVATE|INTERFACE] <lib>... [INSTALL_DIR <dir>] [RUNPATH]
#                         [KEEP_UNUSED])
#
# Everything is found at configure time by the build interpreter (Python_EXECUTABLE, as
# scikit-build-core sets it; it sees the isolated build environment) running
# `python -m slimwheel.build.locate`, which reads installed distributions' RECORD: NVIDIA's wheels
# ship only versioned files (libcudss.so.1), so find_library on unversioned names cannot work.
# Including this file also puts slimwheel's FindCUDAToolkit (CUDA:: targets on the wheels) and its
# cudss config (find_package(cudss CONFIG)) in front of CMake's own, so CMake written for a system
# toolkit keeps working. Not provided: CUDA::cuda_driver (libcuda comes with the driver of the
# machine that runs the code; link nothing for it and load it at run time).
#
# Variables: SLIMWHEEL_CUDA_MAJOR (cache; empty: the one installed), SLIMWHEEL_INSTALL_DIR (the
# default INSTALL_DIR), SLIMWHEEL_LINK_RECORD (where what was linked is recorded, as JSON),
# SLIMWHEEL_STATIC_LIBRARIES (libraries linked from their lib<name>_static.a: static-fallback).
#
# With CMake 3.24 or newer, the NVIDIA libraries are linked --as-needed (and nothing else is): one the
# target calls nothing of gets no DT_NEEDED entry, so the wheel does not require its distribution,
# whatever the toolchain's default (manylinux's gcc links every library named; Ubuntu's, as needed).
# KEEP_UNUSED links each one named, --no-as-needed (one wanted for what loading it does).

include_guard(GLOBAL)
if(CMAKE_VERSION VERSION_LESS 3.18)
  message(FATAL_ERROR "slimwheel.cmake needs CMake 3.18 or newer (this is ${CMAKE_VERSION})")
endif()

set(SLIMWHEEL_CMAKE_DIR "${CMAKE_CURRENT_LIST_DIR}")
# Our FindCUDAToolkit wins over CMake's (module path), our cudss config is found (prefix path).
list(PREPEND CMAKE_MODULE_PATH "${SLIMWHEEL_CMAKE_DIR}")
list(APPEND CMAKE_PREFIX_PATH "${SLIMWHEEL_CMAKE_DIR}")
set(SLIMWHEEL_CUDA_MAJOR "" CACHE STRING "CUDA major to build for (empty: the one the installed wheels have)")
if(NOT DEFINED SLIMWHEEL_LINK_RECORD)
  set(SLIMWHEEL_LINK_RECORD "${CMAKE_BINARY_DIR}/slimwheel-linked.json")
endif()
# A fresh record per configure: what this configure links, nothing left from an earlier one.
file(REMOVE "${SLIMWHEEL_LINK_RECORD}")
# --as-needed around the NVIDIA libraries alone (see slimwheel_link_nvidia): a target's other
# libraries keep the toolchain's default (PyTorch's libtorch_cuda must not be dropped so).
foreach(_slimwheel_mode as_needed no_as_needed)
  string(REPLACE "_" "-" _slimwheel_flag "--${_slimwheel_mode}")
  set(CMAKE_LINK_LIBRARY_USING_slimwheel_${_slimwheel_mode}
      "LINKER:--push-state,${_slimwheel_flag}" "<LINK_ITEM>" "LINKER:--pop-state")
  set(CMAKE_LINK_LIBRARY_USING_slimwheel_${_slimwheel_mode}_SUPPORTED TRUE)
endforeach()

function(_slimwheel_python out)
  foreach(variable IN ITEMS Python_EXECUTABLE Python3_EXECUTABLE PYTHON_EXECUTABLE)
    if(${variable})
      set(${out} "${${variable}}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  find_package(Python COMPONENTS Interpreter REQUIRED)
  set(${out} "${Python_EXECUTABLE}" PARENT_SCOPE)
endfunction()

# Runs the locator; on success sets <ok> TRUE and writes <script> (CMake set() lines), else sets
# <ok> FALSE and _SLIMWHEEL_LAST_ERROR to its one-line message.
function(_slimwheel_locate ok script)
  _slimwheel_python(python)
  set(cuda_args)
  if(SLIMWHEEL_CUDA_MAJOR)
    set(cuda_args --cuda "${SLIMWHEEL_CUDA_MAJOR}")
  endif()
  string(MD5 key "${ARGN}")
  set(file "${CMAKE_BINARY_DIR}/CMakeFiles/slimwheel/located-${key}.cmake")
  execute_process(
    COMMAND "${python}" -m slimwheel.build.locate ${cuda_args} --cmake "${file}" ${ARGN}
    RESULT_VARIABLE result
    ERROR_VARIABLE error
    OUTPUT_QUIET)
  if(result EQUAL 0)
    set(${ok} TRUE PARENT_SCOPE)
    set(${script} "${file}" PARENT_SCOPE)
    return()
  endif()
  if(error MATCHES "No module named '?slimwheel")
    set(error "slimwheel is not installed for ${python}: add slimwheel to build-system.requires")
  else()
    string(STRIP "${error}" error)
    string(REGEX REPLACE "^slimwheel: " "" error "${error}")
  endif()
  set(${ok} FALSE PARENT_SCOPE)
  set(_SLIMWHEEL_LAST_ERROR "${error}" PARENT_SCOPE)
endfunction()

# slimwheel::<name>: an IMPORTED SHARED target on the versioned file, from the variables an
# included locator script set.
macro(_slimwheel_define_target name)
  if(NOT TARGET slimwheel::${name} AND _SLIMWHEEL_${name}_STATIC)
    # lib<name>_static.a (SLIMWHEEL_STATIC_LIBRARIES, the backend's static-fallback): linked into the
    # target, so nothing to load at run time. NVIDIA's static archives need the dynamic loader,
    # threads and librt from the C library, as their documentation says.
    add_library(slimwheel::${name} STATIC IMPORTED GLOBAL)
    set_target_properties(slimwheel::${name} PROPERTIES
      IMPORTED_LOCATION "${_SLIMWHEEL_${name}_PATH}"
      INTERFACE_INCLUDE_DIRECTORIES "${_SLIMWHEEL_${name}_INCLUDE_DIRS}"
      INTERFACE_LINK_LIBRARIES "pthread;dl;rt"
      SLIMWHEEL_DISTRIBUTION "${_SLIMWHEEL_${name}_DISTRIBUTION}"
      SLIMWHEEL_VERSION "${_SLIMWHEEL_${name}_VERSION}"
      SLIMWHEEL_FOLDER "${_SLIMWHEEL_${name}_FOLDER}")
  elseif(NOT TARGET slimwheel::${name})
    add_library(slimwheel::${name} SHARED IMPORTED GLOBAL)
    set_target_properties(slimwheel::${name} PROPERTIES
      IMPORTED_LOCATION "${_SLIMWHEEL_${name}_PATH}"
      IMPORTED_SONAME "${_SLIMWHEEL_${name}_SONAME}"
      INTERFACE_INCLUDE_DIRECTORIES "${_SLIMWHEEL_${name}_INCLUDE_DIRS}"
      # ld follows the library's own NEEDED (libcudss -> libcublas) at link time; nothing is embedded.
      INTERFACE_LINK_OPTIONS "LINKER:-rpath-link,${_SLIMWHEEL_${name}_FOLDER}"
      SLIMWHEEL_DISTRIBUTION "${_SLIMWHEEL_${name}_DISTRIBUTION}"
      SLIMWHEEL_VERSION "${_SLIMWHEEL_${name}_VERSION}"
      SLIMWHEEL_FOLDER "${_SLIMWHEEL_${name}_FOLDER}")
  endif()
endmacro()

# For FindCUDAToolkit and the cudss config: slimwheel::<name> for each library a wheel ships, quietly.
# Sets <found> to the names defined.
function(_slimwheel_import found)
  _slimwheel_locate(ok script --optional ${ARGN})
  if(NOT ok)
    set(${found} "" PARENT_SCOPE)
    set(_SLIMWHEEL_LAST_ERROR "${_SLIMWHEEL_LAST_ERROR}" PARENT_SCOPE)
    return()
  endif()
  include("${script}")
  foreach(name IN LISTS _SLIMWHEEL_LOCATED)
    _slimwheel_define_target(${name})
  endforeach()
  set(${found} "${_SLIMWHEEL_LOCATED}" PARENT_SCOPE)
  set(_SLIMWHEEL_IMPORTED_MAJOR "${_SLIMWHEEL_LOCATED_MAJOR}" PARENT_SCOPE)
endfunction()

function(slimwheel_link_nvidia target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "RUNPATH;KEEP_UNUSED" "INSTALL_DIR" "")
  if(NOT TARGET "${target}")
    message(FATAL_ERROR "slimwheel_link_nvidia: ${target} is not a target (call it after add_library)")
  endif()
  set(scope PRIVATE)
  set(libraries)
  foreach(item IN LISTS arg_UNPARSED_ARGUMENTS)
    if(item MATCHES "^(PUBLIC|PRIVATE|INTERFACE)$")
      set(scope "${item}")
    else()
      list(APPEND libraries "${item}")
    endif()
  endforeach()
  if(NOT libraries)
    message(FATAL_ERROR "slimwheel_link_nvidia(${target}): name at least one library (cudss, cudart, cublas...)")
  endif()
  if(NOT DEFINED arg_INSTALL_DIR AND DEFINED SLIMWHEEL_INSTALL_DIR)
    set(arg_INSTALL_DIR "${SLIMWHEEL_INSTALL_DIR}")
  endif()
  set(install_args)
  if(DEFINED arg_INSTALL_DIR)
    set(install_args --install-dir "${arg_INSTALL_DIR}")
  endif()
  set(static_args)
  foreach(name IN LISTS SLIMWHEEL_STATIC_LIBRARIES)
    list(APPEND static_args --static "${name}")
  endforeach()
  _slimwheel_locate(ok script --record "${SLIMWHEEL_LINK_RECORD}" --target "${target}" ${install_args}
                    ${static_args} ${libraries})
  if(NOT ok)
    message(FATAL_ERROR "${_SLIMWHEEL_LAST_ERROR}")
  endif()
  include("${script}")
  set(rpath)
  foreach(name IN LISTS _SLIMWHEEL_LOCATED)
    _slimwheel_define_target(${name})
    if(_SLIMWHEEL_${name}_STATIC OR CMAKE_VERSION VERSION_LESS 3.24)
      target_link_libraries("${target}" ${scope} slimwheel::${name})
    else()
      set(mode as_needed)
      if(arg_KEEP_UNUSED)
        set(mode no_as_needed)
      endif()
      target_link_libraries("${target}" ${scope} "$<LINK_LIBRARY:slimwheel_${mode},slimwheel::${name}>")
    endif()
    if(name STREQUAL "cudart")
      # The runtime is linked as a shared library: nvcc must not add its static copy too.
      set_property(TARGET "${target}" PROPERTY CUDA_RUNTIME_LIBRARY None)
    endif()
    if(_SLIMWHEEL_${name}_STATIC)
      # One line in the build log: this library is inside the target, not required at run time.
      message(STATUS "slimwheel: ${target} links ${name} statically from ${_SLIMWHEEL_${name}_PATH} "
                     "(${_SLIMWHEEL_${name}_DISTRIBUTION} ${_SLIMWHEEL_${name}_VERSION})")
      continue()
    endif()
    list(APPEND rpath "${_SLIMWHEEL_${name}_RPATH}")
    message(STATUS "slimwheel: ${target} links ${_SLIMWHEEL_${name}_SONAME} from "
                   "${_SLIMWHEEL_${name}_DISTRIBUTION} ${_SLIMWHEEL_${name}_VERSION}")
  endforeach()
  if(DEFINED arg_INSTALL_DIR)
    get_target_property(previous "${target}" INSTALL_RPATH)
    if(previous)
      list(PREPEND rpath ${previous})
    endif()
    list(REMOVE_DUPLICATES rpath)
    list(REMOVE_ITEM rpath "")
    # Built with its install RPATH: nothing in the binary depends on the (random, isolated) build
    # environment's path, so isolated and non-isolated builds give the same bytes.
    set_target_properties("${target}" PROPERTIES INSTALL_RPATH "${rpath}" BUILD_WITH_INSTALL_RPATH ON)
    if(arg_RUNPATH)
      target_link_options("${target}" PRIVATE "LINKER:--enable-new-dtags")
    else()
      # RPATH, not RUNPATH: it also serves the NVIDIA libraries' own dependencies, and
      # LD_LIBRARY_PATH cannot put another copy first.
      target_link_options("${target}" PRIVATE "LINKER:--disable-new-dtags")
    endif()
  endif()
endfunction()

# nvcc from the nvidia-cuda-nvcc wheel, and CUDA architectures, then enable_language(CUDA).
macro(slimwheel_enable_cuda)
  _slimwheel_locate(_slimwheel_ok _slimwheel_script --nvcc)
  if(NOT _slimwheel_ok)
    message(FATAL_ERROR "${_SLIMWHEEL_LAST_ERROR}")
  endif()
  include("${_slimwheel_script}")
  if(NOT CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_COMPILER "${_SLIMWHEEL_NVCC}")
  endif()
  set(CUDAToolkit_ROOT "${_SLIMWHEEL_NVCC_ROOT}")
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
    # Real code for the GPUs of each major's support window, and PTX of the newest for what follows.
    if(_SLIMWHEEL_NVCC_MAJOR GREATER_EQUAL 13)
      set(CMAKE_CUDA_ARCHITECTURES "75-real;80-real;86-real;89-real;90-real;100-real;120")
    else()
      set(CMAKE_CUDA_ARCHITECTURES "70-real;75-real;80-real;86-real;89-real;90")
    endif()
  endif()
  message(STATUS "slimwheel: nvcc ${_SLIMWHEEL_NVCC_VERSION} from ${_SLIMWHEEL_NVCC_DISTRIBUTION}, "
                 "architectures ${CMAKE_CUDA_ARCHITECTURES}")
  enable_language(CUDA)
endmacro()
