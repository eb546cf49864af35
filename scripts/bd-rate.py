#!/usr/bin/env python3
"""Bjontegaard delta rate (VCEG-M33) between the rate-quality curves of an experiment's database.

usage: python3 scripts/bd-rate.py DATABASE RC GROUP_PATH REFERENCE
  RC          the lab's rate-control mode of the points to use (runs.settings.rc: cqp, abr, ...)
  GROUP_PATH  a JSON path into runs.settings naming each curve, e.g. '$.axes.coding' or '$.axes.RealTime'
  REFERENCE   the curve the others are compared with, as json_extract prints it (text, or 0/1 for booleans)

A curve's points are its done runs: kbit/s = runs.bytes * 8 / runs.duration_s / 1000 and the mean of the lab's
frames.psnr_avg. Each curve is fitted as log10(kbit/s), a cubic in PSNR, and the two fits are integrated over the
PSNR range both curves cover; the result is how many percent more bits the curve needs than the reference for the
same PSNR (negative: fewer). Needs python3-numpy (scripts/setup.sh installs it) and four points or more per curve.
"""
import os
import sqlite3
import sys
import urllib.parse

import numpy as np

if len(sys.argv) != 5:
    sys.exit(__doc__.split("\n\n")[1])
database, rc, path, reference = sys.argv[1:]
query = """SELECT CAST(json_extract(settings, ?) AS TEXT), bytes * 8 / duration_s / 1000,
                  (SELECT avg(psnr_avg) FROM frames f WHERE f.run_id = runs.run_id)
           FROM runs WHERE status = 'done' AND json_extract(settings, '$.rc') = ?"""
curves = {}
# The path is quoted into the URI: a '?' or '#' in a file name stays part of the name.
uri = "file:" + urllib.parse.quote(os.path.abspath(database)) + "?mode=ro"
for name, kbps, psnr in sqlite3.connect(uri, uri=True).execute(query, (path, rc)):
    if psnr is not None:
        curves.setdefault(name, []).append((kbps, psnr))
if reference not in curves:
    sys.exit(f"bd-rate: no {rc} curve named {reference!r} (curves: {sorted(curves)})")


def fit(points):
    rate, psnr = np.array(sorted(points, key=lambda p: p[1])).T
    return np.polyint(np.polyfit(psnr, np.log10(rate), 3)), psnr.min(), psnr.max()


ref, ref_lo, ref_hi = fit(curves[reference])
for name in sorted(curves):
    if len(curves[name]) < 4:
        print(f"{rc} {name}: {len(curves[name])} points, fewer than 4: no BD-rate")
        continue
    other, lo, hi = fit(curves[name])
    lo, hi = max(lo, ref_lo), min(hi, ref_hi)
    mean = ((np.polyval(other, hi) - np.polyval(other, lo)) - (np.polyval(ref, hi) - np.polyval(ref, lo))) / (hi - lo)
    print(f"{rc} {name}: {(10 ** mean - 1) * 100:+.1f} % bits against {reference} ({lo:.2f}-{hi:.2f} dB)")
