"""A module's text and tree: the lean walk, the module index, node positions, suppression
comments and notebooks as one module."""
