"""What libraries do, for the value model: torch shapes and environment, einops patterns,
argparse options, runtime probes, signatures, methods that return self."""
