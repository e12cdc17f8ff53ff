"""CMake, read statically: the parser, conditions, variables, targets and the build models."""
