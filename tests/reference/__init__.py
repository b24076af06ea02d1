"""Plain-NumPy references, straight from the papers, one module per concern; kernels are tested
against them."""
