#!/usr/bin/env python3
"""Drives headless Chromium (Debian's `chromium`) through the DevTools protocol over a pipe, with the
Python standard library only, for the WebSocket browser test (Tests/WebSocketTests/WebSocketChromiumTests).

  chromium_driver.py --url URL --screenshot PNG --profile DIR [--chromium PATH] [--timeout SECONDS]
  chromium_driver.py --script --profile DIR [--chromium PATH] [--timeout SECONDS]

With --script it runs the steps it reads on its standard input instead, one JSON object a line, and
answers each with one JSON line (see `run_script`): browser contexts (separate storage, like two
profiles), tabs, expressions evaluated or waited for, keys typed, reloads, screenshots, closed tabs, and
each tab's console errors. --timeout then bounds each step.

Starts Chromium with `--remote-debugging-pipe`: it reads DevTools commands on its descriptor 3 and writes
answers and events on its descriptor 4, each message one JSON object followed by a NUL byte. Opens URL
in a new tab with a 720 × 360 viewport, waits for its load event, then evaluates `window.interopResult`
(a Promise the page resolves with its results) and waits for it, takes a PNG screenshot of the viewport
into PNG (also when the page failed or timed out, if the browser still answers), and prints one JSON
line:

  {"result": <the page's value or null>, "browser": "Chrome/MAJOR.MINOR.BUILD.PATCH",
   "console": ["…", …], "error": <null or what went wrong>,
   "seconds": {"browser": …, "loaded": …, "result": …, "done": …}}

`seconds` tells when, after the driver started, the browser answered, the page had loaded, its result
was there, and everything was cleaned up.

`console` holds the browser's own log entries about WebSockets (Log.entryAdded), e.g. why a handshake
failed. Everything is bounded by --timeout (default 30 s; 5 s more for a failed page's screenshot). DIR is the browser's profile, made fresh by
the caller. Chromium runs in a process group of its own; on every way out (done, error, time-out,
SIGTERM) the driver kills that group and, as the child subreaper, every other descendant, and reaps
them all before it prints; if the driver itself is killed, the kernel kills the browser
(PR_SET_PDEATHSIG). Loopback only: the caller gives a page on 127.0.0.1.
"""
import argparse
import base64
import ctypes
import fcntl
import json
import os
import select
import signal
import subprocess
import sys
import time

PR_SET_PDEATHSIG = 1  # prctl(2)
PR_SET_CHILD_SUBREAPER = 36
WEBSOCKET_LOG_WORD = "WebSocket"
VIEWPORT = (720, 360)  # CSS pixels, and the screenshot's size in pixels
SCREENSHOT_GRACE = 5  # seconds for the screenshot of a page that failed or timed out

libc = ctypes.CDLL("libc.so.6", use_errno=True)
START = time.monotonic()


class DriverError(Exception):
    pass


class Terminated(DriverError):
    """SIGTERM arrived: clean up and go, no screenshot."""


class DevTools:
    """The DevTools protocol over the browser's pipe: commands with ids, answers matched by id, events
    kept for later. Every read waits at most until `deadline` (time.monotonic())."""

    def __init__(self, to_browser, from_browser, deadline):
        self.to_browser = to_browser
        self.from_browser = from_browser
        self.deadline = deadline
        self.next_id = 0
        self.pending = b""
        self.events = []

    def command(self, method, params=None, session=None):
        self.send(method, params, session)
        while True:
            answer = self.read_message()
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise DriverError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            if "method" in answer:
                self.events.append(answer)

    def send(self, method, params=None, session=None):
        """A command whose answer may never come (Page.crash): sent, not waited for."""
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self.to_browser, data):]

    def event(self, method, session):
        """The first event `method` of `session`, kept or still to come."""
        while True:
            for index, event in enumerate(self.events):
                if event["method"] == method and event.get("sessionId") == session:
                    return self.events.pop(index)
            self.events.append(self.read_message())

    def read_message(self):
        while b"\0" not in self.pending:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise DriverError("timed out waiting for the browser")
            ready, _, _ = select.select([self.from_browser], [], [], left)
            if ready:
                chunk = os.read(self.from_browser, 1 << 20)
                if not chunk:
                    raise DriverError("the browser closed its DevTools pipe")
                self.pending += chunk
        message, _, self.pending = self.pending.partition(b"\0")
        return json.loads(message)


def start_browser(chromium, profile):
    """Chromium, headless, with the DevTools pipe on its descriptors 3 (commands in) and 4 (out)."""
    commands_read, commands_write = os.pipe()
    answers_read, answers_write = os.pipe()
    arguments = [
        chromium, "--headless=new", "--disable-gpu", "--remote-debugging-pipe", f"--user-data-dir={profile}",
        "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
        "--disable-component-update", "--disable-extensions", "--disable-sync", "--password-store=basic",
        "--disable-dev-shm-usage",  # shared memory in /tmp: a container's /dev/shm may be 64 MB
        "--mute-audio", "--hide-scrollbars",
        # Pages in tabs the driver does not look at keep their timers (heartbeats, reconnects) on time.
        "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
        "--disable-backgrounding-occluded-windows", f"--window-size={VIEWPORT[0]},{VIEWPORT[1]}", "about:blank",
    ]
    if os.geteuid() == 0:
        arguments.insert(1, "--no-sandbox")  # Chromium's sandbox refuses to run as root

    def in_the_child():
        # Killed with the driver; the pipe ends moved to 3 and 4 (dup2 clears close-on-exec there).
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        high_read = fcntl.fcntl(commands_read, fcntl.F_DUPFD, 10)  # out of the way of 3 and 4
        high_write = fcntl.fcntl(answers_write, fcntl.F_DUPFD, 10)
        os.dup2(high_read, 3)
        os.dup2(high_write, 4)
        os.close(high_read)
        os.close(high_write)

    # Its home, configuration and caches (crash reports too) inside the profile, nothing in the user's.
    environment = dict(os.environ, HOME=profile, XDG_CONFIG_HOME=profile, XDG_CACHE_HOME=profile)
    log = open(os.path.join(profile, "chromium-stderr.log"), "wb")
    try:
        browser = subprocess.Popen(
            arguments, stdin=subprocess.DEVNULL, stdout=log, stderr=log, pass_fds=(3, 4), env=environment,
            preexec_fn=in_the_child, start_new_session=True)
    finally:
        log.close()
        os.close(commands_read)
        os.close(answers_write)
    return browser, commands_write, answers_read


def child_pids():
    """This process's children, from /proc (as the subreaper, orphaned descendants become them)."""
    me = os.getpid()
    children = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me:  # fields after "(comm)": state, ppid, pgrp, …
            children.append(int(name))
    return children


def stop_browser(browser):
    """Kills the browser's process group and every descendant left, and reaps them (at most 10 s)."""
    try:
        os.killpg(browser.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for pid in child_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            browser.returncode = -signal.SIGKILL  # reaped here, not by Popen
            return
        if pid == 0:
            time.sleep(0.01)  # a killed process not yet a zombie: poll, bounded by the deadline
    raise DriverError("browser processes still running 10 s after SIGKILL")


def drive(devtools, url, screenshot, output):
    output["browser"] = devtools.command("Browser.getVersion")["product"]
    output["seconds"]["browser"] = round(time.monotonic() - START, 3)
    target = devtools.command("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = devtools.command("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    devtools.command("Page.enable", session=session)
    devtools.command("Log.enable", session=session)
    devtools.command(
        "Emulation.setDeviceMetricsOverride",
        {"width": VIEWPORT[0], "height": VIEWPORT[1], "deviceScaleFactor": 1, "mobile": False}, session=session)
    failure = None
    try:
        navigation = devtools.command("Page.navigate", {"url": url}, session=session)
        if navigation.get("errorText"):
            raise DriverError(f"navigating to {url}: {navigation['errorText']}")
        devtools.event("Page.loadEventFired", session)
        output["seconds"]["loaded"] = round(time.monotonic() - START, 3)
        evaluation = devtools.command(
            "Runtime.evaluate", {"expression": "window.interopResult", "awaitPromise": True, "returnByValue": True},
            session=session)
        if "exceptionDetails" in evaluation:
            raise DriverError(f"the page's script threw: {evaluation['exceptionDetails']}")
        output["result"] = evaluation["result"].get("value")
        output["seconds"]["result"] = round(time.monotonic() - START, 3)
    except Terminated:
        raise
    except DriverError as error:
        failure = error  # the screenshot and the log still tell how far the page got
        devtools.deadline = time.monotonic() + SCREENSHOT_GRACE
    try:
        picture = devtools.command("Page.captureScreenshot", {"format": "png"}, session=session)["data"]
        with open(screenshot, "wb") as file:
            file.write(base64.b64decode(picture))
    except DriverError as error:
        failure = failure or error
    for event in devtools.events:
        if event["method"] == "Log.entryAdded" and WEBSOCKET_LOG_WORD in event["params"]["entry"]["text"]:
            output["console"].append(event["params"]["entry"]["text"])
    if failure:
        raise failure


class Tab:
    """One page target of the script mode, attached with a flat session; its console errors collected."""

    def __init__(self, target, session):
        self.target = target
        self.session = session
        self.errors = []


CONSOLE_EVENTS = ("Runtime.exceptionThrown", "Runtime.consoleAPICalled", "Log.entryAdded")


def collect_console(devtools, tabs):
    """Moves the console's errors (exceptions, console.error/warn, the browser's error entries) from the
    kept events into their tab's list."""
    by_session = {tab.session: tab for tab in tabs.values()}
    kept = []
    for event in devtools.events:
        tab = by_session.get(event.get("sessionId"))
        method = event["method"]
        if tab is None or method not in CONSOLE_EVENTS:
            kept.append(event)
            continue
        params = event["params"]
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            tab.errors.append("exception: " + details.get("exception", {}).get("description", details.get("text", "")))
        elif method == "Runtime.consoleAPICalled" and params["type"] in ("error", "warning", "assert"):
            texts = [str(arg.get("value", arg.get("description", ""))) for arg in params.get("args", [])]
            tab.errors.append(f"console.{params['type']}: " + " ".join(texts))
        elif method == "Log.entryAdded" and params["entry"]["level"] in ("error", "warning"):
            tab.errors.append(f"{params['entry']['source']} {params['entry']['level']}: {params['entry']['text']}")
    devtools.events = kept


WAIT_SCRIPT = """new Promise((resolve, reject) => {
  const started = Date.now();
  const poll = () => {
    let value;
    try { value = (%s); } catch (error) { value = undefined; }
    if (value) return resolve(typeof value === 'object' ? true : value);
    if (Date.now() - started > %d) return reject(new Error('timed out waiting for: ' + %s));
    setTimeout(poll, 25);
  };
  poll();
})"""

KEYS = {  # DOM key → (code, windowsVirtualKeyCode, text)
    "Enter": ("Enter", 13, "\r"), "Tab": ("Tab", 9, None), "Escape": ("Escape", 27, None),
    "ArrowUp": ("ArrowUp", 38, None), "ArrowDown": ("ArrowDown", 40, None), "PageUp": ("PageUp", 33, None),
    "Home": ("Home", 36, None), "End": ("End", 35, None), " ": ("Space", 32, " "),
}


def press(devtools, tab, key, shift=False):
    code, virtual, text = KEYS[key]
    base = {"key": key, "code": code, "windowsVirtualKeyCode": virtual, "modifiers": 8 if shift else 0}
    down = dict(base, type="keyDown" if text else "rawKeyDown")
    if text:
        down["text"] = text
    devtools.command("Input.dispatchKeyEvent", down, session=tab.session)
    devtools.command("Input.dispatchKeyEvent", dict(base, type="keyUp"), session=tab.session)


def evaluate(devtools, tab, expression):
    evaluation = devtools.command(
        "Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True}, session=tab.session)
    if "exceptionDetails" in evaluation:
        details = evaluation["exceptionDetails"]
        raise DriverError(details.get("exception", {}).get("description", details.get("text", "exception")))
    return evaluation["result"].get("value")


def load(devtools, tab, action):
    """Runs `action` (a navigation or reload) and waits for the page's load event."""
    devtools.events = [e for e in devtools.events if not (e["method"] == "Page.loadEventFired" and e.get("sessionId") == tab.session)]
    action()
    devtools.event("Page.loadEventFired", tab.session)


def step(devtools, tabs, request, timeout):
    """One step of the script; returns what its answer adds."""
    action = request["do"]
    devtools.deadline = time.monotonic() + float(request.get("timeout", timeout)) + 5
    tab = tabs.get(request.get("tab"))
    if action not in ("context", "open", "quit") and tab is None:
        raise DriverError(f"no tab {request.get('tab')!r}")
    if action == "context":
        return {"value": devtools.command("Target.createBrowserContext", {"disposeOnDetach": True})["browserContextId"]}
    if action == "open":
        params = {"url": "about:blank"}
        if request.get("context"):
            params["browserContextId"] = request["context"]
        target = devtools.command("Target.createTarget", params)["targetId"]
        session = devtools.command("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        tab = Tab(target, session)
        tabs[request["name"]] = tab
        for domain in ("Page", "Runtime", "Log"):
            devtools.command(f"{domain}.enable", session=session)
        width, height = request.get("width", VIEWPORT[0]), request.get("height", VIEWPORT[1])
        devtools.command(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=session)
        if request.get("dark"):
            devtools.command(
                "Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]},
                session=session)
        devtools.command("Emulation.setFocusEmulationEnabled", {"enabled": True}, session=session)

        def navigate():
            navigation = devtools.command("Page.navigate", {"url": request["url"]}, session=session)
            if navigation.get("errorText"):
                raise DriverError(f"navigating to {request['url']}: {navigation['errorText']}")
        load(devtools, tab, navigate)
        return {}
    if action == "eval":
        return {"value": evaluate(devtools, tab, request["expression"])}
    if action == "wait":
        limit = int(float(request.get("timeout", timeout)) * 1000)
        expression = request["expression"]
        return {"value": evaluate(devtools, tab, WAIT_SCRIPT % (expression, limit, json.dumps(expression)))}
    if action == "type":
        if request.get("selector"):
            # Focused with its text selected, so what is typed replaces it (as a person's select-all would).
            evaluate(devtools, tab, f"(e => {{ e.focus(); if (e.select) e.select(); }})(document.querySelector({json.dumps(request['selector'])}))")
        if request.get("text"):
            devtools.command("Input.insertText", {"text": request["text"]}, session=tab.session)
        for key in request.get("keys", []):
            press(devtools, tab, key)
        return {}
    if action == "reload":
        load(devtools, tab, lambda: devtools.command("Page.reload", {"ignoreCache": True}, session=tab.session))
        return {}
    if action == "crash":
        # The renderer dies without answering; the browser says so with Inspector.targetCrashed. A
        # `reload` brings the tab back, as a person's click on "Reload" does.
        devtools.command("Inspector.enable", session=tab.session)
        devtools.send("Page.crash", session=tab.session)
        devtools.event("Inspector.targetCrashed", tab.session)
        return {}
    if action == "screenshot":
        picture = devtools.command("Page.captureScreenshot", {"format": "png"}, session=tab.session)["data"]
        with open(request["path"], "wb") as file:
            file.write(base64.b64decode(picture))
        return {}
    if action == "console":
        collect_console(devtools, tabs)
        errors, tab.errors = tab.errors, []
        return {"value": errors}
    if action == "close":
        devtools.command("Target.closeTarget", {"targetId": tab.target})
        del tabs[request["tab"]]
        return {}
    raise DriverError(f"unknown step {action!r}")


def run_script(devtools, timeout):
    """Reads steps from standard input until `{"do": "quit"}` or its end; answers each with one line:
    `{"id": <the step's id>, "ok": true, "value": …}` or `{"id": …, "ok": false, "error": "…"}`.

    Steps: `context` (a new browser context: storage of its own; value: its id); `open` (`name`, `url`,
    optional `context`, `width`, `height`, `dark`: a new tab, loaded); `eval` (`tab`, `expression`,
    awaited; value: its JSON value); `wait` (`tab`, `expression`, `timeout`: polls the expression in the
    page every 25 ms until it is truthy; value: that value, true for an object); `type` (`tab`, optional
    `selector` focused and its text selected,
    `text` inserted, `keys` pressed: Enter, Tab, Escape, arrows, PageUp, Home, End, space);
    `reload`; `crash` (the tab's renderer killed, as by a crash; `reload` brings it back); `screenshot` (`path`); `console` (the tab's errors since the last call); `close`; `quit`.
    """
    devtools.command("Browser.getVersion")
    tabs = {}
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if request.get("do") == "quit":
            break
        answer = {"id": request.get("id")}
        try:
            answer.update(step(devtools, tabs, request, timeout))
            answer["ok"] = True
        except Terminated:
            raise
        except DriverError as error:
            answer.update(ok=False, error=str(error))
        print(json.dumps(answer), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url")
    parser.add_argument("--screenshot")
    parser.add_argument("--script", action="store_true")
    parser.add_argument("--profile", required=True)
    parser.add_argument("--chromium", default="/usr/lib/chromium/chromium")
    parser.add_argument("--timeout", type=float, default=30)
    options = parser.parse_args()

    def terminate(signum, frame):
        raise Terminated(f"signal {signum}")

    signal.signal(signal.SIGTERM, terminate)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    output = {"result": None, "browser": None, "console": [], "error": None, "seconds": {}}
    browser = None
    try:
        browser, to_browser, from_browser = start_browser(options.chromium, options.profile)
        devtools = DevTools(to_browser, from_browser, time.monotonic() + options.timeout)
        try:
            if options.script:
                run_script(devtools, options.timeout)
            else:
                drive(devtools, options.url, options.screenshot, output)
        finally:
            os.close(to_browser)
            os.close(from_browser)
    except Exception as error:  # reported, not raised: the test reads the JSON
        output["error"] = f"{type(error).__name__}: {error}"
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the clean-up below runs to its end
        if browser is not None:
            try:
                stop_browser(browser)
            except DriverError as error:
                output["error"] = output["error"] or str(error)
    output["seconds"]["done"] = round(time.monotonic() - START, 3)
    print(json.dumps(output), flush=True)
    return 0 if output["error"] is None else 1


if __name__ == "__main__":
    sys.exit(main())
