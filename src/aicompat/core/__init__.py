"""One traversal per file (the engine) and the rule contract (ruleapi): the only door the
rules use."""
