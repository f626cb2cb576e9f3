"""tensorlib.nn.utils: helpers around training, mirroring torch.nn.utils.

Written by hand, re-exports only.
"""

# Chapter 6, Optimizers: gradient clipping (tensorlib.nn.utils.clip_grad)
from tensorlib.nn.utils.clip_grad import clip_grad_norm_ as clip_grad_norm_
from tensorlib.nn.utils.clip_grad import clip_grad_value_ as clip_grad_value_

# Chapter 5, Attention: padding a batch of sequences (tensorlib.nn.utils.rnn)
from tensorlib.nn.utils import rnn as rnn
