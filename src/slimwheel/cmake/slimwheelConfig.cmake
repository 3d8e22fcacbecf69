# find_package(slimwheel CONFIG) with CMAKE_PREFIX_PATH=$(slimwheel cmake-dir --prefix).
include("${CMAKE_CURRENT_LIST_DIR}/slimwheel.cmake")
set(slimwheel_FOUND TRUE)
