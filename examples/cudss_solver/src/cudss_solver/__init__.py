"""cuDSS from NVIDIA's pip wheels (nvidia-cudss-cu13), through a C extension built on the limited API.

``cudss_version()`` and ``cuda_runtime_version()`` need no GPU; ``solve_poisson3d(n)`` does.
The torch binding is a package of its own, ``cudss_solver_torch`` (the ``cudss-solver-torch``
distribution, or a build with the torch framework): it solves a torch CSR tensor on the GPU.
"""

from cudss_solver._cudss_solver import cuda_runtime_version, cudss_version, solve_poisson3d

__all__ = ["cuda_runtime_version", "cudss_version", "solve_poisson3d"]
__version__ = "0.1.0"
