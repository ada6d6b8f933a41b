"""Facts of the machine and the process, with no dependency inside Hearth: CPU topology and SIMD
level (`topology`, and `cpu_mask.c`, which hides CPUID features), the cache directory and the C heap
(`process`), and the switches that keep dependencies from reporting home (`privacy`)."""
