"""What builds a CUDA source and for which targets: setup.py, torch's JIT, JIT front-ends'
specs, Makefiles, shell scripts, CMake, and the build context of a file."""
