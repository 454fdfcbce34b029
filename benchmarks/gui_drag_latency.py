#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End-to-end latency of the real window, as a user meets it (a manual benchmark).

Runs vramlab on its own Xvfb display, then, with XTest (libXtst, through ctypes: no
Python package needed), either

  startup  launches the program and times until the window's first pixels are on screen;
  drag     presses a slider's handle and moves the mouse one step at a time, timing each
           step from the synthetic motion event to the last changed pixel of the window
           (the screen is read with XGetImage until it has not changed for --quiet ms).

Only what the X server shows counts: Qt's own events are not looked at. The poll reads
the window area every ~1-3 ms, so figures are good to about that.

Usage (release build, from the repository root):

  benchmarks/gui_drag_latency.py startup build/release/app/gui/vramlab
  benchmarks/gui_drag_latency.py drag build/release/app/gui/vramlab --tab Timeline

The window is 1400x900 at the top left of a 1920x1080 screen with no window manager;
tabs are clicked by name and the slider is the sequence-length slider of the default
scenario, at the positions below (TAB_X, TAB_Y, SLIDER); another layout or font needs
--tab-xy and --slider (take a screenshot with `xwd -root -display :78 | convert xwd:- shot.png`).
"""

import argparse
import ctypes
import ctypes.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TABS = ["Breakdown", "Sweep", "Compare", "Explain", "Serving", "Timeline", "Plan", "Probe"]
# Where the tabs and the sequence-length slider are in the 1400x900 window at the top left of
# Xvfb's 1920x1080 screen, default scenario, DejaVu fonts (read off a screenshot).
TAB_X = [496, 574, 645, 719, 787, 860, 922, 976]
TAB_Y = 116
SLIDER = "175,546"
# What a move repaints, read as small areas (a large XGetImage holds the X server for
# milliseconds, delaying the program's own drawing): the header, whose figures change with
# every move, and thin strips across the tab's page.
AREAS = [(440, 20, 960, 90), (440, 330, 960, 6), (440, 480, 960, 6), (440, 630, 960, 6), (900, 140, 6, 760)]


class XImage(ctypes.Structure):
    _fields_ = [
        ("width", ctypes.c_int),
        ("height", ctypes.c_int),
        ("xoffset", ctypes.c_int),
        ("format", ctypes.c_int),
        ("data", ctypes.c_void_p),
        ("byte_order", ctypes.c_int),
        ("bitmap_unit", ctypes.c_int),
        ("bitmap_bit_order", ctypes.c_int),
        ("bitmap_pad", ctypes.c_int),
        ("depth", ctypes.c_int),
        ("bytes_per_line", ctypes.c_int),
        ("bits_per_pixel", ctypes.c_int),
    ]


class X:
    """The few Xlib and XTest calls this needs."""

    def __init__(self, display):
        self.xlib = ctypes.CDLL(ctypes.util.find_library("X11") or "libX11.so.6")
        self.xtst = ctypes.CDLL(ctypes.util.find_library("Xtst") or "libXtst.so.6")
        self.xlib.XOpenDisplay.restype = ctypes.c_void_p
        self.xlib.XOpenDisplay.argtypes = [ctypes.c_char_p]
        self.xlib.XDefaultRootWindow.restype = ctypes.c_ulong
        self.xlib.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
        self.xlib.XGetImage.restype = ctypes.POINTER(XImage)
        self.xlib.XGetImage.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_int, ctypes.c_uint,
                                        ctypes.c_uint, ctypes.c_ulong, ctypes.c_int]
        self.xlib.XFree.argtypes = [ctypes.c_void_p]
        self.xlib.XFlush.argtypes = [ctypes.c_void_p]
        self.xlib.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
        self.xtst.XTestFakeMotionEvent.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                                   ctypes.c_ulong]
        self.xtst.XTestFakeButtonEvent.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_ulong]
        self.dpy = None
        deadline = time.monotonic() + 10
        while not self.dpy and time.monotonic() < deadline:
            self.dpy = self.xlib.XOpenDisplay(display.encode())
            if not self.dpy:
                time.sleep(0.05)
        if not self.dpy:
            sys.exit(f"cannot open display {display}")
        self.root = self.xlib.XDefaultRootWindow(self.dpy)

    def grab_areas(self, areas):
        return b"".join(self.grab(*a) for a in areas)

    def grab(self, x, y, w, h):
        """The pixels of a screen rectangle, as bytes."""
        img = self.xlib.XGetImage(self.dpy, self.root, x, y, w, h, 0xFFFFFFFF, 2)  # ZPixmap
        if not img:
            return b""
        data = ctypes.string_at(img.contents.data, img.contents.bytes_per_line * img.contents.height)
        self.xlib.XFree(img.contents.data)
        self.xlib.XFree(img)
        return data

    def move(self, x, y):
        self.xtst.XTestFakeMotionEvent(self.dpy, -1, x, y, 0)
        self.xlib.XFlush(self.dpy)

    def button(self, press):
        self.xtst.XTestFakeButtonEvent(self.dpy, 1, 1 if press else 0, 0)
        self.xlib.XFlush(self.dpy)

    def click(self, x, y):
        self.move(x, y)
        self.button(True)
        self.button(False)
        self.xlib.XSync(self.dpy, 0)


def cpu_ms(pid):
    """CPU time (user + system) the process has used so far: on a shared machine the wall
    clock says more about the other work than about the program."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1e3 / os.sysconf("SC_CLK_TCK")


def start_xvfb(display):
    xvfb = subprocess.Popen(["Xvfb", display, "-screen", "0", "1920x1080x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    return xvfb


def app_env(display, config):
    env = dict(os.environ, DISPLAY=display, QT_QPA_PLATFORM="xcb", XDG_CONFIG_HOME=config,
               XDG_DATA_HOME=config)  # the font cache stays: users have one
    return env


def settle(x, areas, quiet_ms, limit_s=2.0, before=None):
    """Polls the areas until they stop changing; returns (first change, last change) times."""
    before = before if before is not None else x.grab_areas(areas)
    first = last = None
    now = time.perf_counter()
    deadline = now + limit_s
    while now < deadline:
        img = x.grab_areas(areas)
        now = time.perf_counter()
        if img != before:
            first = first or now
            last = now
            before = img
        elif last is not None and (now - last) * 1e3 >= quiet_ms:
            break
    return first, last


def wait_still(x, region, quiet_ms):
    """Waits until nothing changes on screen for quiet_ms."""
    prev = x.grab(*region)
    still_since = time.perf_counter()
    while (time.perf_counter() - still_since) * 1e3 < quiet_ms:
        img = x.grab(*region)
        if img != prev:
            prev = img
            still_since = time.perf_counter()


def startup(args):
    display = args.display
    xvfb = start_xvfb(display)
    try:
        x = X(display)
        region = (0, 0, 1400, 900)
        times = []
        for _ in range(args.runs):
            blank = x.grab_areas(AREAS)
            with tempfile.TemporaryDirectory() as config:
                t0 = time.perf_counter()
                proc = subprocess.Popen([args.program], env=app_env(display, config), stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
                first = None
                while time.perf_counter() - t0 < 10:
                    if x.grab_areas(AREAS) != blank:
                        first = time.perf_counter()
                        cpu = cpu_ms(proc.pid)
                        break
                # The first paint: pixels on screen, then until they stop changing.
                _, last = settle(x, AREAS, args.quiet)
                proc.terminate()
                proc.wait()
                wait_still(x, region, 200)
            if first:
                times.append(((first - t0) * 1e3, ((last or first) - t0) * 1e3, cpu))
        firsts = [t[0] for t in times]
        lasts = [t[1] for t in times]
        cpus = [t[2] for t in times]
        print(f"startup, {len(times)} launches: first pixels median {statistics.median(firsts):.0f} ms "
              f"(min {min(firsts):.0f}, max {max(firsts):.0f}); settled median {statistics.median(lasts):.0f} ms; "
              f"CPU time used by then median {statistics.median(cpus):.0f} ms (min {min(cpus):.0f})")
    finally:
        xvfb.terminate()
        xvfb.wait()


def drag(args):
    display = args.display
    xvfb = start_xvfb(display)
    config = tempfile.mkdtemp()
    proc = None
    try:
        x = X(display)
        proc = subprocess.Popen([args.program] + ([args.scenario] if args.scenario else []),
                                env=app_env(display, config), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        region = (0, 0, 1400, 900)
        time.sleep(args.wait)
        wait_still(x, region, 300)
        tab_x, tab_y = (int(v) for v in args.tab_xy.split(",")) if args.tab_xy else (TAB_X[TABS.index(args.tab)],
                                                                                       TAB_Y)
        x.click(tab_x, tab_y)
        wait_still(x, region, 300)
        sx, sy = (int(v) for v in args.slider.split(","))
        x.move(sx, sy)
        x.button(True)
        wait_still(x, region, 200)
        g0 = time.perf_counter()
        for _ in range(10):
            x.grab_areas(AREAS)
        grab_ms = (time.perf_counter() - g0) * 100
        first_ms, last_ms, unchanged = [], [], 0
        pos = sx
        step = args.step
        for i in range(args.moves):
            if pos + step > sx + args.span or pos + step < sx - args.span:
                step = -step
            pos += step
            before = x.grab_areas(AREAS)
            t0 = time.perf_counter()
            x.move(pos, sy)
            first, last = settle(x, AREAS, args.quiet, before=before)
            if first is None:
                unchanged += 1
                continue
            first_ms.append((first - t0) * 1e3)
            last_ms.append((last - t0) * 1e3)
        x.button(False)

        def pct(v, p):
            v = sorted(v)
            return v[min(len(v) - 1, int(p * (len(v) - 1) + 0.5))]

        if not last_ms:
            sys.exit("no move changed the screen: check --slider and --tab")
        print(f"{args.tab}: {len(last_ms)} moves changed the screen ({unchanged} did not); "
              f"to the first changed pixel p50 {pct(first_ms, .5):.1f} ms p90 {pct(first_ms, .9):.1f} ms; "
              f"to the last p50 {pct(last_ms, .5):.1f} ms p90 {pct(last_ms, .9):.1f} ms "
              f"max {max(last_ms):.1f} ms (one screen read takes {grab_ms:.1f} ms)")
    finally:
        if proc:
            proc.terminate()
            proc.wait()
        xvfb.terminate()
        xvfb.wait()
        shutil.rmtree(config, ignore_errors=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=["startup", "drag"])
    p.add_argument("program", help="the vramlab executable")
    p.add_argument("--display", default=":78", help="the Xvfb display to start (must be free)")
    p.add_argument("--runs", type=int, default=10, help="startup: launches")
    p.add_argument("--quiet", type=float, default=60, help="ms without a change that ends a move")
    p.add_argument("--scenario", help="drag: a scenario file to open")
    p.add_argument("--tab", default="Breakdown", choices=TABS)
    p.add_argument("--tab-xy", default="", help="X,Y of the tab to click (default: --tab's place)")
    p.add_argument("--slider", default=SLIDER, help="X,Y of the slider's handle")
    p.add_argument("--step", type=int, default=5, help="drag: pixels per move (the value snaps: 5 changes it)")
    p.add_argument("--span", type=int, default=40, help="drag: pixels either side of the start")
    p.add_argument("--moves", type=int, default=60)
    p.add_argument("--wait", type=float, default=2.0, help="drag: seconds for the window to come up")
    args = p.parse_args()
    if shutil.which("Xvfb") is None:
        sys.exit("Xvfb is not installed")
    if args.what == "startup":
        startup(args)
    else:
        drag(args)


if __name__ == "__main__":
    main()
