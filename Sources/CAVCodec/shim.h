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

/* AVERROR(EAGAIN) is a function-like macro, which Swift does not import. */
static inline int enclab_averror_eagain(void) { return AVERROR(EAGAIN); }

/* AVERROR_EOF is built by the function-like macro FFERRTAG, which Swift does not import. */
static inline int enclab_averror_eof(void) { return AVERROR_EOF; }

/* AVFrame.data and .linesize are fixed-size C arrays, which Swift sees as tuples: plane `i`'s pointer. */
static inline const uint8_t *enclab_frame_plane(const AVFrame *frame, int i) { return frame->data[i]; }

/* ... and plane `i`'s bytes per row (may exceed the width; never negative for a decoder's frame). */
static inline int enclab_frame_linesize(const AVFrame *frame, int i) { return frame->linesize[i]; }

/* AV_NOPTS_VALUE is built with UINT64_C, a function-like macro, which Swift does not import. */
static inline int64_t enclab_nopts(void) { return AV_NOPTS_VALUE; }

#endif
