"""tensorlib.nn.utils: helpers around training, mirroring torch.nn.utils.

Written by hand, re-exports only.
"""

# Chapter 6, Optimizers: gradient clipping (tensorlib.nn.utils.clip_grad)
from tensorlib.nn.utils.clip_grad import clip_grad_norm as clip_grad_norm
from tensorlib.nn.utils.clip_grad import clip_grad_norm_ as clip_grad_norm_
from tensorlib.nn.utils.clip_grad import clip_grads_with_norm_ as clip_grads_with_norm_
from tensorlib.nn.utils.clip_grad import clip_grad_value_ as clip_grad_value_
from tensorlib.nn.utils.clip_grad import get_total_norm as get_total_norm

# Chapter 5, Attention: padding a batch of sequences (tensorlib.nn.utils.rnn)
from tensorlib.nn.utils import rnn as rnn

# Chapter 4, Layers, sections 11.1 and 11.2: parameters as one vector, parametrizations,
# functional_call, weight and spectral normalisation (tensorlib.nn.utils.convert_parameters,
# .parametrize, .stateless, .parametrizations, .weight_norm)
# isort: split
from tensorlib.nn.utils import parametrizations as parametrizations
from tensorlib.nn.utils import parametrize as parametrize
from tensorlib.nn.utils import stateless as stateless
from tensorlib.nn.utils.convert_parameters import parameters_to_vector as parameters_to_vector
from tensorlib.nn.utils.convert_parameters import vector_to_parameters as vector_to_parameters
from tensorlib.nn.utils.weight_norm import remove_weight_norm as remove_weight_norm
from tensorlib.nn.utils.weight_norm import legacy_weight_norm as weight_norm

# Chapter 4, Layers, section 11.4: pruning (tensorlib.nn.utils.prune)
from tensorlib.nn.utils import prune as prune

# Chapter 4, Layers, section 11.8: spectral norm by hook, fusing batch norm into the layer before
# it, skip_init (tensorlib.nn.utils.spectral_norm, .fusion, .init)
# isort: split
from tensorlib.nn.utils import fusion as fusion
from tensorlib.nn.utils.fusion import fuse_conv_bn_eval as fuse_conv_bn_eval
from tensorlib.nn.utils.fusion import fuse_conv_bn_weights as fuse_conv_bn_weights
from tensorlib.nn.utils.fusion import fuse_linear_bn_eval as fuse_linear_bn_eval
from tensorlib.nn.utils.fusion import fuse_linear_bn_weights as fuse_linear_bn_weights
from tensorlib.nn.utils.init import skip_init as skip_init
from tensorlib.nn.utils.spectral_norm import legacy_spectral_norm as spectral_norm
from tensorlib.nn.utils.spectral_norm import remove_spectral_norm as remove_spectral_norm
