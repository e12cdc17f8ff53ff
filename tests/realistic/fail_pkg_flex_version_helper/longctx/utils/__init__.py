from .import_utils import is_torch_greater_or_equal

__all__ = ["is_torch_greater_or_equal"]
