"""tensorlib: a deep learning library built from the tensor up, one chapter at a time.

This file is written by hand and only re-exports: every definition lives in a module
generated from a chapter of the book (see the header of each module).
"""

# Chapter 1, Tensors: shape algebra (tensorlib.shape)
from tensorlib.shape import broadcast_shapes as broadcast_shapes
from tensorlib.shape import sum_to_shape as sum_to_shape

# Chapter 2, Autograd: Tensor and its ops (tensorlib.engine, tensorlib.autograd)
from tensorlib.engine import Function as Function
from tensorlib.engine import Tensor as Tensor
from tensorlib.engine import abs as abs
from tensorlib.engine import allclose as allclose
from tensorlib.engine import arange as arange
from tensorlib.engine import argmax as argmax
from tensorlib.engine import argmin as argmin
from tensorlib.engine import bmm as bmm
from tensorlib.engine import bool_ as bool  # noqa: F401 (tensorlib.bool; "bool" would shadow the builtin in engine.py)
from tensorlib.engine import as_device as as_device
from tensorlib.engine import cat as cat
from tensorlib.engine import chunk as chunk
from tensorlib.engine import clamp as clamp
from tensorlib.engine import concat as concat
from tensorlib.engine import cos as cos
from tensorlib.engine import cuda as cuda  # tensorlib.cuda.is_available() -> False
from tensorlib.engine import cumsum as cumsum
from tensorlib.engine import device as device
from tensorlib.engine import double as double
from tensorlib.engine import empty as empty
from tensorlib.engine import empty_like as empty_like
from tensorlib.engine import enable_grad as enable_grad
from tensorlib.engine import exp as exp
from tensorlib.engine import eye as eye
from tensorlib.engine import flatten as flatten
from tensorlib.engine import float16 as float16
from tensorlib.engine import float32 as float32
from tensorlib.engine import float64 as float64
from tensorlib.engine import gather as gather
from tensorlib.engine import float16 as half
from tensorlib.engine import float32 as float  # noqa: F401 (tensorlib.float, like torch.float; shadows the builtin here only)
from tensorlib.engine import from_numpy as from_numpy
from tensorlib.engine import full as full
from tensorlib.engine import full_like as full_like
from tensorlib.engine import inf as inf
from tensorlib.engine import int8 as int8
from tensorlib.engine import int16 as int16
from tensorlib.engine import int32 as int32
from tensorlib.engine import int64 as int64
from tensorlib.engine import int32 as int  # noqa: F401 (tensorlib.int, like torch.int)
from tensorlib.engine import is_grad_enabled as is_grad_enabled
from tensorlib.engine import is_tensor as is_tensor
from tensorlib.engine import linspace as linspace
from tensorlib.engine import log as log
from tensorlib.engine import log1p as log1p
from tensorlib.engine import log_softmax as log_softmax
from tensorlib.engine import long as long
from tensorlib.engine import masked_fill as masked_fill
from tensorlib.engine import matmul as matmul
from tensorlib.engine import max as max
from tensorlib.engine import maximum as maximum
from tensorlib.engine import mean as mean
from tensorlib.engine import min as min
from tensorlib.engine import minimum as minimum
from tensorlib.engine import nan as nan
from tensorlib.engine import no_grad as no_grad
from tensorlib.engine import norm as norm
from tensorlib.engine import numel as numel
from tensorlib.engine import ones as ones
from tensorlib.engine import ones_like as ones_like
from tensorlib.engine import outer as outer
from tensorlib.engine import permute as permute
from tensorlib.engine import relu as relu
from tensorlib.engine import reshape as reshape
from tensorlib.engine import rsqrt as rsqrt
from tensorlib.engine import set_grad_enabled as set_grad_enabled
from tensorlib.engine import sigmoid as sigmoid
from tensorlib.engine import sin as sin
from tensorlib.engine import softmax as softmax
from tensorlib.engine import sort as sort
from tensorlib.engine import split as split
from tensorlib.engine import sqrt as sqrt
from tensorlib.engine import square as square
from tensorlib.engine import squeeze as squeeze
from tensorlib.engine import stack as stack
from tensorlib.engine import sum as sum
from tensorlib.engine import tanh as tanh
from tensorlib.engine import tensor as tensor
from tensorlib.engine import topk as topk
from tensorlib.engine import transpose as transpose
from tensorlib.engine import tril as tril
from tensorlib.engine import triu as triu
from tensorlib.engine import uint8 as uint8
from tensorlib.engine import unsqueeze as unsqueeze
from tensorlib.engine import var as var
from tensorlib.engine import where as where
from tensorlib.engine import zeros as zeros
from tensorlib.engine import zeros_like as zeros_like
from tensorlib import autograd as autograd  # tensorlib.autograd.grad, .backward, .gradcheck, .Function
from tensorlib import nn as nn  # tensorlib.nn.functional

# Chapter 3, Initialization: random numbers (tensorlib.random)
from tensorlib.random import Generator as Generator
from tensorlib.random import bernoulli as bernoulli
from tensorlib.random import default_generator as default_generator
from tensorlib.random import get_rng_state as get_rng_state
from tensorlib.random import initial_seed as initial_seed
from tensorlib.random import manual_seed as manual_seed
from tensorlib.random import multinomial as multinomial
from tensorlib.random import rand as rand
from tensorlib.random import rand_like as rand_like
from tensorlib.random import randint as randint
from tensorlib.random import randint_like as randint_like
from tensorlib.random import randn as randn
from tensorlib.random import randn_like as randn_like
from tensorlib.random import randperm as randperm
from tensorlib.random import set_rng_state as set_rng_state

__version__ = "0.1.0"
