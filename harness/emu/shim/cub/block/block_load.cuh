/* Harness CPU emulator: <cub/block/block_load.cuh> is not supported; including it is a compile error
 * that says so. */
#error "harness CPU emulator: <cub/block/block_load.cuh> is not supported: of CUB the emulator provides BlockReduce, BlockScan, WarpReduce and WarpScan (<cub/block/block_reduce.cuh>, <cub/block/block_scan.cuh>, <cub/warp/warp_reduce.cuh>, <cub/warp/warp_scan.cuh>); #ifndef HN_EMU can hide the rest"
