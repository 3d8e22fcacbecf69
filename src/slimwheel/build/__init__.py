"""Build-time helpers for CMake projects linking NVIDIA's pip wheels.

``slimwheel.build.locate`` finds each library's versioned file, headers and provider distribution in
the build interpreter's environment (what ``slimwheel_link_nvidia`` and ``slimwheel_enable_cuda`` in
``slimwheel/cmake/slimwheel.cmake`` ask at configure time) and records what was linked. Nothing is
imported here: ``python -m slimwheel.build.locate`` runs that module as ``__main__`` only once.
"""

__all__: list[str] = []
