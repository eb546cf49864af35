#ifndef ENCLAB_COPENH264_SHIM_H
#define ENCLAB_COPENH264_SHIM_H
/* OpenH264's C interface (Debian's libopenh264-dev, /usr/include/wels). codec_api.h declares the encoder as a
   pointer to a table of function pointers; these wrappers make each call one plain C function for Swift. */
#include <stdbool.h>
#include <string.h>
#include <wels/codec_api.h>

/* WelsCreateSVCEncoder, returning the encoder or NULL. */
static inline ISVCEncoder *enclab_openh264_create(void) {
    ISVCEncoder *encoder = NULL;
    if (WelsCreateSVCEncoder(&encoder) != 0) return NULL;
    return encoder;
}

/* (*encoder)->GetDefaultParams: Swift cannot call through the vtable pointer of a const pointer typedef. */
static inline int enclab_openh264_default_params(ISVCEncoder *encoder, SEncParamExt *param) {
    memset(param, 0, sizeof(*param));
    return (*encoder)->GetDefaultParams(encoder, param);
}

/* (*encoder)->InitializeExt. */
static inline int enclab_openh264_initialize(ISVCEncoder *encoder, const SEncParamExt *param) {
    return (*encoder)->InitializeExt(encoder, param);
}

/* (*encoder)->EncodeFrame. */
static inline int enclab_openh264_encode(ISVCEncoder *encoder, const SSourcePicture *picture, SFrameBSInfo *info) {
    return (*encoder)->EncodeFrame(encoder, picture, info);
}

/* (*encoder)->ForceIntraFrame(true): the next picture is coded as an IDR picture. */
static inline int enclab_openh264_force_idr(ISVCEncoder *encoder) {
    return (*encoder)->ForceIntraFrame(encoder, true);
}

/* (*encoder)->SetOption and GetOption, with the option's value by pointer as codec_app_def.h documents each one. */
static inline int enclab_openh264_set_option(ISVCEncoder *encoder, ENCODER_OPTION option, void *value) {
    return (*encoder)->SetOption(encoder, option, value);
}
static inline int enclab_openh264_get_option(ISVCEncoder *encoder, ENCODER_OPTION option, void *value) {
    return (*encoder)->GetOption(encoder, option, value);
}

/* ENCODER_OPTION_TRACE_CALLBACK takes a pointer to the function pointer (welsEncoderExt.cpp reads it through one). */
static inline int enclab_openh264_set_trace(ISVCEncoder *encoder, WelsTraceCallback callback, void *context, int level) {
    int status = (*encoder)->SetOption(encoder, ENCODER_OPTION_TRACE_CALLBACK_CONTEXT, &context);
    if (status != 0) return status;
    status = (*encoder)->SetOption(encoder, ENCODER_OPTION_TRACE_CALLBACK, &callback);
    if (status != 0) return status;
    return (*encoder)->SetOption(encoder, ENCODER_OPTION_TRACE_LEVEL, &level);
}

/* (*encoder)->Uninitialize then WelsDestroySVCEncoder. */
static inline void enclab_openh264_destroy(ISVCEncoder *encoder, bool initialized) {
    if (initialized) (*encoder)->Uninitialize(encoder);
    WelsDestroySVCEncoder(encoder);
}

#endif
