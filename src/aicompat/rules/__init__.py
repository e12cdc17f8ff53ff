"""The rules, one module each. The registry (which rules run, every code ever
assigned) is ``aicompat.rules.registry``; the rule API is ``aicompat.core.ruleapi``."""
