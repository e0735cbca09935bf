#ifndef PHOTOPREP_CMETRIC_H
#define PHOTOPREP_CMETRIC_H

/// SSIMULACRA2's per-row loops (`MetricScale` in PhotoPrep drives them): plain C loops over rows that the compiler
/// vectorises. Nothing here allocates or keeps state.

/// `count` pixels of interleaved linear RGB → the three positive XYB planes' rows (X·14 + 0.42, Y + 0.01, B − Y + 0.55).
void photoprep_metric_xyb(const float *_Nonnull rgb, int count, float *_Nonnull x, float *_Nonnull y, float *_Nonnull b);

/// The 11-tap horizontal blur of `a` (`b` null), `a²` (`square`, `b` null) or `a·b`, zero outside the row, into `out`.
/// `padded` is scratch of at least `count + 10` floats.
void photoprep_metric_blur_row(
    const float *_Nonnull a, const float *_Nullable b, int square, int count, const float *_Nonnull kernel,
    float *_Nonnull padded, float *_Nonnull out);

/// The vertical blur of one row from its eleven rows, `rows[0]` the top one.
void photoprep_metric_vertical(const float *_Nonnull const *_Nonnull rows, int count, const float *_Nonnull kernel, float *_Nonnull out);

/// Row sums of the SSIM map and the edge-difference maps from one row's blurred planes and the images' rows:
/// `sums[0..5]` += Σd, Σd⁴, Σartefact, Σartefact⁴, Σdetail, Σdetail⁴. `scratch` holds at least `3 · count` floats.
void photoprep_metric_maps(
    const float *_Nonnull mu1, const float *_Nonnull mu2, const float *_Nonnull s11, const float *_Nonnull s22,
    const float *_Nonnull s12, const float *_Nonnull a, const float *_Nonnull b, int count, float *_Nonnull scratch,
    double *_Nonnull sums);

#endif
