"""tensorlib.serialization: checkpoints that survive crashes, hostile bytes and PyTorch (chapter 7).

Written by hand, re-exports only: each name lives in a module generated from
book/07_checkpointing.ipynb.
"""

from tensorlib.serialization import (
    atomic,
    checkpoint,
    nested,
    pt_writer,
    pytorch,
    reader,
    safetensors,
    tlckpt,
)
from tensorlib.serialization.atomic import atomic_write
from tensorlib.serialization.checkpoint import load_checkpoint, save_checkpoint
from tensorlib.serialization.nested import get_unsafe_globals_in_checkpoint, load, save
from tensorlib.serialization.pt_writer import write_pt
from tensorlib.serialization.pytorch import (
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    safe_globals,
)
from tensorlib.serialization.reader import CheckpointError
from tensorlib.serialization.safetensors import load_file, load_model, save_file, save_model

__all__ = [
    "CheckpointError",
    "add_safe_globals",
    "atomic",
    "atomic_write",
    "checkpoint",
    "clear_safe_globals",
    "get_safe_globals",
    "get_unsafe_globals_in_checkpoint",
    "load",
    "load_checkpoint",
    "load_file",
    "load_model",
    "nested",
    "pt_writer",
    "pytorch",
    "reader",
    "safe_globals",
    "safetensors",
    "save",
    "save_checkpoint",
    "save_file",
    "save_model",
    "tlckpt",
    "write_pt",
]
