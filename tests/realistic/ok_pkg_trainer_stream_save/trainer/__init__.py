from .engine import Trainer

__all__ = ["Trainer"]
