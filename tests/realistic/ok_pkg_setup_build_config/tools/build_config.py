"""CUDA archs the fused kernels are compiled for."""
CUDA_ARCHS = ["80", "90"]


def gencode_flags(archs=CUDA_ARCHS) -> list:
    flags = [f"-gencode=arch=compute_{arch},code=sm_{arch}" for arch in archs]
    # PTX for the newest arch, so GPUs newer than the list can JIT it
    newest = archs[-1]
    flags.append(f"-gencode=arch=compute_{newest},code=compute_{newest}")
    return flags
