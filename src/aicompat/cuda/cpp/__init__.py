"""CUDA C++ and PTX text: includes, the preprocessor, the C++ model of what a target emits,
the feature scan and its verdicts per compile target."""
