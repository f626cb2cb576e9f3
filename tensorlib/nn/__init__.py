"""tensorlib.nn: layers, losses and initialisation, mirroring torch.nn.

Written by hand, re-exports only.
"""
