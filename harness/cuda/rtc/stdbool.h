/* Harness stand-in for NVRTC <stdbool.h>: __bool_true_false_are_defined (bool, true, false are C++ keywords). */
#pragma once
#define __bool_true_false_are_defined 1
