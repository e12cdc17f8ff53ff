"""What libraries do, for the value model: torch shapes and environment, einops patterns,
argparse options, runtime probes, signatures, test frameworks' marks and exits. ``table.py``
gathers them (with version_matrix/returns_self.toml and dispatch.toml ``[selection.*]``) into
the one library table the engine hands to the value model, which names no library itself."""
