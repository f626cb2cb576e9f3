"""tensorlib.serialization: checkpoints that survive crashes, hostile bytes and PyTorch (chapter 7).

Written by hand, re-exports only: each name lives in a module generated from
book/07_checkpointing.ipynb.
"""

from tensorlib.serialization import (
    atomic,
    checkpoint,
    nested,
    options,
    pt_writer,
    pytorch,
    reader,
    safetensors,
    tlckpt,
)
from tensorlib.serialization.atomic import atomic_write
from tensorlib.serialization.checkpoint import load_checkpoint, save_checkpoint
from tensorlib.serialization.nested import get_unsafe_globals_in_checkpoint, load, save
from tensorlib.serialization.options import (
    DEFAULT_PROTOCOL,
    INT_SIZE,
    LONG_SIZE,
    MAGIC_NUMBER,
    MAP_PRIVATE,
    MAP_SHARED,
    PROTOCOL_VERSION,
    SHORT_SIZE,
    STORAGE_KEY_SEPARATOR,
    LoadEndianness,
    SourceChangeWarning,
    check_module_version_greater_or_equal,
    default_restore_location,
    get_crc32_options,
    get_default_load_endianness,
    get_default_mmap_options,
    location_tag,
    mkdtemp,
    register_package,
    set_crc32_options,
    set_default_load_endianness,
    set_default_mmap_options,
    skip_data,
    validate_cuda_device,
)
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
    "add_safe_globals",
    "atomic",
    "atomic_write",
    "check_module_version_greater_or_equal",
    "checkpoint",
    "CheckpointError",
    "clear_safe_globals",
    "DEFAULT_PROTOCOL",
    "default_restore_location",
    "get_crc32_options",
    "get_default_load_endianness",
    "get_default_mmap_options",
    "get_safe_globals",
    "get_unsafe_globals_in_checkpoint",
    "INT_SIZE",
    "load",
    "load_checkpoint",
    "load_file",
    "load_model",
    "LoadEndianness",
    "location_tag",
    "LONG_SIZE",
    "MAGIC_NUMBER",
    "MAP_PRIVATE",
    "MAP_SHARED",
    "mkdtemp",
    "nested",
    "options",
    "PROTOCOL_VERSION",
    "pt_writer",
    "pytorch",
    "reader",
    "register_package",
    "safe_globals",
    "safetensors",
    "save",
    "save_checkpoint",
    "save_file",
    "save_model",
    "set_crc32_options",
    "set_default_load_endianness",
    "set_default_mmap_options",
    "SHORT_SIZE",
    "skip_data",
    "SourceChangeWarning",
    "STORAGE_KEY_SEPARATOR",
    "tlckpt",
    "validate_cuda_device",
    "write_pt",
]
