"""slimwheel's CMake package: ``include(slimwheel)`` (``slimwheel.cmake``), ``find_package(slimwheel
CONFIG)`` (``slimwheelConfig.cmake``), a ``FindCUDAToolkit`` that finds NVIDIA's pip wheels, and a
``cudss`` config with NVIDIA's target names.

scikit-build-core puts this folder on ``CMAKE_MODULE_PATH`` and ``CMAKE_PREFIX_PATH`` through the
``cmake.module`` and ``cmake.prefix`` entry points; ``slimwheel cmake-dir`` prints it for plain CMake.
"""

__all__: list[str] = []
