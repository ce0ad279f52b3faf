/* stdio.h for NVRTC (a harness stand-in): device code has printf built in. */
#pragma once
