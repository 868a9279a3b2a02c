// Hand-written reference for the gpukern flagship examples/matmul_tiled.py: the shared-memory
// tiled matrix multiplication as a CUDA course writes it, same algorithm and tile shape, so
// benchmarks/matmul.py measures what gpukern's code generation costs and nothing else.
//
// c (m x n) = a (m x k) @ b (k x n), all row-major float32.  Launch with block (TILE, TILE)
// and grid (ceil(n / TILE), ceil(m / TILE)).  Build: nvcc -cubin -arch=sm_90 -DTILE=16
#ifndef TILE
#define TILE 16
#endif

extern "C" __global__ void matmul_tiled(const float* __restrict__ a, const float* __restrict__ b,
                                        float* __restrict__ c, int m, int n, int k)
{
    __shared__ float tile_a[TILE][TILE];
    __shared__ float tile_b[TILE][TILE];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int row = blockIdx.y * blockDim.y + ty;
    int col = blockIdx.x * blockDim.x + tx;
    float acc = 0.0f;
    for (int t = 0; t < (k + TILE - 1) / TILE; ++t) {
        int a_col = t * TILE + tx;
        int b_row = t * TILE + ty;
        tile_a[ty][tx] = (row < m && a_col < k) ? a[row * k + a_col] : 0.0f;
        tile_b[ty][tx] = (b_row < k && col < n) ? b[b_row * n + col] : 0.0f;
        __syncthreads();  // the tiles are loaded
#pragma unroll
        for (int i = 0; i < TILE; ++i)
            acc += tile_a[ty][i] * tile_b[i][tx];
        __syncthreads();  // everyone is done with the tiles before they are overwritten
    }
    if (row < m && col < n)
        c[row * n + col] = acc;
}
