"""tensorlib.utils: PyTorch's ``torch.utils`` names that tensorlib has.

Written by hand, re-exports only. Chapter 8 (A GPT, end to end): ``tensorlib.utils.tensorboard``
(``SummaryWriter``, which refuses, saying why), generated from book/08_gpt.ipynb.
"""
