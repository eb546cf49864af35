import Foundation

/// The run metrics part of the schema (docs/schema.md, `run_metrics` and `run_gops`), added by the
/// migration from version 5 to 6 (``LabStore/version6Tables``) and written by ``RunMetrics``.
extension LabStore {
    /// The columns of `run_metrics` after `run_id`, in table order, with their SQL types, as ``version6Tables`` has
    /// them (SchemaVersionTests compares the two). The HTML report reads them by name: rename none.
    static let runMetricsColumns: [(name: String, type: String)] = [
        ("frames", "INTEGER NOT NULL"), ("stream_bytes", "INTEGER NOT NULL"), ("span_seconds", "REAL"),
        ("bitrate_kbps", "REAL"), ("target_kbps", "REAL"), ("target_error_pct", "REAL"),
        ("peak_1s_kbps", "REAL"), ("peak_1s_start_frame", "INTEGER"), ("full_1s_windows", "INTEGER NOT NULL"),
        ("peak_gop_kbps", "REAL"), ("peak_to_average", "REAL"),
        ("i_frames", "INTEGER NOT NULL"), ("p_frames", "INTEGER NOT NULL"), ("b_frames", "INTEGER NOT NULL"),
        ("i_mean_bytes", "REAL"), ("i_p95_bytes", "INTEGER"), ("i_max_bytes", "INTEGER"),
        ("p_mean_bytes", "REAL"), ("p_p95_bytes", "INTEGER"), ("p_max_bytes", "INTEGER"),
        ("b_mean_bytes", "REAL"), ("b_p95_bytes", "INTEGER"), ("b_max_bytes", "INTEGER"),
        ("i_to_p_ratio", "REAL"), ("b_to_p_ratio", "REAL"),
        ("keyframes", "INTEGER NOT NULL"), ("gops", "INTEGER NOT NULL"),
        ("gop_min_frames", "INTEGER"), ("gop_mean_frames", "REAL"), ("gop_max_frames", "INTEGER"),
        ("gop_mean_seconds", "REAL"), ("gop_max_seconds", "REAL"),
        ("psnr_frames", "INTEGER NOT NULL"), ("psnr_weighting", "TEXT CHECK (psnr_weighting IN ('frame', 'duration'))"),
        ("psnr_y_mean_frame", "REAL"), ("psnr_u_mean_frame", "REAL"), ("psnr_v_mean_frame", "REAL"), ("psnr_avg_mean_frame", "REAL"),
        ("psnr_y_pooled", "REAL"), ("psnr_u_pooled", "REAL"), ("psnr_v_pooled", "REAL"), ("psnr_global", "REAL"),
        ("psnr_611", "REAL"), ("ssim_mean", "REAL"), ("ssim_db", "REAL"),
        ("qp_mean_i", "REAL"), ("qp_mean_p", "REAL"), ("qp_mean_b", "REAL"),
        ("vbv_underflows", "INTEGER"), ("vbv_overflows", "INTEGER"),
        ("psnr_source", "TEXT CHECK (psnr_source IN ('lab', 'x264'))"),
    ]
}
