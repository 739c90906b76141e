// The accuracy metric on f32 scores [rows, classes] and int64 labels, as fleet-core's CPU kernel computes it: a row
// is correct when its first highest score is at the label.

// correct[0] += rows whose argmax is the label; correct must be zeroed first. One thread per row.
extern "C" __global__ void accuracy_count_f32(const float* scores, const long long* labels, unsigned long long* correct,
                                              long long rows, long long classes) {
    for (long long r = blockIdx.x * (long long) blockDim.x + threadIdx.x; r < rows; r += (long long) gridDim.x * blockDim.x) {
        const float* s = scores + r * classes;
        long long best = 0;
        float best_v = s[0];
        for (long long c = 1; c < classes; c++) {
            if (s[c] > best_v) {
                best_v = s[c];
                best = c;
            }
        }
        if (best == labels[r]) {
            atomicAdd(correct, 1ULL);
        }
    }
}

// accuracy[0] = correct / rows (0 for no rows); total[0] = rows when write_total is set. One thread.
extern "C" __global__ void accuracy_finish(const long long* correct, float* accuracy, long long* total, long long rows,
                                           int write_total) {
    accuracy[0] = rows == 0 ? 0.0f : (float) correct[0] / (float) rows;
    if (write_total) {
        total[0] = rows;
    }
}
