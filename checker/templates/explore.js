// kata explore: draws the boundary and the loss curves of every loop at the chosen learning rate and epoch.
// Everything comes from the JSON in #kata-data; nothing is fetched. A fragment such as #epoch=5&lr=10 sets
// the learning rate and moves the slider (as a learner would) when the page opens and when it changes; with
// "&play" it presses Play.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("kata-data").textContent);
  var T = data.text;
  var PALETTE = [[47, 109, 181], [224, 123, 26], [58, 155, 72], [168, 70, 160], [196, 58, 58], [90, 90, 90]];
  var G = data.grid, K = data.classes, STEPS = Math.floor(255 / K), NAN_CELL = 255;
  var B = data.bounds;
  var slider = document.getElementById("epoch");
  var shown = document.getElementById("epoch-shown");
  var play = document.getElementById("play");
  var state = { lr: data.default_lr, epoch: 0, timer: null };
  var cache = {};

  function num(v) {
    if (v === null || v === undefined) return null;
    if (typeof v === "string") return v === "NaN" ? NaN : (v === "Infinity" ? Infinity : -Infinity);
    return v;
  }
  function fmt(v, digits) {
    v = num(v);
    if (v === null) return "\u2014";
    if (!isFinite(v)) return String(v);
    return v.toFixed(digits);
  }
  function cellsOf(b64) {
    if (cache[b64]) return cache[b64];
    var s = atob(b64), a = new Uint8Array(s.length);
    for (var i = 0; i < s.length; i++) a[i] = s.charCodeAt(i);
    cache[b64] = a;
    return a;
  }
  function runOf(loop) { return loop.runs[state.lr] || null; }
  function lastEpoch() {
    var most = 0;
    data.loops.forEach(function (loop) {
      var run = runOf(loop);
      if (run) most = Math.max(most, run.history.length, run.per_epoch ? run.frames.length - 1 : 0);
    });
    return most;
  }
  function frameAt(run, epoch) {
    if (!run.per_epoch) return epoch === 0 ? run.frames[0] : run.frames[run.frames.length - 1];
    return run.frames[Math.min(epoch, run.frames.length - 1)];
  }
  function pointsOf(loop) {
    var run = runOf(loop);
    if (run && run.points) return run.points;
    for (var i = 0; i < data.loops.length; i++) {
      var other = runOf(data.loops[i]);
      if (other && other.points) return other.points;
    }
    return null;
  }
  function px(canvas, x, y) {
    return [(x - B[0]) / (B[1] - B[0]) * canvas.width, (B[3] - y) / (B[3] - B[2]) * canvas.height];
  }
  function colour(cls) { return PALETTE[cls % PALETTE.length]; }

  // the boundary: the frame's cells scaled up (smoothed), then the points; returns what the tests read
  function drawBoundary(canvas, b64, points) {
    var ctx = canvas.getContext("2d");
    ctx.fillStyle = "#ffffff";
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    var share = null, nan = 0;
    if (b64) {
      var cells = cellsOf(b64), off = document.createElement("canvas");
      off.width = G; off.height = G;
      var octx = off.getContext("2d"), img = octx.createImageData(G, G), ones = 0;
      for (var i = 0; i < cells.length; i++) {
        var c = cells[i], rgb;
        if (c === NAN_CELL) { rgb = [190, 190, 190]; nan++; }
        else {
          var cls = Math.floor(c / STEPS), level = c % STEPS, alpha = 0.12 + 0.68 * level / (STEPS - 1);
          var col = colour(cls);
          if (cls === 1) ones++;
          rgb = [255 + (col[0] - 255) * alpha, 255 + (col[1] - 255) * alpha, 255 + (col[2] - 255) * alpha];
        }
        img.data[4 * i] = rgb[0]; img.data[4 * i + 1] = rgb[1]; img.data[4 * i + 2] = rgb[2];
        img.data[4 * i + 3] = 255;
      }
      octx.putImageData(img, 0, 0);
      ctx.imageSmoothingEnabled = true;
      ctx.drawImage(off, 0, 0, canvas.width, canvas.height);
      share = ones / cells.length;
    }
    if (points) {
      [["train", false], ["val", true]].forEach(function (part) {
        var xs = points[part[0] + "_x"], ys = points[part[0] + "_y"];
        for (var i = 0; i < xs.length; i++) {
          var p = px(canvas, xs[i][0], xs[i][1]), col = colour(Math.max(ys[i], 0));
          var css = "rgb(" + col[0] + "," + col[1] + "," + col[2] + ")";
          ctx.beginPath();
          ctx.arc(p[0], p[1], part[1] ? 4 : 3.2, 0, 2 * Math.PI);
          if (part[1]) { ctx.fillStyle = "#ffffff"; ctx.fill(); ctx.lineWidth = 2; ctx.strokeStyle = css; ctx.stroke(); }
          else { ctx.fillStyle = css; ctx.fill(); ctx.lineWidth = 0.8; ctx.strokeStyle = "#ffffff"; ctx.stroke(); }
        }
      });
    }
    var pixels = ctx.getImageData(0, 0, canvas.width, canvas.height).data, painted = 0;
    for (var j = 0; j < pixels.length; j += 4) {
      if (pixels[j] < 250 || pixels[j + 1] < 250 || pixels[j + 2] < 250) painted++;
    }
    return { share: share, painted: painted, nan: nan };
  }

  function lossScale() {
    var most = 0;
    data.loops.forEach(function (loop) {
      var run = runOf(loop);
      if (!run) return;
      run.history.forEach(function (row) {
        [row[1], row[2]].forEach(function (v) { v = num(v); if (v !== null && isFinite(v)) most = Math.max(most, v); });
      });
    });
    return Math.min(Math.max(most * 1.05, 0.1), 5);
  }

  function drawLosses(canvas, run, epoch, top, last) {
    var ctx = canvas.getContext("2d"), W = canvas.width, H = canvas.height, L = 34, R = 8, U = 8, D = 20;
    ctx.fillStyle = "#ffffff";
    ctx.fillRect(0, 0, W, H);
    ctx.strokeStyle = "#e3e6ec"; ctx.lineWidth = 1; ctx.fillStyle = "#7a8190"; ctx.font = "10px system-ui,sans-serif";
    for (var g = 0; g <= 4; g++) {
      var gy = U + (H - U - D) * g / 4;
      ctx.beginPath(); ctx.moveTo(L, gy); ctx.lineTo(W - R, gy); ctx.stroke();
      ctx.fillText((top * (1 - g / 4)).toFixed(2), 2, gy + 3);
    }
    ctx.fillText("0", L - 3, H - 6);
    ctx.fillText(String(last), W - R - 14, H - 6);
    function x(e) { return L + (W - L - R) * e / Math.max(last, 1); }
    function y(v) { return U + (H - U - D) * (1 - Math.min(v, top) / top); }
    if (!run || !run.history.length) {
      ctx.fillText(T.no_curve, L + 10, H / 2);
      return;
    }
    [[1, []], [2, [5, 4]]].forEach(function (series) {
      ctx.beginPath(); ctx.setLineDash(series[1]); ctx.strokeStyle = "#1d2330"; ctx.lineWidth = 1.6;
      var pen = false;
      run.history.forEach(function (row, i) {
        var v = num(row[series[0]]), e = num(row[0]);
        if (e === null || !isFinite(e)) e = i + 1;
        if (v === null || !isFinite(v)) { pen = false; return; }
        if (pen) ctx.lineTo(x(e), y(v)); else ctx.moveTo(x(e), y(v));
        pen = true;
      });
      ctx.stroke();
    });
    ctx.setLineDash([]);
    ctx.strokeStyle = "#c0262d"; ctx.lineWidth = 1;
    ctx.beginPath(); ctx.moveTo(x(epoch), U); ctx.lineTo(x(epoch), H - D); ctx.stroke();
  }

  function render() {
    var last = lastEpoch(), epoch = Math.min(state.epoch, last), top = lossScale();
    slider.max = String(last);
    shown.textContent = epoch + "/" + last;
    data.loops.forEach(function (loop) {
      var panel = document.getElementById(loop.role), run = runOf(loop);
      var numbers = panel.querySelector(".numbers"), note = panel.querySelector(".note");
      var error = panel.querySelector(".error");
      var b64 = run ? frameAt(run, epoch) : null;
      var drawn = drawBoundary(panel.querySelector("canvas.boundary"), b64, pointsOf(loop));
      drawLosses(panel.querySelector("canvas.losses"), run, epoch, top, last);
      var row = run && epoch > 0 ? run.history[epoch - 1] : null;
      var text = T.epoch + " " + epoch + (epoch === 0 ? " (" + T.initial + ")" : "") + " \u00b7 lr " + state.lr;
      if (row) {
        text += "\n" + T.train_loss + " " + fmt(row[1], 4) + "\n" + T.val_loss + " " + fmt(row[2], 4) +
          " \u00b7 " + T.val_acc + " " + fmt(row[3], 3);
      }
      numbers.textContent = text;
      error.textContent = run ? "" : (T.failed + "\n" + (loop.errors[state.lr] || T.not_run));
      var notes = [];
      if (run && !b64) notes.push(T.no_boundary);
      if (run && drawn.nan) notes.push(T.diverged);
      if (run && !run.per_epoch) notes.push(T.after_only);
      note.textContent = notes.join(" \u00b7 ");
      panel.setAttribute("data-epoch", String(epoch));
      panel.setAttribute("data-lr", state.lr);
      panel.setAttribute("data-state", run ? "run" : "error");
      panel.setAttribute("data-share", drawn.share === null ? "" : drawn.share.toFixed(4));
      panel.setAttribute("data-painted", String(drawn.painted));
      panel.setAttribute("data-train-loss", row ? fmt(row[1], 4) : "");
      panel.setAttribute("data-val-loss", row ? fmt(row[2], 4) : "");
    });
    Array.prototype.forEach.call(document.querySelectorAll("#lr-buttons button"), function (b) {
      b.setAttribute("aria-checked", b.getAttribute("data-lr") === state.lr ? "true" : "false");
    });
  }

  function setLr(lr) {
    state.lr = lr;
    render();
  }
  data.lrs.forEach(function (lr) {
    var b = document.createElement("button");
    b.type = "button"; b.textContent = lr; b.setAttribute("role", "radio"); b.setAttribute("data-lr", lr);
    b.addEventListener("click", function () { setLr(lr); });
    document.getElementById("lr-buttons").appendChild(b);
  });
  slider.addEventListener("input", function () {
    state.epoch = parseInt(slider.value, 10) || 0;
    render();
  });

  function stop() {
    if (state.timer !== null) clearInterval(state.timer);
    state.timer = null;
    play.textContent = T.play;
  }
  play.addEventListener("click", function () {
    if (state.timer !== null) { stop(); return; }
    if (parseInt(slider.value, 10) >= lastEpoch()) { slider.value = "0"; slider.dispatchEvent(new Event("input")); }
    play.textContent = T.pause;
    state.timer = setInterval(function () {
      var next = parseInt(slider.value, 10) + 1;
      if (next > lastEpoch()) { stop(); return; }
      slider.value = String(next);
      slider.dispatchEvent(new Event("input"));
    }, 180);
  });

  // #epoch=5&lr=10: the nearest learning rate the page holds, then the slider, moved as a learner moves it
  function fromFragment() {
    var params = new URLSearchParams(location.hash.replace(/^#/, ""));
    var lr = params.get("lr");
    if (lr !== null && isFinite(parseFloat(lr)) && parseFloat(lr) > 0) {
      var want = Math.log(parseFloat(lr)), best = data.lrs[0];
      data.lrs.forEach(function (c) {
        if (Math.abs(Math.log(parseFloat(c)) - want) < Math.abs(Math.log(parseFloat(best)) - want)) best = c;
      });
      state.lr = best;
    }
    render();
    var epoch = params.get("epoch");
    // without an epoch the page opens at the end of training (Play starts again from epoch 0)
    var at = epoch !== null && /^[0-9]+$/.test(epoch) ? parseInt(epoch, 10) : lastEpoch();
    slider.value = String(Math.min(at, lastEpoch()));
    slider.dispatchEvent(new Event("input"));
    if (params.has("play") && state.timer === null) play.click();  // #play: as if Play were pressed
  }
  window.addEventListener("hashchange", fromFragment);
  state.epoch = 0;
  fromFragment();
  document.body.setAttribute("data-ready", "1");
})();
