# Compiled as nvcc --default-stream per-thread compiles a program: the
# stream-taking calls become their _ptsz/_ptds entry points.
target_compile_options(${gvs_target} PRIVATE --default-stream per-thread)
