#!/usr/bin/env python3
"""Drives headless Chromium through the console as a user would, over the DevTools protocol on a pipe
(--remote-debugging-pipe: JSON messages ended by NUL on descriptors 3 and 4; no network port, no extra package).
Every wait is for the browser's own event (the page's load), never a sleep.

usage: console_browser.py CHROMIUM PROFILE-DIR STEP...
  login URL KEY      open URL (the login page), type KEY into its form and submit it; then the cookies the
                     browser keeps for URL are written to cookies.json
  page URL NAME      open URL; the DOM as the browser built it goes to NAME.html, a screenshot to NAME.png
  status URL NAME    open URL and write the HTTP status of the document to NAME.status
"""
import base64
import json
import os
import subprocess
import sys


class Browser:
    def __init__(self, chromium, profile):
        to_browser_read, self.to_browser = os.pipe()
        self.from_browser, from_browser_write = os.pipe()
        # The browser reads commands on its descriptor 3 and writes answers on 4: dup2() makes them there, and
        # inheritable; every other descriptor of ours is close-on-exec (os.pipe()), so close_fds is not needed.
        def child_fds():
            os.dup2(to_browser_read, 3)
            os.dup2(from_browser_write, 4)
        self.process = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--remote-debugging-pipe",
             "--user-data-dir=" + profile, "--window-size=1400,1000", "about:blank"],
            preexec_fn=child_fds, close_fds=False, stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(profile, "chromium.err"), "w"))
        os.close(to_browser_read)
        os.close(from_browser_write)
        self.pending = b""
        self.next_id = 0
        self.events = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Page.enable", session=True)
        self.call("Network.enable", session=True)

    def read_message(self):
        while b"\0" not in self.pending:
            chunk = os.read(self.from_browser, 1 << 16)
            if not chunk:
                raise SystemExit("chromium closed its pipe")
            self.pending += chunk
        message, self.pending = self.pending.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=False):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        while True:
            answer = self.read_message()
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise SystemExit(method + ": " + json.dumps(answer["error"]))
                return answer.get("result", {})
            self.events.append(answer)

    def wait_event(self, method):
        while True:
            for i, event in enumerate(self.events):
                if event.get("method") == method:
                    del self.events[i]  # the events before it stay, for the steps that look at them
                    return event
            self.events.append(self.read_message())

    def open(self, url):
        self.events.clear()
        self.call("Page.navigate", {"url": url}, session=True)
        self.wait_event("Page.loadEventFired")

    def evaluate(self, expression):
        return self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                         session=True)["result"].get("value")

    def close(self):
        try:
            self.call("Browser.close")
        except SystemExit:
            pass
        self.process.wait()


def main():
    chromium, profile, steps = sys.argv[1], sys.argv[2], sys.argv[3:]
    browser = Browser(chromium, profile)
    status_of = {}
    while steps:
        step = steps.pop(0)
        if step == "login":
            url, key = steps.pop(0), steps.pop(0)
            browser.open(url)
            # The form is submitted as a user would submit it: the page navigates (303 to /ui/) and loads.
            browser.call("Runtime.evaluate", {"expression": "document.querySelector('#login input[name=key]').value = "
                                              + json.dumps(key) + "; document.getElementById('login').submit();"},
                         session=True)
            browser.wait_event("Page.loadEventFired")
            cookies = browser.call("Network.getCookies", {"urls": [url]}, session=True)["cookies"]
            with open("cookies.json", "w") as out:
                json.dump(cookies, out)
            with open("after-login.url", "w") as out:
                out.write(browser.evaluate("location.href") + "\n")
        elif step in ("page", "status"):
            url, name = steps.pop(0), steps.pop(0)
            browser.open(url)
            if step == "status":
                # The document's own answer: the Network domain's response for the main frame's request.
                status = next((e["params"]["response"]["status"] for e in reversed(browser.events)
                               if e.get("method") == "Network.responseReceived"
                               and e["params"].get("type") == "Document"), None)
                with open(name + ".status", "w") as out:
                    out.write(str(status) + "\n")
            html = browser.evaluate("document.documentElement.outerHTML")
            with open(name + ".html", "w") as out:
                out.write(html)
            shot = browser.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True},
                                session=True)["data"]
            with open(name + ".png", "wb") as out:
                out.write(base64.b64decode(shot))
        else:
            raise SystemExit("unknown step " + step)
    browser.close()


if __name__ == "__main__":
    main()
