#include "CMetric.h"

#include <math.h>

static const float m00 = 0.30f, m02 = 0.078f, m01 = 1.0f - 0.078f - 0.30f;
static const float m10 = 0.23f, m12 = 0.078f, m11 = 1.0f - 0.078f - 0.23f;
static const float m20 = 0.24342268924547819f, m21 = 0.20476744424496821f;
static const float m22 = 1.0f - 0.24342268924547819f - 0.20476744424496821f;
static const float bias = 0.0037930732552754493f;

/// ∛v for v ≥ the opsin bias: an exponent-thirding first guess, then three Newton steps (relative error < 1e-7).
static inline float cube_root(float v) {
    union { float f; unsigned u; } guess = {.f = v};
    guess.u = guess.u / 3 + 709921077u;
    float g = guess.f;
    for (int i = 0; i < 3; i++) g = (2.0f * g + v / (g * g)) * (1.0f / 3.0f);
    return g;
}

void photoprep_metric_xyb(const float *rgb, int count, float *x, float *y, float *b) {
    const float cbrt_bias = cbrtf(bias);
    for (int i = 0; i < count; i++) {
        float r = rgb[3 * i], g = rgb[3 * i + 1], bl = rgb[3 * i + 2];
        float l = cube_root(fmaxf(m00 * r + m01 * g + m02 * bl + bias, 0.0f)) - cbrt_bias;
        float m = cube_root(fmaxf(m10 * r + m11 * g + m12 * bl + bias, 0.0f)) - cbrt_bias;
        float s = cube_root(fmaxf(m20 * r + m21 * g + m22 * bl + bias, 0.0f)) - cbrt_bias;
        float yy = 0.5f * (l + m);
        x[i] = 0.5f * (l - m) * 14.0f + 0.42f;
        y[i] = yy + 0.01f;
        b[i] = (s - yy) + 0.55f;
    }
}

void photoprep_metric_blur_row(
    const float *a, const float *b, int square, int count, const float *kernel, float *padded, float *out) {
    float *p = padded + 5;
    for (int k = 1; k <= 5; k++) { p[-k] = 0.0f; p[count - 1 + k] = 0.0f; }
    if (b) {
        for (int i = 0; i < count; i++) p[i] = a[i] * b[i];
    } else if (square) {
        for (int i = 0; i < count; i++) p[i] = a[i] * a[i];
    } else {
        for (int i = 0; i < count; i++) p[i] = a[i];
    }
    const float k0 = kernel[0], k1 = kernel[1], k2 = kernel[2], k3 = kernel[3], k4 = kernel[4], k5 = kernel[5];
    for (int i = 0; i < count; i++) {
        out[i] = k5 * p[i] + k4 * (p[i - 1] + p[i + 1]) + k3 * (p[i - 2] + p[i + 2]) + k2 * (p[i - 3] + p[i + 3])
            + k1 * (p[i - 4] + p[i + 4]) + k0 * (p[i - 5] + p[i + 5]);
    }
}

void photoprep_metric_vertical(const float *const *rows, int count, const float *kernel, float *out) {
    const float *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3], *r4 = rows[4], *r5 = rows[5];
    const float *r6 = rows[6], *r7 = rows[7], *r8 = rows[8], *r9 = rows[9], *r10 = rows[10];
    const float k0 = kernel[0], k1 = kernel[1], k2 = kernel[2], k3 = kernel[3], k4 = kernel[4], k5 = kernel[5];
    for (int i = 0; i < count; i++) {
        out[i] = k5 * r5[i] + k4 * (r4[i] + r6[i]) + k3 * (r3[i] + r7[i]) + k2 * (r2[i] + r8[i]) + k1 * (r1[i] + r9[i])
            + k0 * (r0[i] + r10[i]);
    }
}

/// Σv and Σv⁴ over a row, in eight float lanes between double totals every 512 values.
static void add_norms(const float *v, int count, double *sum, double *fourth) {
    int i = 0;
    while (i < count) {
        int end = i + 512 < count ? i + 512 : count;
        float s[8] = {0}, f[8] = {0};
        for (; i + 8 <= end; i += 8) {
            for (int lane = 0; lane < 8; lane++) {
                float x = v[i + lane], x2 = x * x;
                s[lane] += x;
                f[lane] += x2 * x2;
            }
        }
        for (; i < end; i++) {
            float x = v[i], x2 = x * x;
            s[0] += x;
            f[0] += x2 * x2;
        }
        for (int lane = 0; lane < 8; lane++) { *sum += s[lane]; *fourth += f[lane]; }
    }
}

void photoprep_metric_maps(
    const float *mu1, const float *mu2, const float *s11, const float *s22, const float *s12, const float *a,
    const float *b, int count, float *scratch, double *sums) {
    const float c2 = 0.0009f;
    float *d = scratch, *artefact = scratch + count, *detail = scratch + 2 * count;
    for (int i = 0; i < count; i++) {
        float diff = mu1[i] - mu2[i];
        float num_m = 1.0f - diff * diff;
        float num_s = 2.0f * (s12[i] - mu1[i] * mu2[i]) + c2;
        float den_s = (s11[i] - mu1[i] * mu1[i]) + (s22[i] - mu2[i] * mu2[i]) + c2;
        d[i] = fmaxf(1.0f - num_m * num_s / den_s, 0.0f);
        float edge = (1.0f + fabsf(b[i] - mu2[i])) / (1.0f + fabsf(a[i] - mu1[i])) - 1.0f;
        artefact[i] = fmaxf(edge, 0.0f);
        detail[i] = fmaxf(-edge, 0.0f);
    }
    add_norms(d, count, &sums[0], &sums[1]);
    add_norms(artefact, count, &sums[2], &sums[3]);
    add_norms(detail, count, &sums[4], &sums[5]);
}
