#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""browser-check.py - open a report of asx-report in headless Chromium.

Usage: browser-check.py REPORT.html [--images N] [--width W] [--height H]
                        [--timeout S] [--keep DIR]

Two runs of Debian's chromium (/usr/bin/chromium; --headless, --no-sandbox
as root, offline: the page loads nothing):

1. --dump-dom of a copy of the page with a probe script added at its end
   (the report itself has no script): after the load event the probe
   draws every <img> onto a canvas of its natural size and writes whether
   it completed, its naturalWidth and naturalHeight and how many of its
   pixels stayed transparent.  Every image must have decoded: complete,
   both sizes > 0, and no transparent pixel (asx-report's plots are
   opaque; a corrupt or truncated PNG keeps its header's size but leaves
   the rows the decoder never produced transparent).  The browser must see
   as many images as the page's source has (--images N: exactly N).
2. --screenshot of the page itself at W x H (default 1200 x 1600): a PNG of
   exactly that size, not blank (more than 1% of its pixels not the
   background colour, and more than 16 colours).

Prints "browser-check: REPORT: ok (...)" or one line per problem, and exits
1 on a problem, 2 when chromium is missing or cannot run (a check that
could not run is not a pass).  --keep DIR keeps the probe's page, its DOM
and the screenshot there.  See Documentation/testing.rst, "The report in a
browser".
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

PROG = "browser-check"
CHROMIUM = "/usr/bin/chromium"
MARK = "asx-browser-check"

# written at the end of <body>: one line per image, then the page's size
PROBE = """<script>
window.addEventListener("load", function () {
  var imgs = document.images, out = ["images " + imgs.length];
  for (var i = 0; i < imgs.length; i++) {
    var im = imgs[i], w = im.naturalWidth, h = im.naturalHeight, clear = -1;
    if (im.complete && w > 0 && h > 0) {
      var c = document.createElement("canvas"), g;
      c.width = w;
      c.height = h;
      g = c.getContext("2d");
      g.drawImage(im, 0, 0);
      var px = g.getImageData(0, 0, w, h).data;
      clear = 0;
      for (var j = 3; j < px.length; j += 4)
        if (px[j] === 0)
          clear++;
    }
    out.push("img " + (i + 1) + " " + (im.complete ? 1 : 0) + " " + w + " " + h +
             " " + clear);
  }
  out.push("page " + document.body.scrollWidth + " " + document.body.scrollHeight);
  var pre = document.createElement("pre");
  pre.id = "%s";
  pre.textContent = out.join("\\n");
  document.body.appendChild(pre);
});
</script>
""" % MARK


def chromium(args, tmp, timeout):
    """Run chromium with @args; (exit status, stdout).  Raises
    subprocess.TimeoutExpired past @timeout seconds."""
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
           "--disable-dev-shm-usage", "--no-first-run", "--hide-scrollbars",
           "--run-all-compositor-stages-before-draw",
           "--user-data-dir=" + os.path.join(tmp, "profile")] + args
    env = dict(os.environ, HOME=tmp)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                       timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode(
        "utf-8", "replace")


def probe_images(page, tmp, timeout, errs):
    """The images' (complete, width, height, transparent pixels) as the
    browser drew them (-1: not drawn), or
    None when the probe printed nothing."""
    body = page.rfind("</body>")
    if body < 0:
        errs.append("no </body> to put the probe before")
        return None
    path = os.path.join(tmp, "probe.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write(page[:body] + PROBE + page[body:])
    rc, dom, err = chromium(["--virtual-time-budget=%d" % (timeout * 500),
                             "--dump-dom", "file://" + path], tmp, timeout)
    with open(os.path.join(tmp, "dom.html"), "w", encoding="utf-8") as f:
        f.write(dom)
    m = re.search(r'<pre id="%s">(.*?)</pre>' % MARK, dom, re.S)
    if rc != 0 or not m:
        errs.append("chromium --dump-dom: exit %d, %s" % (
            rc, "no probe output" if not m else "probe output"))
        tail = err.strip().splitlines()[-3:]
        errs += ["  " + line for line in tail]
        return None
    imgs = []
    for line in m.group(1).splitlines():
        f = line.split()
        if f[0] == "img":
            imgs.append((f[2] == "1", int(f[3]), int(f[4]), int(f[5])))
    return imgs


def png_pixels(path):
    """(width, height, pixels as RGB tuples) of the PNG at @path."""
    from PIL import Image  # python3-pil, which python3-matplotlib needs
    with Image.open(path) as im:
        im = im.convert("RGB")
        return im.size[0], im.size[1], list(im.getdata())


def check_screenshot(page_path, tmp, width, height, timeout, errs):
    shot = os.path.join(tmp, "shot.png")
    rc, _, err = chromium(["--window-size=%d,%d" % (width, height),
                           "--screenshot=" + shot, "file://" + page_path], tmp, timeout)
    if rc != 0 or not os.path.exists(shot):
        errs.append("chromium --screenshot: exit %d, no PNG written" % rc)
        errs += ["  " + line for line in err.strip().splitlines()[-3:]]
        return None
    with open(shot, "rb") as f:
        if f.read(8) != b"\x89PNG\r\n\x1a\n":
            errs.append("the screenshot is not a PNG")
            return None
    try:
        w, h, px = png_pixels(shot)
    except Exception as e:  # a PNG that PIL cannot read is the finding
        errs.append("the screenshot does not decode: %s" % e)
        return None
    if (w, h) != (width, height):
        errs.append("the screenshot is %d x %d, not %d x %d" % (w, h, width, height))
    counts = {}
    for p in px:
        counts[p] = counts.get(p, 0) + 1
    bg = max(counts, key=counts.get)
    ink = 1 - counts[bg] / float(len(px))
    if ink <= 0.01 or len(counts) <= 16:
        errs.append("the screenshot is blank: %.2f%% of it not the background, "
                    "%d colours" % (100 * ink, len(counts)))
    return w, h, ink, len(counts)


def main(argv):
    ap = argparse.ArgumentParser(prog=PROG, description="Open a report in headless "
                                 "Chromium: every image decoded, a screenshot not blank.")
    ap.add_argument("report")
    ap.add_argument("--images", type=int, help="the number of images the page must have")
    ap.add_argument("--width", type=int, default=1200)
    ap.add_argument("--height", type=int, default=1600)
    ap.add_argument("--timeout", type=int, default=120,
                    help="seconds for each chromium run (default %(default)s)")
    ap.add_argument("--keep", metavar="DIR", help="keep the probe, its DOM and the "
                    "screenshot in DIR")
    a = ap.parse_args(argv)
    if not os.access(CHROMIUM, os.X_OK):
        print("%s: %s not installed (Debian: chromium; tools/setup.sh installs it)"
              % (PROG, CHROMIUM), file=sys.stderr)
        return 2
    try:
        with open(a.report, encoding="utf-8") as f:
            page = f.read()
    except OSError as e:
        print("%s: cannot read %s: %s" % (PROG, a.report, e.strerror), file=sys.stderr)
        return 2
    page_path = os.path.abspath(a.report)
    errs = []
    tmp = tempfile.mkdtemp(prefix="asx-browser-")
    try:
        imgs = probe_images(page, tmp, a.timeout, errs)
        shot = check_screenshot(page_path, tmp, a.width, a.height, a.timeout, errs)
    except subprocess.TimeoutExpired as e:
        print("%s: %s: chromium did not finish in %d s: %s" % (
            PROG, a.report, a.timeout, " ".join(e.cmd[-2:])), file=sys.stderr)
        return 2
    finally:
        if a.keep:
            os.makedirs(a.keep, exist_ok=True)
            for n in ("probe.html", "dom.html", "shot.png"):
                if os.path.exists(os.path.join(tmp, n)):
                    shutil.copy(os.path.join(tmp, n), a.keep)
        shutil.rmtree(tmp, ignore_errors=True)
    source_imgs = len(re.findall(r"<img\b", page))
    if imgs is not None:
        for n, (done, w, h, clear) in enumerate(imgs, 1):
            if not done or w <= 0 or h <= 0 or clear != 0:
                errs.append("image %d did not decode in the browser (complete %d, %d x %d, "
                            "%d pixels transparent)" % (n, done, w, h, clear))
        if len(imgs) != source_imgs:
            errs.append("the browser saw %d images, the page has %d" % (len(imgs),
                                                                         source_imgs))
        if a.images is not None and len(imgs) != a.images:
            errs.append("%d images, expected %d" % (len(imgs), a.images))
    for e in errs:
        print("%s: %s: %s" % (PROG, a.report, e))
    if errs:
        return 1
    print("%s: %s: ok (%d images decoded; screenshot %d x %d, %.1f%% ink, %d colours)"
          % (PROG, a.report, len(imgs), shot[0], shot[1], 100 * shot[2], shot[3]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
