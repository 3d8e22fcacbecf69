"""Builds with CMake against NVIDIA's pip wheels, the system CUDA toolkit hidden."""
