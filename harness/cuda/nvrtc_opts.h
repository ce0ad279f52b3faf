/*
 * cuda/nvrtc_opts.h: which NVRTC options the running NVRTC accepts. The binary
 * is built on one machine and NVRTC comes from the toolkit it finds at run time
 * (a GPU machine's may be older); NVRTC refuses an option it does not know
 * (NVRTC_ERROR_INVALID_OPTION) and so fails every compile.
 */
#ifndef HN_CUDA_NVRTC_OPTS_H
#define HN_CUDA_NVRTC_OPTS_H

/* Whether NVRTC major.minor has --no-cache (its compute cache, CUDA 12.9+). */
int hn_nvrtc_has_no_cache(int major, int minor);

#endif
