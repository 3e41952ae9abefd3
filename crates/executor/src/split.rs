//! How the threads are divided between the main and the reserve pool.

/// Splits `total` threads into `(main, reserve)` workers: about 85 % main
/// (rounded up), at least one of each once `total >= 2`.
///
/// A single thread is all main (`1 -> (1, 0)`): a reserve worker alone
/// could never receive a job. `0 -> (0, 0)`.
///
/// | total | main | reserve |
/// |------:|-----:|--------:|
/// | 2     | 1    | 1       |
/// | 4     | 3    | 1       |
/// | 8     | 7    | 1       |
/// | 16    | 14   | 2       |
/// | 32    | 28   | 4       |
/// | 100   | 85   | 15      |
///
/// (The seed's table said 27/5 for 32 threads; its own formula gives 28/4.)
///
/// ```
/// assert_eq!(weir_executor::split_threads(16), (14, 2));
/// ```
pub fn split_threads(total: usize) -> (usize, usize) {
    if total <= 1 {
        return (total, 0);
    }
    let main = (total * 85).div_ceil(100).clamp(1, total - 1);
    (main, total - main)
}
