#!/usr/bin/python3
"""Checks an enclab report in a real browser: Debian's chromium driven through WebDriver (chromium-driver,
python3-selenium; run with Debian's /usr/bin/python3).

usage: /usr/bin/python3 scripts/report-browser.py --db LAB.sqlite --report REPORT_DIR [--run-page PAGE ...]
                                                  [--table-page PAGE ...] [--timing PAGE]

For every run page (REPORT_DIR/*/run-*/index.html, or the --run-page ones):
  - no console message of level SEVERE (errors), and the charts' script recorded no error;
  - every chart has one row per frame of its run in the database (sqlite3's count of `frames`), and the frame-size
    chart one point per frame over its type series;
  - hovering the middle frame's point on the frame-size chart shows that frame's stored values in the legend
    (coded/display index, type, size, PTS and DTS in seconds from the stored ticks and timebase, QP, PSNR per plane
    and of the frame, SSIM), compared with the row read with sqlite3 and formatted here;
  - a run with perceptual metrics (frame_quality_metrics, --metrics) has one chart per stored metric
    (chart-q-vmaf, ...), with one point per frame that has the value (sqlite3, joined by display index), and hovering
    the middle frame's point on chart-q-vmaf (or the first such chart) shows that frame's stored values (6 decimals);
  - dragging across the chart zooms: its x range shrinks, and the other charts of the page follow;
  - the first frame's stem stands right of the y axis (the x range is padded), not on it;
  - the keyframe timeline (chart-keyframes, x = PTS) has one row per IDR and I frame (sqlite3) and one at each end;
  - a run with pictures skipped by the encoder (skipped_frames): the keyframe timeline was drawn with one mark named
    "skipped by the encoder" per row, at the row's PTS in seconds from the run's first PTS (sqlite3, exact, 6 decimals),
    and its legend names them;
  - every deadline on the keyframe timeline shows its colour in its own pixel column (none drawn over another);
  - an overlay's keyframe timeline lists IDR and I once each in its legend, and hiding a run takes its lane away
    (y range 0 to the lanes shown, each shown run's stems on its new lane's bottom, written out here);
  - each violation shaded on the keyframe timeline (one per keyframe_violations row) starts where its limit passed:
    the picture a + frame_limit of a frame-limit stretch from keyframe a, PTS(a) + duration_limit of a duration-limit
    one (keyframe_analysis; the frames' PTS from sqlite3, exact fractions), the frame before the gap of a stall;
  - every IDR and I frame of the keyframe timeline is drawn at its own PTS in seconds from the run's first PTS (sqlite3,
    exact, 6 decimals), also after pictures the encoder skipped;
  - an OpenH264 run's page names its settings row "OpenH264 settings", not "x264 flags";
  - every table of the page fits a 1280 px window (no table wider than its box or the window).
For a run with a rate schedule (rows in rate_changes): the windowed-bitrate chart (chart-bitrate) draws the target in
force as a staircase whose value at every frame is the one sqlite3's rows give (the run's resolved bitrate under ABR
until the first change x264 applied with a target, then each applied change's target_kbps from the coded position of
the frame it landed on), and one vertical mark per change that reached a frame, at that frame's x, named with its
status; every change x264 ignored or refused is in the page's rate-changes table with its status, and its warning
(runs.warnings) is on the page.
For a run with an RTP stage (rows in rtp_frames): the chart chart-rtp-packets draws, at every frame, the packets of
its rtp_frames row (sqlite3, decode order); with a loss model, chart-rtp-loss marks as frozen exactly the display
indexes of the run's rtp_loss_frames rows whose state is 'frozen' (and as broken those of 'broken'), and the run
page's table rtp-run shows each rtp_runs value (numbers compared at the table's decimals; the overhead percentage
computed here as rtp_overhead_bytes / payload_bytes x 100).
For every experiment page: no console errors; every row of a per-rate differences table pairs points at comparable
rates (sqlite3's run_metrics: an equal target_kbps, or a test value interpolated between the runs around the anchor's
bitrate_kbps or psnr_global), never by rank; each overlay chart has as many points per run as the run has frames;
an overlaid run with DataRateLimits pairs (data_rate_windows) has, on its clip's DataRateLimits chart, each pair's limit
line at the stored bytes in the run's colour (read from the canvas) and as many windows marked over it as its frames'
windows over the stored bytes (the window rule written out here with fractions);
every table fits 1280 px; the runs table shows at most 10 columns by default and breaks no flag of a run's label
across lines;
the note on clips too short for ABR's start-up names no OpenH264 run; an OpenH264 run's configuration in the runs
table starts with "openh264 MODE", MODE its iRCMode in sqlite3's $.openh264_params named as codec_app_def.h's RC_MODES.
--table-page PAGE: the page's first table fits a 1280 px window without scrolling.
--timing PAGE: prints the page's weight (bytes of the HTML) and its draw time (performance.now() when the last
chart was drawn, ms from navigation start; the median of 5 loads).
Prints one line per failed check and exits 1 when any failed; 0 and "ok" otherwise.
"""
import argparse
import fractions
import glob
import json
import os
import re
import sqlite3
import statistics
import sys
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

failures = []


def fail(message):
    failures.append(message)
    print("FAIL: " + message, flush=True)


def browser(width=1280, height=900):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--user-data-dir=" + tempfile.mkdtemp(prefix="enclab-chromium-"), f"--window-size={width},{height}"]:
        options.add_argument(a)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def load(driver, page):
    driver.get("file://" + os.path.abspath(page))
    driver.execute_script("return document.readyState")
    errors = [m for m in driver.get_log("browser") if m.get("level") == "SEVERE"]
    for m in errors:
        fail(f"{page}: console error: {m.get('message')}")
    state = driver.execute_script("return window.enclabCharts ? {errors: window.enclabCharts.errors, "
                                  "drawn: window.enclabCharts.drawnAt} : null")
    if state is None:
        fail(f"{page}: the charts' script did not run (window.enclabCharts missing)")
        return False
    for e in state["errors"]:
        fail(f"{page}: chart error: {e}")
    if state["drawn"] is None:
        fail(f"{page}: the charts were not drawn")
    return True


def seconds(ticks, num, den):
    """ticks x num/den seconds, exactly rounded half to even to 6 decimals, as %.6f writes them."""
    q = fractions.Fraction(ticks * num, den) * 1_000_000
    n = round(q)  # Fraction rounds half to even
    sign = "-" if n < 0 else ""
    n = abs(n)
    return f"{sign}{n // 1_000_000}.{n % 1_000_000:06d}"


def fmt(value, digits):
    return "n/a" if value is None else f"{value:.{digits}f}"


def run_page(driver, db, page):
    run_id = int(re.search(r"run-(\d+)", page).group(1))
    con = sqlite3.connect(db)
    n = con.execute("SELECT count(*) FROM frames WHERE run_id = ?", (run_id,)).fetchone()[0]
    tn, td = con.execute("SELECT timebase_num, timebase_den FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    if not load(driver, page):
        return
    charts = driver.execute_script("var g = window.enclabCharts.graphs, out = {}; "
                                   "Object.keys(g).forEach(function (k) { out[k] = g[k].numRows(); }); return out;")
    for required in ["chart-sizes"]:
        if required not in charts:
            fail(f"{page}: no chart {required}")
    keys = con.execute("SELECT count(*) FROM frames WHERE run_id = ? AND type IN ('IDR', 'I')", (run_id,)).fetchone()[0]
    for chart, rows in charts.items():
        if chart == "chart-keyframes":
            if rows != keys + 2:
                fail(f"{page}: chart-keyframes has {rows} rows, the run has {keys} IDR and I frames in sqlite3 (plus 2 for the range's ends)")
        elif rows != n:
            fail(f"{page}: {chart} has {rows} rows, the run has {n} frames in sqlite3")
    # The first frame (an IDR) is drawn right of the y axis, not on it.
    edge = driver.execute_script("""
        var g = window.enclabCharts.graphs['chart-sizes'];
        return [g.toDomXCoord(g.getValue(0, 0)), g.getArea().x];""")
    if not edge[0] > edge[1] + 1:
        fail(f"{page}: the first frame's stem is at x {edge[0]:.1f} px, on or left of the y axis at {edge[1]:.1f} px")
    # A run with keyframe limits (keyframe_analysis) has them drawn on its keyframe timeline.
    has_table = con.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'keyframe_analysis'").fetchone()[0]
    limited = has_table and con.execute("SELECT count(*) FROM keyframe_analysis WHERE run_id = ? AND "
                                        "(frame_limit IS NOT NULL OR duration_limit IS NOT NULL)", (run_id,)).fetchone()[0]
    if limited:
        marks = driver.execute_script("""
            var b = document.querySelector('script.enclab-chart-data[data-group="keyframes"]');
            return b ? JSON.parse(b.textContent).charts[0].marks.length : -1;""")
        if marks <= 0:
            fail(f"{page}: the run has keyframe limits but its keyframe timeline draws no deadline ({marks})")
        # One legend entry for the stretches over a limit (all one red), however many kinds they hold.
        entries = driver.execute_script("""
            var l = document.getElementById('chart-keyframes-legend'); if (!l) return [];
            return Array.prototype.map.call(l.querySelectorAll('.item'), function (i) { return i.innerText; });""")
        violations = [t for t in entries if t.startswith("violation")]
        if len(violations) > 1:
            fail(f"{page}: the keyframe timeline's legend has {len(violations)} red violation entries: {violations}")
        deadlines_visible(driver, page)
        spans = driver.execute_script("""
            var b = document.querySelector('script.enclab-chart-data[data-group="keyframes"]');
            return b ? JSON.parse(b.textContent).charts[0].spans : [];""")
        violation_spans(con, run_id, spans, page, "the keyframe timeline")
    keyframe_positions(driver, con, run_id, tn, td, page)
    skipped_frames(driver, con, run_id, tn, td, page)
    settings_row(driver, con, run_id, page)
    tables_fit(driver, page)
    has_changes = con.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'rate_changes'").fetchone()[0]
    if has_changes and con.execute("SELECT count(*) FROM rate_changes WHERE run_id = ?", (run_id,)).fetchone()[0]:
        rate_schedule(driver, con, page, run_id, n)
    points = driver.execute_script("""
        var g = window.enclabCharts.graphs['chart-sizes'], count = 0;
        for (var r = 0; r < g.numRows(); r++) for (var c = 1; c < g.numColumns(); c++) {
          var v = g.getValue(r, c); if (v !== null && !isNaN(v)) count++; }
        return count;""")
    if points != n:
        fail(f"{page}: chart-sizes has {points} points over its type series, the run has {n} frames")

    # Hover the middle frame's point on the frame-size chart.
    k = n // 2
    element = driver.find_element(By.ID, "chart-sizes")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", element)
    target = driver.execute_script("""
        var g = window.enclabCharts.graphs['chart-sizes'], k = arguments[0], y = null;
        for (var c = 1; c < g.numColumns(); c++) { var v = g.getValue(k, c); if (v !== null && !isNaN(v)) y = v; }
        var p = g.toDomCoords(g.getValue(k, 0), y);
        var r = g.graphDiv.getBoundingClientRect(), e = arguments[1].getBoundingClientRect();
        return [p[0] + r.left - e.left - e.width / 2, p[1] + r.top - e.top - e.height / 2];""", k, element)
    ActionChains(driver).move_to_element_with_offset(element, int(round(target[0])), int(round(target[1]))).perform()
    legend = driver.find_element(By.ID, "chart-sizes-legend").text
    m = re.search(r"coded_index (\d+)", legend)
    if not m:
        fail(f"{page}: hovering frame {k} shows no frame in the legend: {legend!r}")
    else:
        coded = int(m.group(1))
        if coded != k:
            fail(f"{page}: hovering the point of coded_index {k} shows coded_index {coded}")
        row = con.execute("SELECT display_index, type, size_bytes, pts, dts, qp, psnr_y, psnr_u, psnr_v, psnr_avg, ssim "
                          "FROM frames WHERE run_id = ? AND coded_index = ?", (run_id, coded)).fetchone()
        d, t, size, pts, dts, qp, y, u, v, a, ssim = row
        expected = (f"coded_index {coded}, display_index {d} · type {t} · size {size} bytes · "
                    f"PTS {seconds(pts, tn, td)} s · DTS {seconds(dts, tn, td)} s · QP {fmt(qp, 2)} · "
                    f"PSNR Y {fmt(y, 3)} U {fmt(u, 3)} V {fmt(v, 3)} frame {fmt(a, 3)} dB · SSIM {fmt(ssim, 6)}")
        if expected not in legend:
            fail(f"{page}: hover legend {legend!r} does not show the stored values {expected!r}")

    perceptual(driver, con, run_id, page, n)

    # Drag across the middle of the chart: the x range shrinks, and the other charts follow.
    before = driver.execute_script("return window.enclabCharts.graphs['chart-sizes'].xAxisRange();")
    width = element.size["width"]
    ActionChains(driver).move_to_element_with_offset(element, int(-width * 0.2), 0).click_and_hold() \
        .move_by_offset(int(width * 0.3), 0).release().perform()
    after = driver.execute_script("return window.enclabCharts.graphs['chart-sizes'].xAxisRange();")
    if not (after[0] > before[0] and after[1] < before[1]):
        fail(f"{page}: dragging across chart-sizes did not zoom: x range {before} -> {after}")
    others = driver.execute_script("""
        var g = window.enclabCharts.graphs, out = {};
        Object.keys(g).forEach(function (k) { if (g[k].enclabGroup === 'run') out[k] = g[k].xAxisRange(); }); return out;""")
    for chart, r in others.items():
        if abs(r[0] - after[0]) > 1e-9 or abs(r[1] - after[1]) > 1e-9:
            fail(f"{page}: {chart} did not follow the zoom: {r} against {after}")
    rtp(driver, con, page, run_id)
    con.close()


def lost_packets(driver, con, page, run_id):
    """The packets lost on chart-rtp-packets: one point per frame with lost_packets > 0 (sqlite3, decode order), each
    seen over the stems: read back from the canvas, the red (#d62728) around the point spans at least 11 pixel columns
    and 11 rows (a bold cross of 13 px), not a dot lost on a stem."""
    lost = con.execute("SELECT coded_index, lost_packets FROM rtp_frames WHERE run_id = ? AND lost_packets > 0 ORDER BY coded_index",
                       (run_id,)).fetchall()
    if not lost:
        return
    found = driver.execute_script("""
        var g = window.enclabCharts.graphs['chart-rtp-packets'];
        if (!g) return null;
        var c = g.getLabels().indexOf('packets lost');
        if (c < 0) return {labels: g.getLabels()};
        var out = [];
        for (var r = 0; r < g.numRows(); r++) { var v = g.getValue(r, c); if (v !== null && !isNaN(v)) out.push([r, v]); }
        return {points: out};""")
    if found is None or "points" not in found:
        fail(f"{page}: the run has {len(lost)} frames with packets lost (sqlite3) but chart-rtp-packets has no 'packets lost' series ({found})")
        return
    if [(r, int(v)) for r, v in found["points"]] != [(k, n) for k, n in lost]:
        fail(f"{page}: chart-rtp-packets' lost points {found['points']} are not sqlite3's {lost}")
        return
    element = driver.find_element(By.ID, "chart-rtp-packets")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", element)
    # The page's charts zoom together: back to the whole run, so that every point is on the chart.
    driver.execute_script("window.enclabCharts.graphs['chart-rtp-packets'].resetZoom();")
    for r, v in found["points"]:
        size = driver.execute_script("""
            var g = window.enclabCharts.graphs['chart-rtp-packets'], canvas = g.hidden_;
            var ratio = canvas.width / canvas.getBoundingClientRect().width;
            var p = g.toDomCoords(g.getValue(arguments[0], 0), arguments[1]);
            var half = Math.round(10 * ratio), x0 = Math.round(p[0] * ratio) - half, y0 = Math.round(p[1] * ratio) - half, w = 2 * half + 1;
            var px = canvas.getContext('2d').getImageData(x0, y0, w, w).data, cols = {}, rows = {};
            for (var y = 0; y < w; y++) for (var x = 0; x < w; x++) {
              var i = (y * w + x) * 4;
              if (px[i + 3] > 150 && Math.abs(px[i] - 214) + Math.abs(px[i + 1] - 39) + Math.abs(px[i + 2] - 40) < 60) { cols[x] = 1; rows[y] = 1; }
            }
            return [Object.keys(cols).length / ratio, Object.keys(rows).length / ratio];""", r, v)
        if size[0] < 11 or size[1] < 11:
            fail(f"{page}: the packets-lost point of row {r} on chart-rtp-packets is {size[0]:.0f} x {size[1]:.0f} px of red: too small to see over the stems")
            break


def rate_schedule(driver, con, page, run_id, n):
    settings = json.loads(con.execute("SELECT settings FROM runs WHERE run_id = ?", (run_id,)).fetchone()[0])
    resolved = settings.get("resolved", {})
    opened = float(resolved["bitrate_kbps"]) if resolved.get("rc_method") == "abr" and resolved.get("bitrate_kbps") else None
    changes = con.execute("SELECT c.change_index, c.name, c.value, c.frame, c.status, c.target_kbps, f.coded_index "
                          "FROM rate_changes c LEFT JOIN frames f ON f.run_id = c.run_id AND f.display_index = c.frame "
                          "WHERE c.run_id = ? ORDER BY c.change_index", (run_id,)).fetchall()
    # The staircase by hand: the value at each coded position.
    expected, current = [], opened
    steps = {coded: target for _, _, _, _, status, target, coded in changes
             if status == "applied" and target is not None and coded is not None}
    for k in range(n):
        if k in steps:
            current = steps[k]
        expected.append(current)
    drawn = driver.execute_script("""
        var g = window.enclabCharts.graphs['chart-bitrate'];
        if (!g) return null;
        var labels = g.getLabels(), c = labels.indexOf('target in force (rate schedule)');
        if (c < 0) return {labels: labels};
        var out = [];
        for (var r = 0; r < g.numRows(); r++) out.push(g.getValue(r, c));
        return {values: out};""")
    if drawn is None or "values" not in drawn:
        fail(f"{page}: the run has rate_changes but chart-bitrate draws no staircase ({drawn})")
        return
    values = drawn["values"]
    if len(values) != n:
        fail(f"{page}: the staircase has {len(values)} rows, the run has {n} frames")
    for k, (v, e) in enumerate(zip(values, expected)):
        if (v is None) != (e is None) or (e is not None and abs(v - e) > 1e-9):
            fail(f"{page}: the staircase at coded_index {k} is {v}, sqlite3's rate_changes give {e}")
            break
    data = driver.execute_script("""
        var b = document.querySelector('script.enclab-chart-data[data-group="run"]');
        var d = JSON.parse(b.textContent), chart = d.charts.filter(function (c) { return c.id === 'chart-bitrate'; })[0];
        return {marks: chart.marks, x: d.runs[0].f.x};""")
    reached = [c for c in changes if c[6] is not None]
    if len(data["marks"]) != len(reached):
        fail(f"{page}: chart-bitrate marks {len(data['marks'])} changes, sqlite3 has {len(reached)} that reached a frame")
    for mark, (index, name, value, frame, status, _, coded) in zip(data["marks"], reached):
        want = f"change {index} at frame {frame}: {name}={value} {status}"
        if mark["name"] != want or abs(mark["x"] - data["x"][coded]) > 1e-9:
            fail(f"{page}: mark {mark} is not {want!r} at x {data['x'][coded]} (coded_index {coded})")
    text = driver.find_element(By.TAG_NAME, "body").text
    table = driver.find_element(By.ID, "rate-changes").text
    warnings = json.loads(con.execute("SELECT warnings FROM runs WHERE run_id = ?", (run_id,)).fetchone()[0] or "[]")
    for index, name, value, frame, status, _, _ in changes:
        if status not in ("ignored", "refused"):
            continue
        if f"{name}={value}" not in table or status not in table:
            fail(f"{page}: the {status} change {index} ({name}={value}) is not in the rate-changes table")
        said = [w for w in warnings if w.startswith("rate schedule:") and f"{name}={value}" in w and status in w]
        if not said:
            fail(f"{page}: runs.warnings has no warning for the {status} change {index}")
        for w in said:
            if w not in text:
                fail(f"{page}: the warning {w!r} is not on the page")


def deadlines_visible(driver, page):
    """Every deadline of the keyframe timeline is seen on its own, read back from the chart's canvas: in the pixel
    columns around it (x +- 2 px), rows where a pixel is of its colour and none is of another deadline's colour (each
    opaque pixel taken as the nearest of the deadlines' colours). A deadline by frames and one by seconds at (nearly)
    the same time are then both seen, neither drawn over the other or blended with it."""
    hidden = driver.execute_script("""
        var g = window.enclabCharts.graphs['chart-keyframes'];
        var b = document.querySelector('script.enclab-chart-data[data-group="keyframes"]');
        if (!g || !b) return null;
        var marks = JSON.parse(b.textContent).charts[0].marks.filter(function (m) { return m.name !== 'skipped by the encoder'; }), canvas = g.hidden_, area = g.getArea();
        var ratio = canvas.width / canvas.getBoundingClientRect().width;
        var ctx = canvas.getContext('2d'), out = [];
        function rgb(h) { return [parseInt(h.substr(1, 2), 16), parseInt(h.substr(3, 2), 16), parseInt(h.substr(5, 2), 16)]; }
        var colours = [];
        marks.forEach(function (m) { if (colours.indexOf(m.colour) < 0) colours.push(m.colour); });
        var palette = colours.map(rgb);
        function nearest(px, i) {
          var best = -1, d = 100;
          palette.forEach(function (c, k) {
            var e = Math.abs(px[i] - c[0]) + Math.abs(px[i + 1] - c[1]) + Math.abs(px[i + 2] - c[2]);
            if (e < d) { d = e; best = k; }
          });
          return best;
        }
        marks.forEach(function (m) {
          var own = colours.indexOf(m.colour), x = g.toDomXCoord(m.x);
          var w = Math.max(1, Math.round(5 * ratio)), h = Math.round(area.h * ratio);
          var px = ctx.getImageData(Math.round((x - 2.5) * ratio), Math.round(area.y * ratio), w, h).data, rows = 0;
          for (var y = 0; y < h; y++) {
            var mine = false, other = false;
            for (var c = 0; c < w; c++) {
              var i = (y * w + c) * 4;
              if (px[i + 3] < 200) continue;
              var k = nearest(px, i);
              if (k === own) mine = true; else if (k >= 0) other = true;
            }
            if (mine && !other) rows++;
          }
          if (rows < 4) out.push([m.name, m.x, rows]);
        });
        return out;""")
    if hidden is None:
        fail(f"{page}: no keyframe timeline to read")
        return
    for name, x, rows in hidden:
        fail(f"{page}: the keyframe deadline '{name}' at {x} s is not seen on its own: {rows} pixel rows of its colour alone")


def rtp(driver, con, page, run_id):
    has_table = con.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'rtp_frames'").fetchone()[0]
    rows = con.execute("SELECT coded_index, packets FROM rtp_frames WHERE run_id = ? ORDER BY coded_index",
                       (run_id,)).fetchall() if has_table else []
    if not rows:
        return
    drawn = driver.execute_script("""
        function column(id, label) {
          var g = window.enclabCharts.graphs[id];
          if (!g) return null;
          var c = g.getLabels().indexOf(label);
          if (c < 0) return {labels: g.getLabels()};
          var out = [];
          for (var r = 0; r < g.numRows(); r++) out.push(g.getValue(r, c));
          return {values: out};
        }
        var b = document.querySelector('script.enclab-chart-data[data-group="run"]');
        var d = JSON.parse(b.textContent);
        return {packets: column('chart-rtp-packets', 'RTP packets of the frame'),
                frozen: column('chart-rtp-loss', 'frozen (the picture before shown again)'),
                broken: column('chart-rtp-loss', 'broken (over 0.5 dB under the loss-free decode)'),
                display: d.runs[0].f.d, coded: d.runs[0].f.c};""")
    packets = drawn["packets"]
    if packets is None or "values" not in packets:
        fail(f"{page}: the run has rtp_frames rows but no chart-rtp-packets with 'RTP packets of the frame' ({packets})")
    else:
        expected = [p for _, p in rows]
        if packets["values"] != expected:
            fail(f"{page}: chart-rtp-packets draws {packets['values']}, sqlite3's rtp_frames packets are {expected}")
    lost_packets(driver, con, page, run_id)
    run = con.execute("SELECT * FROM rtp_runs WHERE run_id = ?", (run_id,)).fetchone()
    names = [c[0] for c in con.execute("SELECT * FROM rtp_runs LIMIT 0").description]
    stored = dict(zip(names, run)) if run else {}
    if stored.get("loss") is not None:
        for state, key in [("frozen", "frozen"), ("broken", "broken")]:
            want = sorted(d for (d,) in con.execute("SELECT display_index FROM rtp_loss_frames WHERE run_id = ? AND state = ?",
                                                     (run_id, state)))
            marks = drawn[key]
            if marks is None or "values" not in marks:
                fail(f"{page}: the run has a loss model but chart-rtp-loss has no {state} series ({marks})")
                continue
            got = sorted(drawn["display"][r] for r, v in enumerate(marks["values"]) if v is not None)
            if got != want:
                fail(f"{page}: chart-rtp-loss marks display indexes {got} {state}, sqlite3's rtp_loss_frames has {want}")
    cells = driver.execute_script("""
        var t = document.getElementById('rtp-run'); if (!t) return null;
        return Array.prototype.map.call(t.querySelectorAll('tbody tr'), function (tr) {
          return Array.prototype.map.call(tr.cells, function (td) { return td.textContent; }); });""")
    if cells is None:
        fail(f"{page}: the run has an rtp_runs row but the page has no table rtp-run")
        return
    seen = set()
    for name, value, source in cells:
        if source.startswith("rtp_runs."):
            column = source[len("rtp_runs."):]
            want = stored.get(column)
        elif source.startswith("rtp_overhead_bytes / payload_bytes"):
            column = "overhead %"
            want = stored["rtp_overhead_bytes"] / stored["payload_bytes"] * 100 if stored.get("payload_bytes") else None
        else:
            fail(f"{page}: rtp-run row {name!r} names no stored value ({source!r})")
            continue
        seen.add(column)
        if isinstance(want, str) or want is None:
            ok = value == (want or "")
        else:
            decimals = len(value.split(".")[1]) if "." in value else 0
            try:
                ok = abs(float(value) - want) <= 0.5 * 10 ** -decimals + 1e-9
            except ValueError:
                ok = False
        if not ok:
            fail(f"{page}: rtp-run shows {name} = {value!r}, sqlite3's rtp_runs has {want!r}")
    required = ["packets", "max_packets_per_frame", "largest_burst_bytes", "rtp_overhead_bytes", "overhead %"]
    if stored.get("loss") is not None:
        required += ["loss", "packets_lost", "frames_frozen", "frames_broken", "loss_events", "mean_recovery_frames",
                     "max_recovery_frames", "unrecovered_events"]
    for column in required:
        if column not in seen:
            fail(f"{page}: rtp-run does not show {column}")


def experiment_page(driver, db, page):
    if not load(driver, page):
        return
    con = sqlite3.connect(db)
    per_rate_pairs(driver, con, page)
    groups = driver.execute_script("""
        var out = [], s = window.enclabCharts;
        Object.keys(s.graphs).forEach(function (id) {
          var g = s.graphs[id], group = s.groups[g.enclabGroup];
          if (g.enclabGroup === 'run' || group.follows) return;
          var counts = group.runs.map(function () { return 0; });
          group.rows.forEach(function (row) { row.frames.forEach(function (k, r) { if (k >= 0) counts[r]++; }); });
          out.push({ id: id, rows: g.numRows(), merged: group.rows.length,
                     runs: group.runs.map(function (run, r) { return [run.id, counts[r]]; }) });
        });
        return out;""")
    for chart in groups:
        if chart["rows"] != chart["merged"]:
            fail(f"{page}: {chart['id']} has {chart['rows']} rows, its group {chart['merged']}")
        for run_id, count in chart["runs"]:
            n = con.execute("SELECT count(*) FROM frames WHERE run_id = ?", (run_id,)).fetchone()[0]
            if count != n:
                fail(f"{page}: {chart['id']}: run {run_id} has {count} points, {n} frames in sqlite3")
    # The note on clips too short for ABR's start-up explains x264's estimator: it names x264 runs only.
    for note in driver.execute_script("return Array.prototype.map.call(document.querySelectorAll('li.short-clip'), "
                                      "function (li) { return li.innerText; });"):
        named = re.search(r"\(\d+ [A-Z ]+? runs?, runs? ([0-9, ]+)", note)
        for run_id in ([int(x) for x in named.group(1).replace(" ", "").split(",") if x] if named else []):
            if openh264_mode(con, run_id) is not None:
                fail(f"{page}: the note on clips too short for ABR's start-up (x264's estimator) names OpenH264 run {run_id}")
    # An OpenH264 run's configuration starts with its encoder and its rate-control mode in OpenH264's terms.
    cells = driver.execute_script("""
        var t = document.getElementById('runs');
        if (!t) return [];
        return Array.prototype.map.call(t.querySelectorAll('tbody tr'), function (tr) { return tr.cells[0].innerText; });""")
    for cell in cells:
        found = re.match(r"\s*(\d+) (.*?) · ", cell)
        if not found:
            continue
        mode = openh264_mode(con, int(found.group(1)))
        if mode is not None and not (found.group(2) + " ").startswith(f"openh264 {mode} "):
            fail(f"{page}: run {found.group(1)}'s configuration '{found.group(2)}' does not start with 'openh264 {mode}' "
                 "(sqlite3: $.openh264_params iRCMode, codec_app_def.h's RC_MODES)")
    data_rate_overlay(driver, con, page)
    overlay_ranges(driver, con, page)
    overlay_perceptual(driver, con, page)
    overlay_keyframes(driver, con, page)
    con.close()
    tables_fit(driver, page)
    # The runs table: at most 10 columns shown by default, the others behind the column chooser.
    shown = driver.execute_script("""
        var t = document.getElementById('runs'); if (!t) return null;
        return Array.prototype.filter.call(t.querySelectorAll('thead th'), function (th) { return th.offsetParent !== null; }).length;""")
    if shown is not None and shown > 10:
        fail(f"{page}: the runs table shows {shown} columns by default, more than 10")
    # A run's label in the runs table: no flag broken across lines ("--vbv-" on one line, "bufsize 300" on the next).
    broken = driver.execute_script("""
        var out = [];
        document.querySelectorAll('#runs td span.label').forEach(function (label) {
          var nodes = [], text = '', walker = document.createTreeWalker(label, NodeFilter.SHOW_TEXT);
          while (walker.nextNode()) { nodes.push([walker.currentNode, text.length]); text += walker.currentNode.data; }
          function at(k) { for (var i = nodes.length - 1; i >= 0; i--) if (nodes[i][1] <= k) return [nodes[i][0], k - nodes[i][1]]; }
          var re = /--[^ ]+/g, m;
          while ((m = re.exec(text)) !== null) {
            var r = document.createRange(), a = at(m.index), b = at(m.index + m[0].length - 1);
            r.setStart(a[0], a[1]); r.setEnd(b[0], b[1] + 1);
            var tops = {};
            Array.prototype.forEach.call(r.getClientRects(), function (c) { if (c.width > 0) tops[Math.round(c.top)] = true; });
            if (Object.keys(tops).length > 1) out.push(m[0]);
          }
        });
        return out;""")
    for flag in broken:
        fail(f"{page}: the runs table breaks the flag {flag!r} of a run's label across lines")


def per_rate_pairs(driver, con, page):
    """Each row of every per-rate table (the paragraph p.per-rate and the table after it) pairs points at comparable
    rates, read with sqlite3 from run_metrics: a row paired at an equal target names one test run whose target_kbps
    is the anchor run's; an interpolated row reads the test quality between test runs whose bitrate_kbps lie on
    either side of the anchor's (or one run at exactly that rate) and the test rate between runs whose psnr_global
    lie on either side of the anchor's, or leaves the cell empty with a note. A row saying neither (paired by rank)
    fails."""
    tables = driver.execute_script("""
        var out = [];
        document.querySelectorAll('p.per-rate').forEach(function (p) {
          var box = p.nextElementSibling, table = box && box.querySelector('table');
          if (!table) { out.push({text: p.textContent, rows: null}); return; }
          var rows = [];
          table.querySelectorAll('tbody tr').forEach(function (tr) {
            var cells = Array.prototype.map.call(tr.cells, function (td) {
              var runs = td.querySelector('[data-runs]'), pairing = td.querySelector('[data-pairing]');
              return {text: td.textContent, runs: runs ? runs.getAttribute('data-runs') : null,
                      pairing: pairing ? pairing.getAttribute('data-pairing') : null};
            });
            rows.push(cells);
          });
          out.push({text: p.textContent, column: table.getAttribute('data-column'), rows: rows});
        });
        return out;""")

    def metric(run_id, column):
        row = con.execute(f"SELECT {column} FROM run_metrics WHERE run_id = ?", (run_id,)).fetchone()
        return row[0] if row else None

    def between(value, runs, column, what, where):
        values = [metric(r, column) for r in runs]
        if None in values:
            fail(f"{where}: {what} from runs {runs}: a run without {column}")
        elif len(runs) == 1 and values[0] != value:
            fail(f"{where}: {what} read at run {runs[0]} ({column} {values[0]}), not at the anchor's {value}")
        elif len(runs) == 2 and not (min(values) <= value <= max(values)):
            fail(f"{where}: {what} interpolated between runs {runs} ({column} {values}), which do not surround the anchor's {value}")
        elif len(runs) not in (1, 2):
            fail(f"{where}: {what} from {len(runs)} runs")

    for t in tables:
        head = t["text"][:80]
        if t["rows"] is None:
            fail(f"{page}: per-rate paragraph '{head}' has no table after it")
            continue
        for k, cells in enumerate(t["rows"]):
            where = f"{page}: per-rate table '{head}', row {k + 1}"
            pairing = cells[0]["pairing"] if cells else None
            if pairing is None:
                fail(f"{where}: the row does not say how it was paired ({[c['text'] for c in cells]})")
                continue
            anchor = int(cells[1]["text"])
            rate_runs = [int(x) for x in (cells[5]["runs"] or "").split()]
            quality_runs = [int(x) for x in (cells[8]["runs"] or "").split()]
            if pairing == "target":
                target = metric(anchor, "target_kbps")
                if len(rate_runs) != 1 or quality_runs != rate_runs:
                    fail(f"{where}: paired at an equal target but names test runs {rate_runs} and {quality_runs}")
                elif target is None or metric(rate_runs[0], "target_kbps") != target:
                    fail(f"{where}: paired at an equal target, but the anchor run {anchor} asked for {target} kbit/s "
                         f"and the test run {rate_runs[0]} for {metric(rate_runs[0], 'target_kbps')}")
            elif pairing == "interpolated":
                if quality_runs:
                    between(metric(anchor, "bitrate_kbps"), quality_runs, "bitrate_kbps", "the test quality at the anchor's rate", where)
                elif not cells[7]["text"].strip():
                    fail(f"{where}: no test quality and no note saying why")
                if rate_runs and t.get("column") == "psnr_global":
                    between(metric(anchor, "psnr_global"), rate_runs, "psnr_global", "the test rate at the anchor's PSNR", where)
                elif not rate_runs and not cells[4]["text"].strip():
                    fail(f"{where}: no test rate and no note saying why")
            else:
                fail(f"{where}: paired '{pairing}', neither an equal target nor interpolated")


def keyframe_positions(driver, con, run_id, tn, td, page):
    """Each IDR and I frame of the keyframe timeline is drawn at its own PTS in seconds from the run's first PTS
    (sqlite3, exact, 6 decimals), whatever pictures the encoder skipped before it."""
    drawn = driver.execute_script("""
        var g = window.enclabCharts.graphs['chart-keyframes'];
        if (!g) return null;
        var xs = [];
        for (var r = 0; r < g.numRows(); r++) xs.push(g.getValue(r, 0));
        xs.sort(function (a, b) { return a - b; });
        return xs.slice(1, xs.length - 1).map(function (x) { return x.toFixed(6); });""")
    if drawn is None:
        return
    first = con.execute("SELECT min(pts) FROM frames WHERE run_id = ?", (run_id,)).fetchone()[0]
    expected = [seconds(pts - first, tn, td) for (pts,) in
                con.execute("SELECT pts FROM frames WHERE run_id = ? AND type IN ('IDR', 'I') ORDER BY pts", (run_id,))]
    if drawn != expected:
        fail(f"{page}: the keyframe timeline draws its IDR and I frames at {drawn} s, their PTS in sqlite3 are at {expected} s")


# OpenH264's iRCMode constants (codec_app_def.h, RC_MODES): the lab's names of them.
OPENH264_RC_MODES = {"0": "quality", "1": "bitrate", "2": "bufferbased", "3": "timestamp", "-1": "off"}


def openh264_mode(con, run_id):
    """The OpenH264 rate-control mode a run gave the library (runs.settings $.openh264_params' iRCMode=N, named as
    codec_app_def.h's RC_MODES), or None for a run of another encoder."""
    name, params = con.execute("SELECT json_extract(settings, '$.encoder.name'), json_extract(settings, '$.openh264_params') "
                               "FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    if name != "openh264":
        return None
    found = re.search(r"(?:^| )iRCMode=(-?\d+)", params or "")
    return OPENH264_RC_MODES.get(found.group(1)) if found else "?"


def settings_row(driver, con, run_id, page):
    """An OpenH264 run's page names its encoder's settings "OpenH264 settings", not "x264 flags"."""
    if openh264_mode(con, run_id) is None:
        return
    heads = driver.execute_script("""
        return Array.prototype.map.call(document.querySelectorAll('table tr td:first-child, table tr th:first-child'),
                                        function (c) { return c.innerText.trim(); });""")
    if "x264 flags" in heads or "OpenH264 settings" not in heads:
        fail(f"{page}: an OpenH264 run (sqlite3: $.encoder.name openh264) whose settings row is not named 'OpenH264 settings' (rows: {heads[:8]})")


def window_bytes(dts, sizes, tn, td, seconds):
    """The bytes of the window of `seconds` (a Fraction) of decode time starting at each frame, by the lab's window rule
    (docs/report.md) written out here: a frame's arrival is the largest DTS up to it; frame j is in frame k's window
    when 0 <= (arrival_j - arrival_k) * timebase < seconds, exactly (fractions)."""
    arrival, top = [], None
    for d in dts:
        top = d if top is None or d > top else top
        arrival.append(top)
    tb = fractions.Fraction(tn, td)
    return [sum(s for a, s in zip(arrival, sizes) if 0 <= (a - ak) * tb < seconds) for ak in arrival]


def series_points(driver, chart, k):
    """The points the chart `chart` draws of its series `k` (its rows whose value is a number)."""
    return driver.execute_script("""
        var g = window.enclabCharts.graphs[arguments[0]], c = arguments[1] + 1, n = 0;
        for (var r = 0; r < g.numRows(); r++) { var v = g.getValue(r, c); if (v !== null && !isNaN(v)) n++; }
        return n;""", chart, k)


def data_rate_overlay(driver, con, page):
    """Every overlaid run with DataRateLimits pairs (data_rate_windows rows, read with sqlite3) has them on its clip's
    DataRateLimits overlay chart (OVERLAY-datarate): a run shown at first has each pair's limit line at the stored
    bytes in the run's colour, read back from the chart's canvas (a pixel of that colour on the row
    toDomYCoord(bytes), at the line's left end); every run has as many windows marked over the pair as frames whose
    window of the pair's length holds more than the stored bytes (computed here from the frames' DTS and sizes)."""
    if not con.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'data_rate_windows'").fetchone()[0]:
        return
    groups = driver.execute_script("""
        var out = [];
        document.querySelectorAll('script.enclab-chart-data').forEach(function (b) {
          var d = JSON.parse(b.textContent);
          out.push({ runs: d.runs.map(function (r) { return [r.id, r.colour, r.visible]; }),
                     charts: d.charts.map(function (c) { return { id: c.id, limits: c.limits, series: c.series }; }) });
        });
        return out;""")
    for group in groups:
        charts = [c for c in group["charts"] if c["id"].endswith("-datarate")]
        for r, (run_id, colour, visible) in enumerate(group["runs"]):
            pairs = con.execute("SELECT pair, bytes, seconds FROM data_rate_windows WHERE run_id = ? ORDER BY pair", (run_id,)).fetchall()
            if not pairs:
                continue
            if not charts:
                fail(f"{page}: run {run_id} has DataRateLimits pairs in sqlite3, its overlay draws no DataRateLimits chart")
                continue
            chart = charts[0]
            tn, td = con.execute("SELECT timebase_num, timebase_den FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            frames = con.execute("SELECT dts, size_bytes FROM frames WHERE run_id = ? ORDER BY coded_index", (run_id,)).fetchall()
            for i, (pair, limit, seconds) in enumerate(pairs):
                if visible:
                    line = [l for l in chart["limits"] if l["value"] == limit and l["colour"] == colour and f"run {run_id} " in l["name"]]
                    if not line:
                        fail(f"{page}: {chart['id']} has no limit line of run {run_id} at the stored {limit} bytes in its colour {colour}: {chart['limits']}")
                    else:
                        seen = driver.execute_script("""
                            var g = window.enclabCharts.graphs[arguments[0]], area = g.getArea(), canvas = g.hidden_;
                            var ratio = canvas.width / canvas.getBoundingClientRect().width, y = g.toDomYCoord(arguments[1]);
                            var px = canvas.getContext('2d').getImageData(Math.round((area.x + 1) * ratio), Math.round((y - 2.5) * ratio),
                                                                          Math.round(4 * ratio), Math.round(5 * ratio)).data;
                            var c = arguments[2], want = [parseInt(c.substr(1, 2), 16), parseInt(c.substr(3, 2), 16), parseInt(c.substr(5, 2), 16)];
                            for (var k = 0; k < px.length; k += 4)
                              if (px[k + 3] > 100 && Math.abs(px[k] - want[0]) + Math.abs(px[k + 1] - want[1]) + Math.abs(px[k + 2] - want[2]) < 40) return true;
                            return false;""", chart["id"], limit, colour)
                        if not seen:
                            fail(f"{page}: {chart['id']}: no pixel of run {run_id}'s colour {colour} on the row of its limit {limit} bytes")
                windows = window_bytes([d for d, _ in frames], [s for _, s in frames], tn, td, fractions.Fraction(seconds))
                expected = sum(1 for b in windows if b > limit)
                marked = [k for k, s in enumerate(chart["series"]) if s["run"] == r and s.get("above") == limit and s["style"] == "points"]
                if len(marked) != 1:
                    fail(f"{page}: {chart['id']}: run {run_id} pair {pair}: {len(marked)} series of windows over {limit} bytes, expected 1")
                    continue
                count = series_points(driver, chart["id"], marked[0])
                if count != expected:
                    fail(f"{page}: {chart['id']}: run {run_id} pair {pair} marks {count} windows over {limit} bytes, "
                         f"sqlite3's frames give {expected}")


def limit_labels(driver, page, chart_id):
    """The dashed lines' labels of chart `chart_id` (window.enclabCharts.graphs[id].enclabLabels, the boxes drawn):
    one per line of a shown run in the plot area, none over another, and each drawn over the data: every pixel of its
    box on the chart's canvas is white or a blend of white and the label's colour (no data line shows through)."""
    got = driver.execute_script("""
        var id = arguments[0], g = window.enclabCharts.graphs[id], d = null;
        document.querySelectorAll('script.enclab-chart-data').forEach(function (b) {
          JSON.parse(b.textContent).charts.forEach(function (c) { if (c.id === id) d = c; });
        });
        var runs = window.enclabCharts.groups[g.enclabGroup].runs, area = g.getArea(), range = g.yAxisRange();
        var lines = (d ? d.limits : []).filter(function (l) {
          return (l.run === undefined || runs[l.run].visible) && l.value >= range[0] && l.value <= range[1]; });
        var canvas = g.hidden_, ratio = canvas.width / canvas.getBoundingClientRect().width, ctx = canvas.getContext('2d');
        var boxes = (g.enclabLabels || []).map(function (b) {
          var x = Math.ceil(b.x0 * ratio), y = Math.ceil(b.y0 * ratio), w = Math.floor(b.x1 * ratio) - x, h = Math.floor(b.y1 * ratio) - y;
          var px = Array.prototype.slice.call(ctx.getImageData(x, y, w, h).data);
          return { box: [b.x0, b.y0, b.x1, b.y1], name: b.name, colour: b.colour, px: px };
        });
        return { lines: lines.map(function (l) { return l.name; }), boxes: boxes, area: [area.x, area.y, area.x + area.w, area.y + area.h],
                 labelled: g.enclabLabels !== undefined };""", chart_id)
    if not got["lines"]:
        return
    if not got["labelled"]:
        fail(f"{page}: {chart_id}: its lines {got['lines']} have no labels drawn over the chart")
        return
    named = sorted(b["name"] for b in got["boxes"])
    if named != sorted(got["lines"]):
        fail(f"{page}: {chart_id}: labels {named}, the shown lines are {sorted(got['lines'])}")
    a = got["area"]
    for i, b in enumerate(got["boxes"]):
        x0, y0, x1, y1 = b["box"]
        if x0 < a[0] or y0 < a[1] or x1 > a[2] or y1 > a[3]:
            fail(f"{page}: {chart_id}: the label {b['name']!r} at {b['box']} leaves the plot area {a}")
        for c in got["boxes"][i + 1:]:
            u0, v0, u1, v1 = c["box"]
            if x0 < u1 and u0 < x1 and y0 < v1 and v0 < y1:
                fail(f"{page}: {chart_id}: the labels {b['name']!r} and {c['name']!r} overlap ({b['box']}, {c['box']})")
        want = [int(b["colour"][k:k + 2], 16) for k in (1, 3, 5)]
        px, stray = b["px"], 0
        for k in range(0, len(px), 4):
            p = px[k:k + 3]
            if px[k + 3] < 250:
                stray += 1
                continue
            # The nearest blend of white and the label's colour: t along white -> colour.
            d = [w - 255 for w in want]
            t = max(0.0, min(1.0, sum((q - 255) * e for q, e in zip(p, d)) / (sum(e * e for e in d) or 1)))
            if sum(abs(q - (255 + t * e)) for q, e in zip(p, d)) > 40:
                stray += 1
        if stray > 0.01 * (len(px) // 4):
            fail(f"{page}: {chart_id}: the label {b['name']!r} is not drawn over the data: {stray} of {len(px) // 4} pixels of its box are neither white nor its colour")


def overlay_ranges(driver, con, page):
    """The y range of each overlay chart drawn from 0 fits the runs shown, not every run offered: its top is 8 % above
    the largest value of the shown runs' series and lines (the frame-size chart's: sqlite3's largest size_bytes x 8 /
    1000 kbit of the shown runs); showing a hidden run with its box takes the range up to that run's largest frame
    (sqlite3), hiding it again brings it back. Each chart's line labels as ``limit_labels``, before and after."""
    def state():
        return driver.execute_script("""
            var out = [], s = window.enclabCharts;
            document.querySelectorAll('script.enclab-chart-data').forEach(function (b) {
              var name = b.getAttribute('data-group'), d = JSON.parse(b.textContent), group = s.groups[name];
              if (name === 'run' || !group || d.follows) return;
              d.charts.forEach(function (c) {
                var g = s.graphs[c.id];
                if (!g || !c.fromZero || c.yRange) return;
                var top = 0;
                for (var i = 0; i < g.numRows(); i++)
                  c.series.forEach(function (se, k) { var v = g.getValue(i, k + 1); if (group.runs[se.run].visible && v !== null && v > top) top = v; });
                c.limits.forEach(function (l) { if ((l.run === undefined || group.runs[l.run].visible) && l.value > top) top = l.value; });
                out.push({ group: name, id: c.id, range: g.yAxisRange(), top: top,
                           runs: group.runs.map(function (r) { return [r.id, r.visible]; }) });
              });
            });
            return out;""")
    def sizes_top(runs):
        shown = [run_id for run_id, visible in runs if visible]
        return max((con.execute("SELECT max(size_bytes) FROM frames WHERE run_id = ?", (r,)).fetchone()[0] or 0) for r in shown) * 8 / 1000 if shown else 0
    def check(charts, when):
        for c in charts:
            want = 1.08 * c["top"] if c["top"] > 0 else 1
            if abs(c["range"][1] - want) > 1e-6 * max(1, want):
                fail(f"{page}: {c['id']} ({when}): y range {c['range']}, the shown runs' values and lines reach {c['top']} (top {want} expected)")
            if c["id"].endswith("-sizes"):
                stored = 1.08 * sizes_top(c["runs"])
                if abs(c["range"][1] - stored) > 1e-6 * max(1, stored):
                    fail(f"{page}: {c['id']} ({when}): y range {c['range']}, sqlite3's largest frame of the shown runs {c['runs']} gives {stored}")
            limit_labels(driver, page, c["id"])
    charts = state()
    check(charts, "at first")
    # Show each clip's first hidden run, then hide it again.
    for name in sorted({c["group"] for c in charts}):
        runs = next(c["runs"] for c in charts if c["group"] == name)
        hidden = [k for k, (_, visible) in enumerate(runs) if not visible]
        if not hidden:
            continue
        toggle = "var b = document.querySelector('input.run-pick[data-group=\"' + arguments[0] + '\"][data-run=\"' + arguments[1] + '\"]'); if (b) b.click(); return !!b;"
        if not driver.execute_script(toggle, name, hidden[0]):
            fail(f"{page}: {name}: no box for hidden run {runs[hidden[0]][0]}")
            continue
        check([c for c in state() if c["group"] == name], f"run {runs[hidden[0]][0]} shown")
        driver.execute_script(toggle, name, hidden[0])
        check([c for c in state() if c["group"] == name], f"run {runs[hidden[0]][0]} hidden again")


def overlay_groups(driver):
    """The overlay groups of the loaded page: per group its name, what it follows, its runs (id, colour, shown) and
    charts (id, series, marks, spans, lanes), and per run the x of the rows holding its frames."""
    return driver.execute_script("""
        var out = [], s = window.enclabCharts;
        document.querySelectorAll('script.enclab-chart-data').forEach(function (b) {
          var name = b.getAttribute('data-group'), d = JSON.parse(b.textContent), group = s.groups[name];
          if (name === 'run' || name === 'keyframes' || !group) return;
          out.push({ name: name, follows: d.follows || null,
                     runs: d.runs.map(function (r, k) {
                       return { id: r.id, colour: r.colour, visible: r.visible,
                                x: group.rows.filter(function (row) { return row.frames[k] >= 0; }).map(function (row) { return row.x; }) }; }),
                     charts: d.charts.map(function (c) { return { id: c.id, series: c.series, marks: c.marks, spans: c.spans, lanes: c.lanes || [] }; }) });
        });
        return out;""")


def overlay_perceptual(driver, con, page):
    """Every overlaid run with perceptual metrics (frame_quality_metrics, sqlite3) is drawn on its clip's chart of each
    stored metric (OVERLAY-q-COLUMN), with one point per frame that has the value (joined by display index)."""
    if not con.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'frame_quality_metrics'").fetchone()[0]:
        return
    for group in overlay_groups(driver):
        if group["follows"]:
            continue
        ids = [c["id"] for c in group["charts"]]
        prefix = ids[0].rsplit("-", 1)[0] if ids else None
        for r, run in enumerate(group["runs"]):
            for column, _ in QUALITY:
                count = con.execute(f"SELECT count(q.{column}) FROM frames f JOIN frame_quality_metrics q ON q.run_id = f.run_id "
                                    "AND q.display_index = f.display_index WHERE f.run_id = ?", (run["id"],)).fetchone()[0]
                chart = f"{prefix}-q-{column.replace('_', '-')}"
                if not count:
                    continue
                if chart not in ids:
                    fail(f"{page}: overlaid run {run['id']} has {count} frames with {column} in sqlite3, its clip has no chart {chart}")
                    continue
                series = [k for k, s in enumerate(next(c for c in group["charts"] if c["id"] == chart)["series"]) if s["run"] == r]
                if len(series) != 1:
                    fail(f"{page}: {chart} has {len(series)} series of run {run['id']}, expected 1")
                    continue
                points = series_points(driver, chart, series[0])
                if points != count:
                    fail(f"{page}: {chart}: run {run['id']} has {points} points, sqlite3 has {count} frames with {column}")


def overlay_keyframes(driver, con, page):
    """Every overlaid run with IDR or I frames has a lane on its clip's keyframe timeline (the group following the
    clip's group, x = PTS): its keyframes each at its own PTS in seconds from the run's first PTS (sqlite3, exact, 6
    decimals), also in its gnuplot data beside the page (OVERLAY-keyframes.dat, the block of the run); with keyframe
    limits stored (keyframe_analysis), its deadlines as the rule gives them, written out here
    from sqlite3's frames (a stretch from each IDR and from frame 0; the next keyframe due MaxKeyFrameInterval
    pictures later in display order, and MaxKeyFrameIntervalDuration seconds after its PTS; those up to the last
    frame's PTS compared), the limits in the lane's name; one violation shaded per keyframe_violations row, from where
    its limit passed (violation_deadlines), and drawn in red on the canvas (a run shown at first); no deadline or violation for a run
    without them."""
    groups = overlay_groups(driver)
    has_rules = con.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'keyframe_analysis'").fetchone()[0]
    has_skipped = con.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'skipped_frames'").fetchone()[0]
    for group in groups:
        if group["follows"]:
            continue
        follower = [g for g in groups if g["follows"] == group["name"]]
        if len(follower) == 1:
            lane_layout(driver, group, follower[0], page)
        for r, run in enumerate(group["runs"]):
            run_id = run["id"]
            keys = con.execute("SELECT count(*) FROM frames WHERE run_id = ? AND type IN ('IDR', 'I')", (run_id,)).fetchone()[0]
            if not keys:
                continue
            if len(follower) != 1:
                fail(f"{page}: overlaid run {run_id} has {keys} IDR and I frames in sqlite3, its clip has no keyframe timeline ({len(follower)} groups)")
                continue
            timeline = follower[0]
            lane = timeline["runs"][r]
            if lane["id"] != run_id:
                fail(f"{page}: the keyframe timeline's lane {r} is run {lane['id']}, the clip's run {r} is run {run_id}")
                continue
            tn, td = con.execute("SELECT timebase_num, timebase_den FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            first = con.execute("SELECT min(pts) FROM frames WHERE run_id = ?", (run_id,)).fetchone()[0]
            expected = [seconds(pts - first, tn, td) for (pts,) in
                        con.execute("SELECT pts FROM frames WHERE run_id = ? AND type IN ('IDR', 'I') ORDER BY pts", (run_id,))]
            drawn = sorted(f"{x:.6f}" for x in lane["x"])
            if drawn != expected:
                fail(f"{page}: the overlay's keyframe timeline draws run {run_id}'s keyframes at {drawn} s, sqlite3's PTS give {expected} s")
            chart = timeline["charts"][0]
            # Its gnuplot data beside the page: block r (after the comment "# run ID") the run's keyframes' PTS.
            dat = os.path.join(os.path.dirname(page), chart["id"] + ".dat")
            if any(run["visible"] for run in timeline["runs"]):
                if not os.path.exists(dat):
                    fail(f"{page}: no {os.path.basename(dat)} beside the page (the gnuplot data of {chart['id']})")
                else:
                    blocks, current = {}, None
                    for line in open(dat):
                        if line.startswith("# run "):
                            current = int(line.split()[2])
                            blocks[current] = []
                        elif current is not None and line.strip() and not line.startswith("#"):
                            blocks[current].append(f"{float(line.split()[0]):.6f}")
                    if sorted(blocks.get(run_id, [])) != expected:
                        fail(f"{page}: {os.path.basename(dat)} holds run {run_id}'s keyframes at {blocks.get(run_id)} s, sqlite3's PTS give {expected} s")
            marks = [m for m in chart["marks"] if m.get("run") == r and m["name"] != "skipped by the encoder"]
            spans = [v for v in chart["spans"] if v.get("run") == r]
            limits = con.execute("SELECT frame_limit, duration_limit FROM keyframe_analysis WHERE run_id = ?", (run_id,)).fetchone() if has_rules else None
            rows = con.execute("SELECT start_frame FROM keyframe_violations WHERE run_id = ? ORDER BY ordinal", (run_id,)).fetchall() if has_rules else []
            if not limits or (limits[0] is None and limits[1] is None):
                if marks or spans:
                    fail(f"{page}: run {run_id} has no keyframe limits in sqlite3, its lane draws {len(marks)} deadlines and {len(spans)} violations")
                continue
            frame_limit, duration_limit = limits
            names = [l["name"] for l in chart["lanes"] if l["run"] == r]
            for rule, value in [("MaxKeyFrameInterval", frame_limit), ("MaxKeyFrameIntervalDuration", duration_limit)]:
                said = None if value is None else (str(value) if rule == "MaxKeyFrameInterval" else f"{float(fractions.Fraction(str(value))):.6f}".rstrip("0").rstrip("."))
                if said is not None and not (names and f"{rule}={said}," in names[0].replace(" ·", ",")):
                    fail(f"{page}: run {run_id}'s lane name {names} does not give {rule}={value} (keyframe_analysis)")
            skipped = has_skipped and con.execute("SELECT count(*) FROM skipped_frames WHERE run_id = ?", (run_id,)).fetchone()[0]
            if not skipped:
                # The deadlines by hand, over the frames in display order.
                pics = con.execute("SELECT display_index, pts, type FROM frames WHERE run_id = ? ORDER BY display_index", (run_id,)).fetchall()
                tb = fractions.Fraction(tn, td)
                at = [(p - first) * tb for _, p, _ in pics]
                starts = [k for k, (_, _, t) in enumerate(pics) if t == "IDR"]
                if not starts or starts[0] != 0:
                    starts.insert(0, 0)
                want = []
                for a in starts:
                    if frame_limit and a + int(frame_limit) < len(pics):
                        want.append((0, at[a + int(frame_limit)]))
                    if duration_limit is not None and fractions.Fraction(str(duration_limit)) > 0:
                        due = at[a] + fractions.Fraction(str(duration_limit))
                        if due <= at[-1]:
                            want.append((1, due))
                got = sorted((0 if "MaxKeyFrameInterval=" in m["name"] else 1, f"{m['x']:.6f}") for m in marks
                             if fractions.Fraction(m["x"]) <= at[-1] + fractions.Fraction(1, 10**7))
                want = sorted((k, f"{float(x):.6f}") for k, x in want)
                if got != want:
                    fail(f"{page}: run {run_id}'s deadlines on the overlay's keyframe timeline {got}, the rule on sqlite3's frames gives {want}")
            if len(spans) != len(rows):
                fail(f"{page}: run {run_id}'s lane shades {len(spans)} violations, sqlite3 has {len(rows)} keyframe_violations rows")
            violation_spans(con, run_id, spans, page, f"run {run_id}'s lane")
            for v, (start,) in zip(spans, rows):
                if not run["visible"]:
                    continue
                red = driver.execute_script("""
                    var g = window.enclabCharts.graphs[arguments[0]], v = arguments[1], area = g.getArea(), canvas = g.hidden_;
                    var ratio = canvas.width / canvas.getBoundingClientRect().width;
                    // A few pixels right of its start: the deadline there is drawn over the span's first pixels.
                    var a = g.toDomXCoord(v.from), x = a + Math.min(4, (g.toDomXCoord(v.to) - a) / 2), y = area.y + area.h * (1 - v.top) + 2;
                    var px = canvas.getContext('2d').getImageData(Math.round(x * ratio), Math.round(y * ratio), 1, 1).data;
                    return [px[0], px[1], px[2], px[3]];""", chart["id"], v)
                if not (red[3] > 200 and red[0] > 180 and red[1] < 90 and red[2] < 90):
                    fail(f"{page}: run {run_id}'s violation from {v['from']} s is not drawn red on {chart['id']} (pixel {red})")


def lane_layout(driver, group, timeline, page):
    """An overlay's keyframe timeline lists each marker kind once in its legend (IDR, I (not IDR)), not once per run;
    hiding a run (its box in the clip's run picker) removes its lane and the shown lanes close up: the y range is 0 to
    the number of lanes shown, and each shown run's IDR stems stand on its new lane's bottom, m - 1 - p for the run at
    place p of the m shown (the first on top), written out here. The box is clicked back afterwards."""
    chart = timeline["charts"][0]
    entries = driver.execute_script("""
        var l = document.getElementById(arguments[0] + '-legend'); if (!l) return [];
        return Array.prototype.map.call(l.querySelectorAll('.item'), function (i) { return i.innerText; });""", chart["id"])
    for kind in ["IDR", "I (not IDR)"]:
        n = sum(1 for t in entries if t.strip() == kind)
        if n > 1:
            fail(f"{page}: {chart['id']}'s legend lists '{kind}' {n} times: {entries}")
    repeated = [t for t in entries if re.match(r"run \d+ (IDR|I )", t.strip())]
    if repeated:
        fail(f"{page}: {chart['id']}'s legend names the marker kinds per run: {repeated}")
    visible = [k for k, run in enumerate(timeline["runs"]) if run["visible"]]
    if len(visible) < 2:
        return
    hide = visible[0]
    box = f'input.run-pick[data-group="{group["name"]}"][data-run="{hide}"]'
    driver.execute_script("document.querySelector(arguments[0]).click();", box)
    try:
        got = driver.execute_script("""
            var g = window.enclabCharts.graphs[arguments[0]], out = { range: g.getOption('valueRange'), bases: {} };
            arguments[1].forEach(function (s, i) {
              if (s.type !== 0) return;
              for (var row = 0; row < g.numRows(); row++) {
                var v = g.getValue(row, i + 1);
                if (v !== null && !isNaN(v)) { out.bases[String(s.run)] = v - s.scale; return; }
              }
            });
            return out;""", chart["id"], chart["series"])
        shown = [k for k in visible if k != hide]
        m = len(shown)
        if [round(v, 9) for v in got["range"]] != [0, m]:
            fail(f"{page}: after hiding run {timeline['runs'][hide]['id']}, {chart['id']}'s y range is {got['range']}, not [0, {m}] (its lane gone)")
        for p, k in enumerate(shown):
            base = got["bases"].get(str(k))
            if base is not None and abs(base - (m - 1 - p)) > 1e-9:
                fail(f"{page}: after hiding run {timeline['runs'][hide]['id']}, run {timeline['runs'][k]['id']}'s IDR stems stand at {base}, "
                     f"not on the bottom of lane {p} of {m} ({m - 1 - p})")
    finally:
        driver.execute_script("document.querySelector(arguments[0]).click();", box)


def violation_deadlines(con, run_id):
    """Per keyframe_violations row (ordinal order): its kind, start frame, and where its limit passed in seconds from
    the run's first PTS (exact fractions), written out here from sqlite3's frames (and skipped_frames: the rule counts
    input pictures) and keyframe_analysis' limits: a frame-limit stretch from keyframe a passes its limit at the
    picture a + frame_limit in input order (the first over it), a duration-limit stretch at PTS(a) + duration_limit;
    a stall is shaded from the frame before its gap."""
    tn, td = con.execute("SELECT timebase_num, timebase_den FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    tb = fractions.Fraction(tn, td)
    first = con.execute("SELECT min(pts) FROM frames WHERE run_id = ?", (run_id,)).fetchone()[0]
    pics = con.execute("SELECT display_index, pts FROM frames WHERE run_id = ?", (run_id,)).fetchall()
    if con.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'skipped_frames'").fetchone()[0]:
        pics += con.execute("SELECT input_index, pts FROM skipped_frames WHERE run_id = ?", (run_id,)).fetchall()
    pics.sort()
    place = {index: k for k, (index, _) in enumerate(pics)}
    at = [(p - first) * tb for _, p in pics]
    frame_limit, duration_limit = con.execute("SELECT frame_limit, duration_limit FROM keyframe_analysis WHERE run_id = ?", (run_id,)).fetchone()
    out = []
    for kind, start in con.execute("SELECT kind, start_frame FROM keyframe_violations WHERE run_id = ? ORDER BY ordinal", (run_id,)):
        a = place[start]
        due = at[a]
        if kind == "frame-limit":
            due = at[a + int(frame_limit)]
        elif kind == "duration-limit":
            due = at[a] + fractions.Fraction(str(duration_limit))
        out.append((kind, start, due))
    return out


def violation_spans(con, run_id, spans, page, where):
    """The shaded violations `spans` (the chart data's, in keyframe_violations order) start where their limits passed
    (violation_deadlines), to the microsecond."""
    want = violation_deadlines(con, run_id)
    if len(spans) != len(want):
        fail(f"{page}: {where} shades {len(spans)} violations, sqlite3 has {len(want)} keyframe_violations rows")
        return
    for v, (kind, start, due) in zip(spans, want):
        if abs(fractions.Fraction(v["from"]) - due) > fractions.Fraction(1, 10**6):
            fail(f"{page}: {where}: the {kind} violation from frame {start} is shaded from {v['from']:.6f} s, "
                 f"its limit passed at {float(due):.6f} s (sqlite3's frames and keyframe_analysis)")


def skipped_frames(driver, con, run_id, tn, td, page):
    has_table = con.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'skipped_frames'").fetchone()[0]
    rows = con.execute("SELECT pts FROM skipped_frames WHERE run_id = ? ORDER BY input_index", (run_id,)).fetchall() if has_table else []
    marks = driver.execute_script("""
        var b = document.querySelector('script.enclab-chart-data[data-group="keyframes"]');
        if (!b) return null;
        return JSON.parse(b.textContent).charts[0].marks.filter(function (m) { return m.name === 'skipped by the encoder'; })
          .map(function (m) { return m.x.toFixed(6); });""")
    if not rows:
        if marks:
            fail(f"{page}: {len(marks)} 'skipped by the encoder' marks, the run has no skipped_frames rows")
        return
    first = con.execute("SELECT min(pts) FROM frames WHERE run_id = ?", (run_id,)).fetchone()[0]
    expected = [seconds(pts - first, tn, td) for (pts,) in rows]
    if marks != expected:
        fail(f"{page}: the keyframe timeline's skipped marks {marks} are not the skipped_frames rows {expected}")
    drawn = driver.execute_script("""
        var g = window.enclabCharts.graphs['chart-keyframes'], legend = document.getElementById('chart-keyframes-legend');
        return g && legend ? legend.innerText.indexOf('skipped by the encoder') >= 0 : false;""")
    if not drawn:
        fail(f"{page}: the keyframe timeline is not drawn, or its legend does not name the pictures skipped by the encoder")


def tables_fit(driver, page):
    """Every table of the loaded page fits the window: its right edge inside it, its box not scrolled."""
    wide = driver.execute_script("""
        var out = [], width = document.documentElement.clientWidth;
        document.querySelectorAll('table').forEach(function (t, i) {
          var r = t.getBoundingClientRect(), box = t.parentElement;
          if (r.right > width + 0.5 || box.scrollWidth > box.clientWidth) out.push([t.id || ('table ' + i), r.right, box.scrollWidth, box.clientWidth]);
        });
        return out;""")
    for name, right, scroll, box in wide:
        fail(f"{page}: {name} does not fit 1280 px: right edge at {right:.0f} px, {scroll} px wide in a {box} px box")


def table_fits(page):
    driver = browser(1280, 900)
    try:
        driver.get("file://" + os.path.abspath(page))
        fit = driver.execute_script("""
            var t = document.querySelector('table'); if (!t) return null;
            var r = t.getBoundingClientRect();
            return [r.right, document.documentElement.clientWidth, t.parentElement.scrollWidth, t.parentElement.clientWidth];""")
        if fit is None:
            fail(f"{page}: no table")
        elif fit[0] > fit[1] or fit[2] > fit[3]:
            fail(f"{page}: the first table does not fit 1280 px: its right edge at {fit[0]:.0f} px, "
                 f"{fit[2]} px wide in a {fit[3]} px box, window {fit[1]} px")
    finally:
        driver.quit()


def timing(page):
    driver = browser(1280, 900)
    try:
        times = []
        for _ in range(5):
            driver.get("file://" + os.path.abspath(page))
            t = driver.execute_script("return window.enclabCharts ? window.enclabCharts.drawnAt : null")
            if t is None:
                fail(f"{page}: the charts were not drawn")
                return
            times.append(t)
        print(json.dumps({"page": page, "bytes": os.path.getsize(page), "draw_ms": round(statistics.median(times), 1),
                          "draw_ms_all": [round(x, 1) for x in times]}))
    finally:
        driver.quit()


QUALITY = [("vmaf", "VMAF"), ("vmaf_neg", "VMAF NEG"), ("vmaf_4k", "VMAF 4K"), ("psnr_hvs", "PSNR-HVS"),
           ("float_ssim", "SSIM (libvmaf)"), ("ms_ssim", "MS-SSIM"), ("ciede2000", "CIEDE2000"), ("xpsnr", "XPSNR")]


def perceptual(driver, con, run_id, page, n):
    """The run's perceptual charts against frame_quality_metrics (sqlite3): one chart per stored metric, its points
    the frames with a value, the hovered middle frame's values in the legend."""
    has_table = con.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'frame_quality_metrics'").fetchone()[0]
    if not has_table:
        return
    stored = []
    for column, label in QUALITY:
        count = con.execute(f"SELECT count(q.{column}) FROM frames f JOIN frame_quality_metrics q "
                            "ON q.run_id = f.run_id AND q.display_index = f.display_index WHERE f.run_id = ?", (run_id,)).fetchone()[0]
        if count:
            stored.append((column, label, count))
    charts = driver.execute_script("return Object.keys(window.enclabCharts.graphs);")
    for column, label, count in stored:
        chart = "chart-q-" + column.replace("_", "-")
        if chart not in charts:
            fail(f"{page}: the run has {count} frames with {column} in sqlite3 but no chart {chart}")
            continue
        points = driver.execute_script("""
            var g = window.enclabCharts.graphs[arguments[0]], count = 0;
            for (var r = 0; r < g.numRows(); r++) { var v = g.getValue(r, 1); if (v !== null && !isNaN(v)) count++; }
            return count;""", chart)
        if points != count:
            fail(f"{page}: {chart} has {points} points, sqlite3 has {count} frames with {column}")
    for chart in charts:
        if chart.startswith("chart-q-") and chart[8:].replace("-", "_") not in [c for c, _, _ in stored]:
            fail(f"{page}: {chart} drawn but sqlite3 has no {chart[8:]} for the run")
    if not stored:
        return
    column, label, _ = stored[0]
    chart = "chart-q-" + column.replace("_", "-")
    k = n // 2
    element = driver.find_element(By.ID, chart)
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", element)
    target = driver.execute_script("""
        var g = window.enclabCharts.graphs[arguments[0]], k = arguments[1];
        var p = g.toDomCoords(g.getValue(k, 0), g.getValue(k, 1));
        var r = g.graphDiv.getBoundingClientRect(), e = arguments[2].getBoundingClientRect();
        return [p[0] + r.left - e.left - e.width / 2, p[1] + r.top - e.top - e.height / 2];""", chart, k, element)
    ActionChains(driver).move_to_element_with_offset(element, int(round(target[0])), int(round(target[1]))).perform()
    legend = driver.find_element(By.ID, chart + "-legend").text
    m = re.search(r"coded_index (\d+)", legend)
    if not m or int(m.group(1)) != k:
        fail(f"{page}: hovering frame {k} on {chart} shows {legend!r}")
        return
    row = con.execute("SELECT " + ", ".join("q." + c for c, _, _ in stored) + " FROM frames f JOIN frame_quality_metrics q "
                      "ON q.run_id = f.run_id AND q.display_index = f.display_index WHERE f.run_id = ? AND f.coded_index = ?",
                      (run_id, k)).fetchone()
    for (c, label, _), value in zip(stored, row):
        expected = f"{label} {fmt(value, 6)}"
        if expected not in legend:
            fail(f"{page}: hovering frame {k} on {chart}: legend {legend!r} does not show the stored {c} {expected!r}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--db")
    parser.add_argument("--report")
    parser.add_argument("--run-page", action="append", default=[])
    parser.add_argument("--table-page", action="append", default=[])
    parser.add_argument("--timing")
    args = parser.parse_args()
    for tool in ["/usr/bin/chromium", "/usr/bin/chromedriver"]:
        if not os.path.exists(tool):
            print(f"{tool} missing: install the Debian packages chromium-driver and python3-selenium "
                  "(bash scripts/setup.sh --tests)", file=sys.stderr)
            return 2
    if args.report:
        driver = browser()
        try:
            pages = args.run_page or sorted(glob.glob(os.path.join(args.report, "*", "run-*", "index.html")))
            if not pages:
                fail(f"{args.report}: no run pages")
            for page in pages:
                run_page(driver, args.db, page)
            for page in sorted(glob.glob(os.path.join(args.report, "*", "index.html"))):
                experiment_page(driver, args.db, page)
        finally:
            driver.quit()
    for page in args.table_page:
        table_fits(page)
    if args.timing:
        timing(args.timing)
    if failures:
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
