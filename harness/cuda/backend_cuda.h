/*
 * cuda/backend_cuda.h: what backend_cuda.c offers beyond the hn_backend
 * interface (backend.h), for its tests.
 */
#ifndef HN_CUDA_BACKEND_CUDA_H
#define HN_CUDA_BACKEND_CUDA_H

/* Whether CUresult `code` leaves the context unusable (cuda.h: "This leaves the
 * process in an inconsistent state and any further CUDA work will return the
 * same error", or "the context cannot be used anymore"): the row is a fault and
 * the next rows run in a fresh process. */
int hn_cuda_error_sticky(int code);

#endif
