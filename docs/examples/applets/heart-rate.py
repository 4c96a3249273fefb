#!/usr/bin/env python3
"""An hreader applet plugin: the latest heart rate, against a normal range, and the change since the
summary before (kept in the applet's own storage in the vault).

hreader runs it with one JSON request on stdin and reads one JSON tile from stdout (docs/applets.md).
Declare it in an applets property list:

    <dict>
        <key>identifier</key>   <string>org.example.heart-rate</string>
        <key>display_name</key> <string>Heart Rate</string>
        <key>executable</key>   <string>heart-rate.py</string>
        <key>entry_types</key>  <array><string>vital_sign</string></array>
        <key>low</key>  <integer>60</integer>
        <key>high</key> <integer>100</integer>
    </dict>
"""
import json
import sys


def number(value):
    """A reading's value as a number, or None ("72", 72 and 72.0 all read as 72.0)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def main():
    request = json.load(sys.stdin)
    config = request.get("configuration", {})
    low, high = float(config.get("low", 60)), float(config.get("high", 100))

    # Only the granted types arrive; anything else is not in the request at all.
    vitals = request["entries"].get("vital_sign", [])
    readings = [
        (entry.get("date") or entry.get("start") or "", number(entry.get("value")), entry.get("unit"))
        for entry in vitals
        if any(word in entry["description"].lower() for word in ("heart rate", "pulse"))
    ]
    readings = [r for r in readings if r[1] is not None]
    if not readings:
        print(json.dumps({"status": "unknown", "lines": ["No heart rate recorded"]}))
        return

    readings.sort(key=lambda r: r[0])
    when, value, unit = readings[-1]
    lines = ["normal %g-%g /min" % (low, high)]

    # The applet's private storage: what it stored at the last summary comes back in "data".
    previous = number(request.get("data", {}).get("last_value"))
    if previous is not None and previous != value:
        lines.append("%+g since the last summary" % (value - previous))

    print(json.dumps({
        "status": "normal" if low <= value <= high else "attention",
        "value": "%g" % value,
        "unit": unit or "/min",
        "lines": lines,
        "updated": when,
        # Stored for next time (a null value would remove the key).
        "data": {"last_value": "%g" % value},
    }))


if __name__ == "__main__":
    try:
        main()
    except Exception as error:  # an answer hreader shows as this tile's error
        print(json.dumps({"error": "heart-rate plugin: %s" % error}))
