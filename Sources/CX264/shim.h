#ifndef ENCLAB_CX264_SHIM_H
#define ENCLAB_CX264_SHIM_H
/* x264.h uses the fixed-width types without including <stdint.h> itself. */
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <x264.h>
#include <x264_config.h>

/* x264_encoder_open is a macro naming x264_encoder_open_<X264_BUILD>; Swift cannot call a macro. */
static inline x264_t *enclab_x264_encoder_open(x264_param_t *param) { return x264_encoder_open(param); }

/* The lab's log sink: a plain C function pointer with the formatted line, set from Swift. */
typedef void (*enclab_x264_log_sink)(void *opaque, int level, const char *line);

/* Context handed to x264 as p_log_private: the sink and the Swift object it reports to. */
typedef struct enclab_x264_log_context {
    enclab_x264_log_sink sink;
    void *opaque;
} enclab_x264_log_context;

/* pf_log receives a va_list, which Swift cannot take apart: this trampoline formats the line with
   vsnprintf and hands the sink a plain string. Lines longer than 4 KiB are cut. */
static void enclab_x264_log_trampoline(void *p_private, int level, const char *fmt, va_list args) {
    enclab_x264_log_context *context = (enclab_x264_log_context *)p_private;
    if (!context || !context->sink) return;
    char line[4096];
    vsnprintf(line, sizeof(line), fmt, args);
    context->sink(context->opaque, level, line);
}

/* Installs the trampoline as param->pf_log with the given context (owned by the caller, which must
   outlive the encoder). */
static inline void enclab_x264_set_log(x264_param_t *param, enclab_x264_log_context *context) {
    param->pf_log = enclab_x264_log_trampoline;
    param->p_log_private = context;
}

/* Entry `index` of x264_levels (terminated by level_idc 0): Swift does not import an unsized extern array. */
static inline const x264_level_t *enclab_x264_level(int index) { return &x264_levels[index]; }

#endif
