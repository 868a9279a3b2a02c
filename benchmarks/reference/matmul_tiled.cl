// Hand-written reference for the gpukern flagship examples/matmul_tiled.py: the shared-memory
// tiled matrix multiplication as an OpenCL course writes it, same algorithm and tile shape, so
// benchmarks/matmul.py measures what gpukern's code generation costs and nothing else.
//
// c (m x n) = a (m x k) @ b (k x n), all row-major float32.  Enqueue with local size
// (TILE, TILE) and global size (TILE * ceil(n / TILE), TILE * ceil(m / TILE)).
// Build option: -DTILE=16
#ifndef TILE
#define TILE 16
#endif

__kernel void matmul_tiled(__global const float* restrict a, __global const float* restrict b,
                           __global float* restrict c, int m, int n, int k)
{
    __local float tile_a[TILE][TILE];
    __local float tile_b[TILE][TILE];
    int tx = get_local_id(0);
    int ty = get_local_id(1);
    int row = get_group_id(1) * get_local_size(1) + ty;
    int col = get_group_id(0) * get_local_size(0) + tx;
    float acc = 0.0f;
    for (int t = 0; t < (k + TILE - 1) / TILE; ++t) {
        int a_col = t * TILE + tx;
        int b_row = t * TILE + ty;
        tile_a[ty][tx] = (row < m && a_col < k) ? a[row * k + a_col] : 0.0f;
        tile_b[ty][tx] = (b_row < k && col < n) ? b[b_row * n + col] : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);  // the tiles are loaded
#pragma unroll
        for (int i = 0; i < TILE; ++i)
            acc += tile_a[ty][i] * tile_b[i][tx];
        barrier(CLK_LOCAL_MEM_FENCE);  // everyone is done with the tiles before they are overwritten
    }
    if (row < m && col < n)
        c[row * n + col] = acc;
}
