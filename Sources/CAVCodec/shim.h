#ifndef ENCLAB_CAVCODEC_SHIM_H
#define ENCLAB_CAVCODEC_SHIM_H
/* libavcodec's H.264 decoder for the verify stage's in-process decode (Debian's libavcodec-dev and
   libavutil-dev, FFmpeg 5.1). */
#include <errno.h>
#include <libavcodec/avcodec.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/log.h>
#include <libavutil/pixfmt.h>
#include <libavutil/video_enc_params.h>

/* AVERROR(EAGAIN) is a function-like macro, which Swift does not import. */
static inline int enclab_averror_eagain(void) { return AVERROR(EAGAIN); }

/* AVERROR_EOF is built by the function-like macro FFERRTAG, which Swift does not import. */
static inline int enclab_averror_eof(void) { return AVERROR_EOF; }

/* AVFrame.data and .linesize are fixed-size C arrays, which Swift sees as tuples: plane `i`'s pointer. */
static inline const uint8_t *enclab_frame_plane(const AVFrame *frame, int i) { return frame->data[i]; }

/* ... and plane `i`'s bytes per row (may exceed the width; never negative for a decoder's frame). */
static inline int enclab_frame_linesize(const AVFrame *frame, int i) { return frame->linesize[i]; }

/* AV_CODEC_EXPORT_DATA_VIDEO_ENC_PARAMS is a macro flag: the H.264 decoder then attaches each picture's per-macroblock
   QP as AV_FRAME_DATA_VIDEO_ENC_PARAMS side data (h264_slice.c, h264_export_enc_params). */
static inline void enclab_export_video_enc_params(AVCodecContext *context) {
    context->export_side_data |= AV_CODEC_EXPORT_DATA_VIDEO_ENC_PARAMS;
}

/* The sum over a decoded picture's blocks of qp + delta_qp (AVVideoEncParams: for H.264 `qp` is the PPS's
   pic_init_qp, each block a 16x16 macroblock with delta_qp its QP less that) and the number of blocks, through the
   inline av_video_enc_params_block; 0 and *total, *blocks set, or -1 when the frame has no such side data or no
   blocks. The sum, not a mean: the mean is compared with x264's rounding of it exactly (MacroblockQP.swift). */
static inline int enclab_frame_qp_total(const AVFrame *frame, int64_t *total, int64_t *blocks) {
    const AVFrameSideData *data = av_frame_get_side_data(frame, AV_FRAME_DATA_VIDEO_ENC_PARAMS);
    if (!data) return -1;
    AVVideoEncParams *params = (AVVideoEncParams *)data->data;
    if (params->nb_blocks == 0) return -1;
    int64_t sum = 0;
    for (unsigned int i = 0; i < params->nb_blocks; i++) sum += params->qp + av_video_enc_params_block(params, i)->delta_qp;
    *total = sum;
    *blocks = params->nb_blocks;
    return 0;
}

/* AV_NOPTS_VALUE is built with UINT64_C, a function-like macro, which Swift does not import. */
static inline int64_t enclab_nopts(void) { return AV_NOPTS_VALUE; }

#endif
