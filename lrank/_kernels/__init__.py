"""numba kernels: arrays in, arrays out, one concern per module.

Modules are imported lazily by the plain-Python layers; importing :mod:`lrank` compiles nothing.
"""
