"""tensorlib.optim: optimizers and learning-rate schedules, mirroring torch.optim.

Written by hand, re-exports only.
"""

# Chapter 6, Optimizers (tensorlib.optim.*)
from tensorlib.optim import lr_scheduler as lr_scheduler
from tensorlib.optim import swa_utils as swa_utils
from tensorlib.optim.lr_scheduler import warmup_cosine as warmup_cosine
from tensorlib.optim.adadelta import Adadelta as Adadelta
from tensorlib.optim.adafactor import Adafactor as Adafactor
from tensorlib.optim.adagrad import Adagrad as Adagrad
from tensorlib.optim.adam import Adam as Adam
from tensorlib.optim.adam import AdamW as AdamW
from tensorlib.optim.adamax import Adamax as Adamax
from tensorlib.optim.asgd import ASGD as ASGD
from tensorlib.optim.lbfgs import LBFGS as LBFGS
from tensorlib.optim.muon import Muon as Muon
from tensorlib.optim.nadam import NAdam as NAdam
from tensorlib.optim.optimizer import Optimizer as Optimizer
from tensorlib.optim.optimizer import decay_groups as decay_groups
from tensorlib.optim.radam import RAdam as RAdam
from tensorlib.optim.rmsprop import RMSprop as RMSprop
from tensorlib.optim.rprop import Rprop as Rprop
from tensorlib.optim.sgd import SGD as SGD
