#!/bin/sh
# Regenerates the x264-made test vectors in this folder (x264 0.164.3095, ffmpeg 5.1).
# The expected values in the tests were copied from
#   ffmpeg -hide_banner -i VECTOR -c copy -bsf:v trace_headers -f null - 2>&1
# run on these files. Re-running this script with another x264 may change the bytes (and the
# SEI options string), and then the expected values in the tests need re-checking.
set -eu
cd "$(dirname "$0")"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ffmpeg -v error -y -f lavfi -i testsrc=size=64x48:rate=25 -frames:v 12 -pix_fmt yuv420p "$T/small.y4m"
ffmpeg -v error -y -f lavfi -i testsrc=size=64x64:rate=25 -frames:v 3 -pix_fmt yuv420p "$T/small64.y4m"
ffmpeg -v error -y -f lavfi -i color=c=gray:size=1920x1080:rate=20 -frames:v 1 -pix_fmt yuv420p "$T/gray420.y4m"
ffmpeg -v error -y -f lavfi -i color=c=gray:size=1920x1080:rate=20 -frames:v 1 -pix_fmt yuv444p "$T/gray444.y4m"
ffmpeg -v error -y -f lavfi -i color=c=gray:size=1920x1080:rate=20 -frames:v 1 -pix_fmt yuv422p "$T/gray422.y4m"
# 4:4:4 and 4:2:2, 1920x1080 (coded 1088, cropped by frame_crop_bottom_offset 8 in units of 1 row).
x264 --quiet --no-progress --threads 1 --output-csp i444 --qp 51 -o i444_1080.264 "$T/gray444.y4m"
x264 --quiet --no-progress --threads 1 --output-csp i422 --qp 51 -o i422_1080.264 "$T/gray422.y4m"
# Main, level 4.1, 20 fps: its SPS has emulation prevention bytes in the VUI timing info.
x264 --quiet --no-progress --threads 1 --profile main --level 4.1 --qp 51 -o main_1080.264 "$T/gray420.y4m"
# Open GOP: one IDR, then I pictures with a recovery point SEI, B-frames between.
x264 --quiet --no-progress --threads 1 --open-gop --keyint 4 --min-keyint 4 --bframes 2 --b-adapt 0 --scenecut 0 --qp 40 -o open_gop.264 "$T/small.y4m"
# Four slices per picture (64x64: 4 macroblock rows, one slice per row).
x264 --quiet --no-progress --threads 1 --slices 4 --qp 40 --bframes 0 -o slices4.264 "$T/small64.y4m"
# Scaling lists in the SPS: JVT default matrices (signalled with delta_scale to 0 = use default)
# plus a custom intra-luma 4x4 list.
x264 --quiet --no-progress --threads 1 --cqm jvt --cqm4iy 6,12,12,18,18,18,24,24,24,24,30,30,30,36,36,42 --qp 40 --frames 1 -o cqm.264 "$T/small.y4m"
# Interlaced (field-capable) coding: frame_mbs_only_flag 0, so CropUnitY is 4 for 4:2:0.
x264 --quiet --no-progress --threads 1 --tff --qp 40 --frames 2 --bframes 0 -o tff.264 "$T/small.y4m"
# One frame with an access unit delimiter, as the source of the AUD + slice vectors.
x264 --quiet --no-progress --threads 1 --aud --qp 40 --frames 1 -o "$T/aud.264" "$T/small.y4m"
python3 - "$T/aud.264" <<'PY'
import sys
data = open(sys.argv[1], 'rb').read()
# split on 3-byte start codes, dropping the zero_byte of 4-byte ones
nals = [n.rstrip(b'\x00') for n in data.split(b'\x00\x00\x01')][1:]
types = [n[0] & 31 for n in nals]
assert types == [9, 7, 8, 6, 5], types
aud, sps, pps, sei, idr = nals
sc = b'\x00\x00\x00\x01'
# parameter sets of the AUD vectors (SPS then PPS)
open('aud_slice_parameter_sets.264', 'wb').write(sc + sps + sc + pps)
# AUD then a slice, each behind a 4-byte start code
open('aud_slice.264', 'wb').write(sc + aud + sc + idr)
# the same with 5 zero bytes (trailing_zero_8bits) before the second start code
open('aud_slice_5zeros.264', 'wb').write(sc + aud + b'\x00' * 5 + sc + idr)
# SEI before the SPS, and SPS/PPS with nal_ref_idc 2 (header 0x47, 0x48 instead of 0x67, 0x68)
sps2 = bytes([(sps[0] & 0x9F) | (2 << 5)]) + sps[1:]
pps2 = bytes([(pps[0] & 0x9F) | (2 << 5)]) + pps[1:]
# a 3-byte start code before the PPS and IDR, 4-byte before the others
open('sei_first_ref2.264', 'wb').write(sc + sei + sc + sps2 + b'\x00\x00\x01' + pps2 + b'\x00\x00\x01' + idr)
PY
