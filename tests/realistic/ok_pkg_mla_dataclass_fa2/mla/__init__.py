from .config import ModelArgs
from .model import MLA

__all__ = ["MLA", "ModelArgs"]
