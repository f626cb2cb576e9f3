"""tensorlib: a deep learning library built from the tensor up, one chapter at a time.

This file is written by hand and only re-exports: every definition lives in a module
generated from a chapter of the book (see the header of each module).
"""

# Chapter 1, Tensors: shape algebra (tensorlib.shape)
from tensorlib.shape import broadcast_shapes as broadcast_shapes
from tensorlib.shape import sum_to_shape as sum_to_shape

# Chapter 2, Autograd: Tensor and its ops (tensorlib.tensor, tensorlib.autograd)
from tensorlib.tensor import Function as Function
from tensorlib.tensor import Tensor as Tensor
from tensorlib.tensor import abs as abs
from tensorlib.tensor import arange as arange
from tensorlib.tensor import argmax as argmax
from tensorlib.tensor import argmin as argmin
from tensorlib.tensor import bool_ as bool  # noqa: F401 (tensorlib.bool; "bool" would shadow the builtin in tensor.py)
from tensorlib.tensor import cat as cat
from tensorlib.tensor import chunk as chunk
from tensorlib.tensor import clamp as clamp
from tensorlib.tensor import concat as concat
from tensorlib.tensor import double as double
from tensorlib.tensor import empty as empty
from tensorlib.tensor import empty_like as empty_like
from tensorlib.tensor import enable_grad as enable_grad
from tensorlib.tensor import exp as exp
from tensorlib.tensor import eye as eye
from tensorlib.tensor import flatten as flatten
from tensorlib.tensor import float16 as float16
from tensorlib.tensor import float32 as float32
from tensorlib.tensor import float64 as float64
from tensorlib.tensor import from_numpy as from_numpy
from tensorlib.tensor import full as full
from tensorlib.tensor import full_like as full_like
from tensorlib.tensor import int8 as int8
from tensorlib.tensor import int16 as int16
from tensorlib.tensor import int32 as int32
from tensorlib.tensor import int64 as int64
from tensorlib.tensor import is_grad_enabled as is_grad_enabled
from tensorlib.tensor import is_tensor as is_tensor
from tensorlib.tensor import linspace as linspace
from tensorlib.tensor import log as log
from tensorlib.tensor import log_softmax as log_softmax
from tensorlib.tensor import long as long
from tensorlib.tensor import masked_fill as masked_fill
from tensorlib.tensor import matmul as matmul
from tensorlib.tensor import max as max
from tensorlib.tensor import maximum as maximum
from tensorlib.tensor import mean as mean
from tensorlib.tensor import min as min
from tensorlib.tensor import minimum as minimum
from tensorlib.tensor import no_grad as no_grad
from tensorlib.tensor import numel as numel
from tensorlib.tensor import ones as ones
from tensorlib.tensor import ones_like as ones_like
from tensorlib.tensor import permute as permute
from tensorlib.tensor import relu as relu
from tensorlib.tensor import reshape as reshape
from tensorlib.tensor import set_grad_enabled as set_grad_enabled
from tensorlib.tensor import sigmoid as sigmoid
from tensorlib.tensor import softmax as softmax
from tensorlib.tensor import split as split
from tensorlib.tensor import sqrt as sqrt
from tensorlib.tensor import squeeze as squeeze
from tensorlib.tensor import stack as stack
from tensorlib.tensor import sum as sum
from tensorlib.tensor import tanh as tanh
from tensorlib.tensor import tensor as tensor
from tensorlib.tensor import transpose as transpose
from tensorlib.tensor import tril as tril
from tensorlib.tensor import triu as triu
from tensorlib.tensor import uint8 as uint8
from tensorlib.tensor import unsqueeze as unsqueeze
from tensorlib.tensor import var as var
from tensorlib.tensor import where as where
from tensorlib.tensor import zeros as zeros
from tensorlib.tensor import zeros_like as zeros_like
from tensorlib import autograd as autograd  # tensorlib.autograd.gradcheck, .grad
from tensorlib import nn as nn  # tensorlib.nn.functional

# Chapter 3, Initialization: random numbers (tensorlib.random)
from tensorlib.random import Generator as Generator
from tensorlib.random import bernoulli as bernoulli
from tensorlib.random import default_generator as default_generator
from tensorlib.random import get_rng_state as get_rng_state
from tensorlib.random import initial_seed as initial_seed
from tensorlib.random import manual_seed as manual_seed
from tensorlib.random import rand as rand
from tensorlib.random import randint as randint
from tensorlib.random import randn as randn
from tensorlib.random import randperm as randperm
from tensorlib.random import set_rng_state as set_rng_state

__version__ = "0.1.0"
