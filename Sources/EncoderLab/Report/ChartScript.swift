/// The report's own script and style for the interactive charts, copied to `assets/enclab-charts.js` and
/// `assets/enclab-charts.css` (``ChartPage/writeAssets(root:)``).
///
/// The script reads every `<script type="application/json" class="enclab-chart-data">` of the page
/// (``ChartGroup/json()``) with `JSON.parse`, merges the group's runs into rows of one shared x column (a row holds at
/// most one frame of each run), draws each chart with dygraphs, and links a group's charts with
/// `Dygraph.synchronize` (zoom and hover, not the y range). The legend below a chart lists the hovered row's frames
/// with their stored values; every text it shows is escaped before it is placed. `window.enclabCharts` keeps the
/// graphs by chart id, the time the last chart was drawn (`drawnAt`, ms since navigation start) and any error, for
/// the browser test and the bench.
enum ChartScript {
    static let style = """
    .chart-box { margin: 0.6em 0 1.2em 0; }
    .chart-title { font-weight: bold; font-size: 0.95em; margin-bottom: 2px; }
    .chart { width: 100%; max-width: 1200px; }
    .chart-legend { font-size: 0.8em; min-height: 2.6em; color: #333; max-width: 1200px; }
    .chart-legend .frame { display: block; } .chart-legend .swatch { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
    .chart-legend .item { margin-right: 12px; white-space: nowrap; }
    .chart-help { font-size: 0.85em; color: #555; } .chart-reset { font-size: 0.9em; }
    .run-picker label { margin-right: 14px; font-size: 0.85em; white-space: nowrap; display: inline-block; }
    .run-picker .swatch { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
    .dygraph-axis-label { font-size: 11px; } .dygraph-label { font-size: 12px; }

    """

    static let javaScript = #"""
    // enclab report: interactive charts (dygraphs 2.2.1 from Debian's libjs-dygraphs, with its synchronizer).
    (function () {
      'use strict';
      var state = { graphs: {}, groups: {}, drawnAt: null, errors: [] };
      window.enclabCharts = state;

      function esc(text) {
        return String(text).replace(/[&<>"']/g, function (c) {
          return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c];
        });
      }
      function fixed(v, digits) { return v === null || v === undefined ? 'n/a' : Number(v).toFixed(digits); }
      function field(run, name) { return run.f[name] || null; }

      // Rows of the shared x column: every run's frames sorted by x; a frame joins the current row when its x equals
      // the row's and the row has no frame of its run yet. rows[i] = { x, frames: [frame index per run or -1] }.
      function mergeRows(runs) {
        // One run: its frames in decode order are the rows (their x, the arrival, never decreases).
        if (runs.length === 1) return runs[0].f.x.map(function (x, k) { return { x: x, frames: [k] }; });
        var entries = [];
        runs.forEach(function (run, r) {
          var xs = run.f.x;
          for (var k = 0; k < xs.length; k++) entries.push([xs[k], r, k]);
        });
        entries.sort(function (a, b) { return a[0] - b[0] || a[1] - b[1] || a[2] - b[2]; });
        var rows = [], current = null;
        entries.forEach(function (e) {
          if (current === null || current.x !== e[0] || current.frames[e[1]] !== -1) {
            current = { x: e[0], frames: runs.map(function () { return -1; }) };
            rows.push(current);
          }
          current.frames[e[1]] = e[2];
        });
        return rows;
      }

      function seriesValue(s, run, k, base) {
        var values = field(run, s.field);
        if (values === null || k < 0) return null;
        var v = values[k];
        if (v === null || v === undefined) return null;
        if (s.type !== undefined && run.f.t[k] !== s.type) return null;
        if (s.where !== undefined) { var w = field(run, s.where); if (w === null || w[k] !== s.is) return null; }
        v = v * (s.scale || 1) + (base === undefined ? (s.base || 0) : base);
        if (s.above !== undefined && !(v > s.above)) return null;
        return v;
      }

      // An open marker shape (the rate-quality chart's gnuplot point types, ChartGroup.markerShapes) at (x, y).
      function drawShape(ctx, shape, x, y, r, colour, width) {
        ctx.save(); ctx.strokeStyle = colour; ctx.lineWidth = width || 1.5; ctx.beginPath();
        var i, a;
        if (shape === 'square') ctx.rect(x - r, y - r, 2 * r, 2 * r);
        else if (shape === 'circle') ctx.arc(x, y, r, 0, 2 * Math.PI, false);
        else if (shape === 'triangle') { ctx.moveTo(x, y - r); ctx.lineTo(x + r, y + r); ctx.lineTo(x - r, y + r); ctx.closePath(); }
        else if (shape === 'inverted-triangle') { ctx.moveTo(x, y + r); ctx.lineTo(x + r, y - r); ctx.lineTo(x - r, y - r); ctx.closePath(); }
        else if (shape === 'diamond') { ctx.moveTo(x, y - r); ctx.lineTo(x + r, y); ctx.lineTo(x, y + r); ctx.lineTo(x - r, y); ctx.closePath(); }
        else if (shape === 'pentagon') {
          for (i = 0; i < 5; i++) { a = -Math.PI / 2 + i * 2 * Math.PI / 5; if (i) ctx.lineTo(x + r * Math.cos(a), y + r * Math.sin(a)); else ctx.moveTo(x + r * Math.cos(a), y + r * Math.sin(a)); }
          ctx.closePath();
        }
        else if (shape === 'cross') { ctx.moveTo(x - r, y - r); ctx.lineTo(x + r, y + r); ctx.moveTo(x + r, y - r); ctx.lineTo(x - r, y + r); }
        else if (shape === 'plus') { ctx.moveTo(x - r, y); ctx.lineTo(x + r, y); ctx.moveTo(x, y - r); ctx.lineTo(x, y + r); }
        else { for (i = 0; i < 4; i++) { a = i * Math.PI / 4; ctx.moveTo(x - r * Math.cos(a), y - r * Math.sin(a)); ctx.lineTo(x + r * Math.cos(a), y + r * Math.sin(a)); } }
        ctx.stroke(); ctx.restore();
      }

      // Stems from `base` (0, or the lane of an overlay keyframe timeline) to each point.
      function impulsePlotter(e, base) {
        var ctx = e.drawingContext, points = e.points, y0 = e.dygraph.toDomYCoord(base || 0), area = e.plotArea;
        ctx.save();
        // Nothing outside the plot area: a zoomed chart's stems beyond its edges are not drawn over the axes.
        ctx.beginPath(); ctx.rect(area.x, area.y, area.w, area.h); ctx.clip();
        ctx.strokeStyle = e.color;
        ctx.lineWidth = 1.5;
        ctx.beginPath();
        for (var i = 0; i < points.length; i++) {
          var p = points[i];
          if (p.yval === null || isNaN(p.canvasy)) continue;
          ctx.moveTo(p.canvasx, y0);
          ctx.lineTo(p.canvasx, p.canvasy);
        }
        ctx.stroke();
        ctx.restore();
      }

      function frameText(data, run, k) {
        var f = run.f, parts = [];
        parts.push('coded_index ' + f.c[k] + ', display_index ' + f.d[k]);
        parts.push('type ' + data.types[f.t[k]]);
        parts.push('size ' + f.s[k] + ' bytes');
        parts.push('PTS ' + fixed(f.p[k], 6) + ' s');
        parts.push('DTS ' + fixed(f.q[k], 6) + ' s');
        parts.push('QP ' + fixed(f.qp ? f.qp[k] : null, 2));
        parts.push('PSNR Y ' + fixed(f.y ? f.y[k] : null, 3) + ' U ' + fixed(f.u ? f.u[k] : null, 3) + ' V ' +
                   fixed(f.v ? f.v[k] : null, 3) + ' frame ' + fixed(f.a ? f.a[k] : null, 3) + ' dB');
        parts.push('SSIM ' + fixed(f.ss ? f.ss[k] : null, 6));
        // The perceptual metrics stored for the run (frame_quality_metrics), only those it has.
        [['m_vmaf', 'VMAF'], ['m_vmaf_neg', 'VMAF NEG'], ['m_vmaf_4k', 'VMAF 4K'], ['m_psnr_hvs', 'PSNR-HVS'], ['m_float_ssim', 'SSIM (libvmaf)'],
         ['m_ms_ssim', 'MS-SSIM'], ['m_ciede2000', 'CIEDE2000'], ['m_xpsnr', 'XPSNR']].forEach(function (m) {
          if (f[m[0]]) parts.push(m[1] + ' ' + fixed(f[m[0]][k], 6));
        });
        return parts.join(' · ');
      }

      var LABEL_FONT = '11px sans-serif', LABEL_HEIGHT = 14;

      // The boxes of a chart's limit labels (its shown runs' lines, in the plot area): each label in the row just
      // above its line, else just below it, else the rows farther up and down, as far right as it overlaps no label
      // placed before it (the labels from the top line down); a label with no free place is left out (the legend
      // below the chart lists every line).
      function limitLabels(g, chart, runs) {
        var area = g.getArea(), ctx = g.hidden_ctx_, placed = [];
        ctx.save(); ctx.font = LABEL_FONT;
        chart.limits.filter(function (l) { return l.run === undefined || runs[l.run].visible; })
          .map(function (l) { return { l: l, y: g.toDomYCoord(l.value) }; })
          .filter(function (e) { return e.y >= area.y && e.y <= area.y + area.h; })
          .sort(function (a, b) { return a.y - b.y; })
          .forEach(function (e) {
            var w = ctx.measureText(e.l.name).width + 6;
            // Rows just above and just below the line, then farther from it (lines close together, one value).
            var sides = [];
            for (var j = 0; j < 4; j++) sides.push(e.y - (j + 1) * LABEL_HEIGHT - 1, e.y + 2 + j * LABEL_HEIGHT);
            for (var s = 0; s < sides.length; s++) {
              var y0 = sides[s];
              if (y0 < area.y || y0 + LABEL_HEIGHT > area.y + area.h) continue;
              for (var x1 = area.x + area.w - 2; x1 - w >= area.x + 2; x1 -= 8) {
                var box = { x0: x1 - w, x1: x1, y0: y0, y1: y0 + LABEL_HEIGHT, name: e.l.name, colour: e.l.colour };
                var free = placed.every(function (p) { return box.x1 <= p.x0 || box.x0 >= p.x1 || box.y1 <= p.y0 || box.y0 >= p.y1; });
                if (free) { placed.push(box); return; }
              }
            }
          });
        ctx.restore();
        return placed;
      }

      // The y range of a chart from 0: up to the largest value of its shown runs' series and lines, 8 % above it.
      function fromZeroRange(chart, table, runs) {
        var top = 0;
        table.forEach(function (line) {
          for (var i = 1; i < line.length; i++)
            if (line[i] !== null && line[i] > top && runs[chart.series[i - 1].run].visible) top = line[i];
        });
        chart.limits.forEach(function (l) { if ((l.run === undefined || runs[l.run].visible) && l.value > top) top = l.value; });
        return [0, top > 0 ? top * 1.08 : 1];
      }

      function drawGroup(block) {
        var data = JSON.parse(block.textContent);
        var name = block.getAttribute('data-group');
        function lineShown(l) { return l.run === undefined || data.runs[l.run].visible; }
        var rows = mergeRows(data.runs);
        // A chart with a fixed x range (the keyframe timeline: its rows are the keyframes only) gets an empty row at
        // each end of it, so that the range is the data's and a reset of the zoom comes back to it.
        data.charts.forEach(function (chart) {
          if (!chart.xRange) return;
          var none = data.runs.map(function () { return -1; });
          rows.unshift({ x: chart.xRange[0], frames: none });
          rows.push({ x: chart.xRange[1], frames: none });
        });
        var graphs = [];
        data.charts.forEach(function (chart) {
          var element = document.getElementById(chart.id);
          var legend = document.getElementById(chart.id + '-legend');
          if (!element) return;
          // A chart of lanes (an overlay's keyframe timeline, one lane per run, the first on top) lays out the lanes
          // of the runs shown only: a hidden run's lane is gone, the others close up. The chart data place lane r
          // of n from (n - 1 - r) / n to (n - r) / n of the height; shown at place p of m, it is drawn from
          // (m - 1 - p) / m to (m - p) / m.
          var lanes = chart.lanes || [], laneOf = {};
          lanes.forEach(function (l) { laneOf[l.run] = l; });
          function places() {
            var at = {}, m = 0;
            lanes.forEach(function (l) { if (data.runs[l.run].visible) at[l.run] = m++; });
            return { at: at, m: m };
          }
          // A height (0 bottom, 1 top) of run `run`'s lane as the data give it, where that lane is drawn now.
          function laneHeight(run, y) {
            var l = laneOf[run], p = places();
            if (!l || p.at[run] === undefined) return y;
            return (p.m - 1 - p.at[run] + (y - l.bottom) / (l.top - l.bottom)) / p.m;
          }
          // A series' base in the chart's units: its lane's bottom (the y range is 0 to the number of lanes shown).
          function seriesBase(s) {
            var p = places();
            return lanes.length && p.at[s.run] !== undefined ? p.m - 1 - p.at[s.run] : s.base;
          }
          function laneRange() { return [0, Math.max(1, places().m)]; }
          function tableOf() {
            return rows.map(function (row) {
              var line = [row.x];
              chart.series.forEach(function (s) { line.push(seriesValue(s, data.runs[s.run], row.frames[s.run], seriesBase(s))); });
              return line;
            });
          }
          var table = tableOf();
          var labels = ['x'];
          chart.series.forEach(function (s, i) {
            var label = s.name;
            while (labels.indexOf(label) >= 0) label += ' #' + (i + 1);
            labels.push(label);
          });
          var seriesOptions = {};
          chart.series.forEach(function (s, i) {
            var o = {};
            if (s.dash) o.strokePattern = s.dash;
            if (s.marker && s.style !== 'typed') {
              // The configuration's marker every few rows (about 25 on the chart), as the rate-quality chart's.
              var step = Math.max(1, Math.round(rows.length / 25));
              o.drawPoints = true; o.pointSize = 4;
              o.drawPointCallback = function (g, seriesName, ctx, cx, cy, colour, size, idx) {
                if (idx % step === 0) drawShape(ctx, s.marker, cx, cy, 4, colour);
              };
            }
            if (s.style === 'points') { o.strokeWidth = 0; o.drawPoints = true; o.pointSize = 3; }
            else if (s.style === 'marks') {
              // Events that must stand out over stems (RTP packets lost): a bold cross of 13 px at every point.
              o.strokeWidth = 0; o.drawPoints = true; o.pointSize = 6;
              o.drawPointCallback = o.drawHighlightPointCallback = function (g, seriesName, ctx, cx, cy, colour) {
                drawShape(ctx, 'cross', cx, cy, 6, colour, 3);
              };
            }
            else if (s.style === 'steps') { o.stepPlot = true; o.strokeWidth = 1.2; }
            else if (s.style === 'impulses') { o.plotter = function (e) { impulsePlotter(e, seriesBase(s)); }; }
            else if (s.style === 'typed') {
              o.drawPoints = true; o.pointSize = 2; o.strokeWidth = 0.8;
              o.drawPointCallback = function (g, seriesName, ctx, cx, cy, colour, size, idx) {
                var k = rows[idx] ? rows[idx].frames[s.run] : -1;
                var t = k >= 0 ? data.runs[s.run].f.t[k] : 0;
                if (s.marker) { drawShape(ctx, s.marker, cx, cy, t <= 1 ? 4 : 2.5, data.typeColours[t] || colour); return; }
                ctx.beginPath(); ctx.fillStyle = data.typeColours[t] || colour;
                ctx.arc(cx, cy, t <= 1 ? 3.5 : 2, 0, 2 * Math.PI, false); ctx.fill();
              };
            }
            seriesOptions[labels[i + 1]] = o;
          });
          var options = {
            labels: labels,
            colors: chart.series.map(function (s) { return s.colour; }),
            series: seriesOptions,
            xlabel: esc(data.xLabel),
            ylabel: esc(chart.yLabel),
            height: chart.height,
            labelsDiv: legend,
            legend: 'always',
            connectSeparatedPoints: data.runs.length > 1,
            animatedZooms: false,
            visibility: chart.series.map(function (s) { return data.runs[s.run].visible; }),
            axes: { x: { valueFormatter: function (x) { return x.toFixed(6) + ' s'; } } },
            legendFormatter: function (d) {
              var g = d.dygraph, html = '';
              if (d.x === null || d.x === undefined) {
                // Series of one name and colour (an overlay keyframe timeline's IDR stems of every run) are one entry.
                var listed = {};
                d.series.forEach(function (s, i) {
                  var name = chart.series[i] ? chart.series[i].name : s.label;
                  if (!s.isVisible || listed[name + '\u0000' + s.color]) return;
                  listed[name + '\u0000' + s.color] = true;
                  html += '<span class="item"><span class="swatch" style="background:' + esc(s.color) + '"></span>' + esc(name) + '</span>';
                });
                chart.limits.forEach(function (l) {
                  if (!lineShown(l)) return;
                  html += '<span class="item"><span class="swatch" style="background:' + esc(l.colour) + '"></span>' + esc(l.name) + '</span>';
                });
                var named = {};
                chart.marks.concat(chart.spans).forEach(function (m) {
                  if (named[m.name]) return;
                  named[m.name] = true;
                  html += '<span class="item"><span class="swatch" style="background:' + esc(m.colour) + '"></span>' + esc(m.name) + '</span>';
                });
                return html;
              }
              var row = g.getSelection();
              var values = [];
              // A timeline's heights (a fixed y range) are places, not values: not listed.
              if (!chart.yRange) d.series.forEach(function (s) { if (s.isVisible && s.y !== null && s.y !== undefined && !isNaN(s.y)) values.push(esc(s.label) + ' ' + esc(Number(s.y).toFixed(3))); });
              html += '<span class="frame">x ' + esc(Number(d.x).toFixed(6)) + ' s' + (values.length ? ': ' + values.join(', ') : '') + '</span>';
              if (row >= 0 && rows[row]) {
                data.runs.forEach(function (run, r) {
                  var k = rows[row].frames[r];
                  if (k < 0 || !run.visible) return;
                  html += '<span class="frame"><span class="swatch" style="background:' + esc(run.colour) + '"></span>' +
                          (data.runs.length > 1 ? esc(run.name) + ': ' : '') + esc(frameText(data, run, k)) + '</span>';
                });
              }
              return html;
            },
            underlayCallback: function (ctx, area, g) {
              ctx.save();
              ctx.beginPath(); ctx.rect(area.x, area.y, area.w, area.h); ctx.clip();
              // A mark or span of a run (an overlay's keyframe timeline) is drawn while its run is shown.
              function shown(m) { return m.run === undefined || data.runs[m.run].visible; }
              // The lanes of the runs shown (a hidden run's lane is not drawn: the others close up).
              lanes.forEach(function (l) {
                if (!data.runs[l.run].visible) return;
                var top = area.y + area.h * (1 - laneHeight(l.run, l.top)), bottom = area.y + area.h * (1 - laneHeight(l.run, l.bottom));
                ctx.strokeStyle = '#bbbbbb'; ctx.lineWidth = 1;
                ctx.beginPath(); ctx.moveTo(area.x, bottom); ctx.lineTo(area.x + area.w, bottom); ctx.stroke();
                ctx.fillStyle = l.colour; ctx.font = 'bold 11px sans-serif'; ctx.textAlign = 'left';
                ctx.fillText(l.name, area.x + 14, top + 11);
              });
              chart.spans.forEach(function (v) {
                if (!shown(v)) return;
                var a = g.toDomXCoord(v.from), b = g.toDomXCoord(v.to);
                var vTop = laneHeight(v.run, v.top === undefined ? 1 : v.top), vBottom = laneHeight(v.run, v.bottom || 0);
                var top = area.y + area.h * (1 - vTop), h = area.h * (vTop - vBottom);
                ctx.globalAlpha = 0.12; ctx.fillStyle = v.colour; ctx.fillRect(a, top, Math.max(2, b - a), h);
                ctx.globalAlpha = 1; ctx.fillRect(a, top, Math.max(2, b - a), 5);
              });
              chart.marks.forEach(function (m) {
                if (!shown(m)) return;
                var x = g.toDomXCoord(m.x);
                ctx.strokeStyle = m.colour; ctx.lineWidth = 2; ctx.setLineDash([5, 4]);
                // A mark takes its part of the height (from, to: 0 bottom, 1 top), so two at one x are both seen.
                var top = area.y + area.h * (1 - laneHeight(m.run, m.to === undefined ? 1 : m.to)), bottom = area.y + area.h * (1 - laneHeight(m.run, m.from || 0));
                ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, bottom); ctx.stroke(); ctx.setLineDash([]);
              });
              ctx.restore();
              chart.limits.forEach(function (l) {
                var y = g.toDomYCoord(l.value);
                if (!lineShown(l) || y < area.y || y > area.y + area.h) return;
                ctx.save();
                ctx.strokeStyle = l.colour; ctx.lineWidth = 1.5; ctx.setLineDash([6, 4]);
                ctx.beginPath(); ctx.moveTo(area.x, y); ctx.lineTo(area.x + area.w, y); ctx.stroke();
                ctx.restore();
              });
            },
            // The limits' labels over the data (not under its lines), each where it overlaps no other label.
            drawCallback: function (g) {
              var labels = limitLabels(g, chart, data.runs);
              // For the browser test: the labels drawn, and how many lines were shown.
              g.enclabLabels = labels;
              if (!labels.length) return;
              var ctx = g.hidden_ctx_;
              ctx.save();
              ctx.font = LABEL_FONT; ctx.textAlign = 'left'; ctx.textBaseline = 'alphabetic';
              labels.forEach(function (b) {
                ctx.fillStyle = '#ffffff'; ctx.fillRect(b.x0, b.y0, b.x1 - b.x0, b.y1 - b.y0);
                ctx.fillStyle = b.colour; ctx.fillText(b.name, b.x0 + 3, b.y1 - 3);
              });
              ctx.restore();
            }
          };
          if (chart.digits) options.axes.y = { axisLabelFormatter: function (v) { return Number(v).toFixed(chart.digits); } };
          if (chart.fromZero) options.valueRange = fromZeroRange(chart, table, data.runs);
          if (chart.yRange) { options.valueRange = lanes.length ? laneRange() : chart.yRange; options.axes.y = { drawAxis: false }; }
          // A few pixels beyond the first and last frame, so the first frame's stem is not drawn on the y axis.
          options.xRangePad = 8;
          var g = new Dygraph(element, table, options);
          g.enclabRows = rows;
          // Where a lane's height is drawn now (report-browser.py reads the canvas there), and the redraw after a run
          // is shown or hidden.
          g.enclabLaneHeight = laneHeight;
          if (lanes.length) g.enclabRelayout = function () { g.updateOptions({ file: tableOf(), valueRange: laneRange() }); };
          g.enclabTable = table;
          g.enclabGroup = name;
          state.graphs[chart.id] = g;
          graphs.push(g);
        });
        state.groups[name] = { graphs: graphs, runs: data.runs, rows: rows, follows: data.follows };
        if (graphs.length > 1) Dygraph.synchronize(graphs, { selection: true, zoom: true, range: false });
        // The run picker of an overlay: one checkbox per run, shows or hides the run's series in every chart.
        // A group that follows another (an overlay's keyframe timeline) takes that group's checkboxes: the runs are
        // the same, in the same order.
        document.querySelectorAll('input.run-pick[data-group="' + (data.follows || name) + '"]').forEach(function (box) {
          box.addEventListener('change', function () {
            var r = Number(box.getAttribute('data-run'));
            data.runs[r].visible = box.checked;
            data.charts.forEach(function (chart) {
              var g = state.graphs[chart.id];
              if (!g) return;
              chart.series.forEach(function (s, i) { if (s.run === r) g.setVisibility(i, box.checked); });
              // A keyframe timeline closes its lanes up; elsewhere the y range fits the runs shown now, and a
              // redraw draws or takes away the run's lines.
              if (g.enclabRelayout) g.enclabRelayout();
              else if (chart.fromZero && !chart.yRange) g.updateOptions({ valueRange: fromZeroRange(chart, g.enclabTable, data.runs) });
              else g.updateOptions({});
            });
          });
        });
      }

      function start() {
        try {
          document.querySelectorAll('script.enclab-chart-data').forEach(drawGroup);
          document.querySelectorAll('button.chart-reset').forEach(function (button) {
            button.addEventListener('click', function () {
              var name = button.getAttribute('data-group');
              Object.keys(state.groups).forEach(function (k) {
                var group = state.groups[k];
                if (k === name || group.follows === name) group.graphs.forEach(function (g) { g.resetZoom(); });
              });
            });
          });
        } catch (error) {
          state.errors.push(String(error));
          throw error;
        }
        state.drawnAt = performance.now();
      }
      if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start); else start();
    })();

    """#
}
