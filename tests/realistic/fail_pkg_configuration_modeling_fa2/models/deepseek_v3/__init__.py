from .configuration_deepseek_v3 import DeepseekV3Config
from .modeling_deepseek_v3 import DeepseekV3Attention

__all__ = ["DeepseekV3Attention", "DeepseekV3Config"]
