"""tensorlib: a deep learning library built from the tensor up, one chapter at a time.

This file is written by hand and only re-exports: every definition lives in a module
generated from a chapter of the book (see the header of each module).
"""

# Chapter 1, Tensors: shape algebra (tensorlib.shape)

# Chapter 2, Autograd: Tensor and its ops (tensorlib.tensor, tensorlib.autograd)

# Chapter 3, Initialization: random numbers (tensorlib.random)

__version__ = "0.1.0"
