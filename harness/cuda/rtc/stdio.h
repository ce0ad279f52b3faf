/* Harness stand-in for NVRTC <stdio.h>: nothing to add, printf, size_t and NULL are NVRTC built-ins. */
/* No FILE, fopen, sprintf ...: there are no device functions behind them. */
#pragma once
