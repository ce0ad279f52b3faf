/* Harness stand-in for NVRTC <assert.h>: CUDA's device assert (reports via __assertfail and traps; nothing under NDEBUG). */
/* No include guard, as in C: each inclusion redefines assert for the current NDEBUG
 * (NVRTC's predefined assert only sees an NDEBUG given on the command line). */
#undef assert
#ifdef NDEBUG
#define assert(e) (static_cast<void>(0))
#else
#define _HN_ASSERT_STR(e) #e
#define assert(e)                                                                          \
    ((e) ? static_cast<void>(0)                                                            \
         : __assertfail(_HN_ASSERT_STR(e), __FILE__, __LINE__, __PRETTY_FUNCTION__, sizeof(char)))
#endif
