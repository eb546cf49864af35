/* The OpenH264 witness of the lab's tests (Tests/EndToEndTests/OpenH264Tests.swift): a small encoder written from
   libopenh264's header (/usr/include/wels/codec_api.h, codec_app_def.h), not from the lab's code.

   openh264_witness IN.y4m OUT.264 [NAME=VALUE ...] [ts=FILE]

   Reads a 4:2:0 y4m file, opens one encoder with GetDefaultParams, the picture size, fMaxFrameRate and layer 0's
   fFrameRate from the y4m's F field, one spatial and one temporal layer, bUseLoadBalancing off, then each NAME=VALUE
   (an SEncParamExt field, numbers only), layer 0's bit rates from iTargetBitrate and iMaxBitrate; InitializeExt;
   then EncodeFrame per picture with uiTimeStamp = index * 1000 * fps_den / fps_num (ms, C integer division), or with
   ts=FILE the whole milliseconds of FILE's lines in order (a timecode v2 file: '#' lines skipped).
   Writes every layer's bytes of each frame to OUT.264 and one line per input picture to stdout:
   "INDEX TYPE BYTES" with TYPE the EVideoFrameType number (codec_def.h: 1 IDR, 2 I, 3 P, 4 Skip).
   Exit status 0, or 1 with a message on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wels/codec_api.h>

static int apply(SEncParamExt *p, const char *name, long v) {
    SSpatialLayerConfig *l = &p->sSpatialLayers[0];
    if (!strcmp(name, "iRCMode")) p->iRCMode = (RC_MODES)v;
    else if (!strcmp(name, "iTargetBitrate")) p->iTargetBitrate = (int)v;
    else if (!strcmp(name, "iMaxBitrate")) p->iMaxBitrate = (int)v;
    else if (!strcmp(name, "uiIntraPeriod")) p->uiIntraPeriod = (unsigned)v;
    else if (!strcmp(name, "bEnableFrameSkip")) p->bEnableFrameSkip = v != 0;
    else if (!strcmp(name, "iEntropyCodingModeFlag")) p->iEntropyCodingModeFlag = (int)v;
    else if (!strcmp(name, "iComplexityMode")) p->iComplexityMode = (ECOMPLEXITY_MODE)v;
    else if (!strcmp(name, "bEnableSceneChangeDetect")) p->bEnableSceneChangeDetect = v != 0;
    else if (!strcmp(name, "iMultipleThreadIdc")) p->iMultipleThreadIdc = (unsigned short)v;
    else if (!strcmp(name, "uiSliceMode")) l->sSliceArgument.uiSliceMode = (SliceModeEnum)v;
    else if (!strcmp(name, "uiSliceNum")) l->sSliceArgument.uiSliceNum = (unsigned)v;
    else if (!strcmp(name, "uiSliceSizeConstraint")) l->sSliceArgument.uiSliceSizeConstraint = (unsigned)v;
    else if (!strcmp(name, "eSpsPpsIdStrategy")) p->eSpsPpsIdStrategy = (EParameterSetStrategy)v;
    else if (!strcmp(name, "iMinQp")) p->iMinQp = (int)v;
    else if (!strcmp(name, "iMaxQp")) p->iMaxQp = (int)v;
    else if (!strcmp(name, "iLtrMarkPeriod")) p->iLtrMarkPeriod = (unsigned)v;
    else if (!strcmp(name, "uiProfileIdc")) l->uiProfileIdc = (EProfileIdc)v;
    else return -1;
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: openh264_witness IN.y4m OUT.264 [NAME=VALUE ...]\n"); return 1; }
    FILE *in = fopen(argv[1], "rb");
    FILE *out = fopen(argv[2], "wb");
    if (!in || !out) { fprintf(stderr, "cannot open %s or %s\n", argv[1], argv[2]); return 1; }
    char header[512];
    if (!fgets(header, sizeof header, in) || strncmp(header, "YUV4MPEG2 ", 10)) { fprintf(stderr, "not y4m\n"); return 1; }
    int width = 0, height = 0, fpsNum = 25, fpsDen = 1;
    for (char *t = strtok(header + 10, " \n"); t; t = strtok(NULL, " \n")) {
        if (t[0] == 'W') width = atoi(t + 1);
        else if (t[0] == 'H') height = atoi(t + 1);
        else if (t[0] == 'F') sscanf(t + 1, "%d:%d", &fpsNum, &fpsDen);
    }
    ISVCEncoder *e = NULL;
    if (WelsCreateSVCEncoder(&e) != 0 || !e) { fprintf(stderr, "WelsCreateSVCEncoder failed\n"); return 1; }
    SEncParamExt p;
    memset(&p, 0, sizeof p);
    (*e)->GetDefaultParams(e, &p);
    p.iPicWidth = width;
    p.iPicHeight = height;
    p.fMaxFrameRate = (float)((double)fpsNum / fpsDen);
    p.iSpatialLayerNum = 1;
    p.iTemporalLayerNum = 1;
    p.bUseLoadBalancing = false;
    p.sSpatialLayers[0].iVideoWidth = width;
    p.sSpatialLayers[0].iVideoHeight = height;
    p.sSpatialLayers[0].fFrameRate = p.fMaxFrameRate;
    long long *times = NULL;
    int timeCount = 0;
    for (int k = 3; k < argc; k++) {
        if (!strncmp(argv[k], "ts=", 3)) {
            FILE *ts = fopen(argv[k] + 3, "r");
            if (!ts) { fprintf(stderr, "cannot open %s\n", argv[k] + 3); return 1; }
            char text[128];
            while (fgets(text, sizeof text, ts)) {
                if (text[0] == '#' || text[0] == '\n') continue;
                times = realloc(times, sizeof(long long) * (timeCount + 1));
                times[timeCount++] = (long long)strtod(text, NULL);
            }
            fclose(ts);
            continue;
        }
        char *eq = strchr(argv[k], '=');
        if (!eq) { fprintf(stderr, "bad parameter %s\n", argv[k]); return 1; }
        *eq = 0;
        if (apply(&p, argv[k], strtol(eq + 1, NULL, 10)) != 0) { fprintf(stderr, "unknown field %s\n", argv[k]); return 1; }
    }
    p.sSpatialLayers[0].iSpatialBitrate = p.iTargetBitrate;
    p.sSpatialLayers[0].iMaxSpatialBitrate = p.iMaxBitrate;
    if ((*e)->InitializeExt(e, &p) != 0) { fprintf(stderr, "InitializeExt failed\n"); return 1; }
    int format = videoFormatI420;
    (*e)->SetOption(e, ENCODER_OPTION_DATAFORMAT, &format);
    size_t pictureBytes = (size_t)width * height * 3 / 2;
    unsigned char *picture = malloc(pictureBytes);
    char line[256];
    for (long long index = 0; fgets(line, sizeof line, in); index++) {
        if (strncmp(line, "FRAME", 5) || fread(picture, 1, pictureBytes, in) != pictureBytes) break;
        SSourcePicture source;
        memset(&source, 0, sizeof source);
        source.iColorFormat = videoFormatI420;
        source.iPicWidth = width;
        source.iPicHeight = height;
        source.iStride[0] = width;
        source.iStride[1] = source.iStride[2] = width / 2;
        source.pData[0] = picture;
        source.pData[1] = picture + width * height;
        source.pData[2] = picture + width * height + width * height / 4;
        source.uiTimeStamp = times ? (index < timeCount ? times[index] : times[timeCount - 1]) : index * 1000 * fpsDen / fpsNum;
        SFrameBSInfo info;
        memset(&info, 0, sizeof info);
        if ((*e)->EncodeFrame(e, &source, &info) != 0) { fprintf(stderr, "EncodeFrame failed at %lld\n", index); return 1; }
        int bytes = 0;
        if (info.eFrameType != videoFrameTypeSkip) {
            for (int l = 0; l < info.iLayerNum; l++) {
                int size = 0;
                for (int n = 0; n < info.sLayerInfo[l].iNalCount; n++) size += info.sLayerInfo[l].pNalLengthInByte[n];
                fwrite(info.sLayerInfo[l].pBsBuf, 1, size, out);
                bytes += size;
            }
        }
        printf("%lld %d %d\n", index, (int)info.eFrameType, bytes);
    }
    (*e)->Uninitialize(e);
    WelsDestroySVCEncoder(e);
    fclose(out);
    free(picture);
    free(times);
    return 0;
}
